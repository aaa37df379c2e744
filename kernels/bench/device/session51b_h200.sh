#!/bin/bash
# Stop 51, issue #32's rows at every width beside torch, Liger and QuACK. Two back-to-back calls
# (the wheels of ../shared/tools/peer-wheels.sh re-split so that each call fits 64 MiB with the tree):
#   A. carry [".peers/a2"]:           mkdir -p ~/peers && cp .peers/a2/* ~/peers/
#      (.peers/a2 = cu13.part00, liger, flash_attn_4, quack, apache_tvm_ffi, cutlass_dsl_libs_base)
#   B. carry [".peers/b2", "devbin3"]: bash kernels/bench/device/session51b_h200.sh
#      (.peers/b2 = cu13.part01 and the rest; devbin3/tirx.xz = land51's `tirx`, stripped, xz)
# The host's choice of row kernel at the shapes and at widths never tuned for (odd
# widths, vocabulary rows), rows × cols ≥ 2²⁴.
set -u
BUDGET=${BUDGET:-560}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
ROOT=$(pwd)
(cd devbin3 && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx)
if ls ~/peers/cu13.part00 >/dev/null 2>&1; then
  cp .peers/b2/* ~/peers/ && cd ~/peers && cat cu13.part* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm cu13.part* && python3 -m pip install -q --no-index --no-deps --no-compile --target ~/site ~/peers/*.whl > $OUT/pip.txt 2>&1; echo "pip rc=$?"
  cd "$ROOT"
  export PYTHONPATH=~/site:~/site/nvidia_cutlass_dsl/dsl_packages
else
  echo "no ~/peers/cu13.part00: the machine went back between the calls; torch only"
fi
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
SHAPES="16384,1000 8192,3000 4096,5000 4096,11008 2048,20000 1024,50257 256,151936 8192,32768 4096,65536 1024,262144"
PS=""; for s in $SHAPES; do PS="$PS --shape $s"; done
echo "== peers (torch, Liger, QuACK)"
timeout $(left 330) python3 kernels/bench/rows_peers.py $PS --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1
echo "rc=$?" >> $OUT/peers.txt; grep -iE "error|skip|fail|rc=" $OUT/peers.txt | head -10
echo "== the host's choice beside the peers at ${SECONDS}s"
timeout $(left 200) ./devbin3/tirx bench rows --peers $OUT/rows-peers.json $PS --json $OUT/bench-rows.json > $OUT/ours.txt 2>&1
echo "rc=$?" >> $OUT/ours.txt; grep -vE "^  " $OUT/ours.txt | tail -45
echo "== done at ${SECONDS}s"
