#!/bin/bash
# Issue #32 (rows for every width): the row kernels beside torch, Liger and QuACK in one device
# command, on the shapes — 4096×5000 (softmax, RMSNorm, LayerNorm), 4096×65536,
# 8192×32768, 1024×262144 and 16384×1000 — then the ladder configs and the long-row kernels
# (staged, staged over a cluster, chunked) forced at the shapes they compete for, then the GPU
# tests of the row kernels. BUDGET (s, default 580) bounds the whole call.
#
# Build here: cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run; mkdir -p devbin; copy
#   target/release/tirx to devbin/tirx and the newest target/release/deps/main-<hash> to
#   devbin/gpu_tests; strip both and gzip them (the carry limit is 64 MiB with the wheels).
# Wheels (QuACK needs the CUTLASS DSL, Liger is Triton): ../shared/tools/peer-wheels.sh .peers,
# then split as kernels/bench/device/attention_peers_sweep.sh says (.peers/a = cu13.part00,
# .peers/b = cu13.part01, .peers/c = every other wheel). Three back-to-back device calls:
#   1. carry [".peers/a"]:           mkdir -p ~/peers && cp .peers/a/* ~/peers/
#   2. carry [".peers/b"]:           cp .peers/b/* ~/peers/
#   3. carry ["devbin", ".peers/c"]: bash kernels/bench/device/rows_h200.sh
# Without the wheels (call 3 alone, carry ["devbin"]) the peers are torch only.
set -u
BUDGET=${BUDGET:-580}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
ROOT=$(pwd)
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
if [ -d .peers/c ] && ls ~/peers/cu13.part* >/dev/null 2>&1; then
  cp .peers/c/* ~/peers/ && cd ~/peers && cat cu13.part* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm cu13.part* && python3 -m pip install -q --no-index --no-deps --no-compile --target ~/site ~/peers/*.whl > $OUT/pip.txt 2>&1
  cd "$ROOT"
  export PYTHONPATH=~/site:~/site/nvidia_cutlass_dsl/dsl_packages
fi
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $OUT/date.txt 2>&1
cat $OUT/date.txt
SHAPES="4096,5000 4096,65536 8192,32768 1024,262144 16384,1000"
PS=""; TS=""
for s in $SHAPES; do PS="$PS --shape $s"; TS="$TS --shape $s"; done
echo "== 1. peers (torch, Liger, QuACK)"
timeout $(left 240) python3 kernels/bench/rows_peers.py $PS --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1
echo "rc=$?" >> $OUT/peers.txt; tail -3 $OUT/peers.txt
echo "== 2. the host's choice beside the peers"
timeout $(left 120) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $TS --json $OUT/bench-rows.json > $OUT/ours.txt 2>&1
echo "rc=$?" >> $OUT/ours.txt; cat $OUT/ours.txt | tail -30
echo "== 3. every config of the register kernels at 4096x5000 (the ladder's neighbours)"
timeout $(left 90) ./devbin/tirx bench rows --peers $OUT/rows-peers.json --shape 4096,5000 --kernel softmax --kernel rmsnorm --kernel layernorm --json $OUT/forced-5000.json > $OUT/forced-5000.txt 2>&1
echo "rc=$?" >> $OUT/forced-5000.txt; grep -E "^==|5000|rc=" $OUT/forced-5000.txt | head -80
echo "== 4. the long-row kernels forced at 8192x32768, 4096x65536 and 1024x262144"
timeout $(left 120) ./devbin/tirx bench rows --peers $OUT/rows-peers.json --shape 8192,32768 --shape 4096,65536 --shape 1024,262144 --kernel softmax_long --kernel softmax_staged --kernel softmax_staged_cluster --kernel rmsnorm_long --kernel rmsnorm_staged --kernel rmsnorm_staged_cluster --kernel layernorm_long --kernel layernorm_staged_cluster --json $OUT/forced-long.json > $OUT/forced-long.txt 2>&1
echo "rc=$?" >> $OUT/forced-long.txt; grep -E "^==|32768|65536|262144|rc=" $OUT/forced-long.txt | head -80
echo "== 5. GPU tests of the row kernels"
timeout $(left 200) ./devbin/gpu_tests gpu_rows --test-threads 1 > $OUT/gpu_rows.txt 2>&1
echo "rc=$?" >> $OUT/gpu_rows.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt | head -20
