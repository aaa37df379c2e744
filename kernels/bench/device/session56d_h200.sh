#!/bin/bash
# Stop 56, call 5 (#32 rows beside the peers, #31 attention beside cuDNN and FA4), carry
# [".device/p2"], right after session56c_h200.sh (the machine keeps the home folder while warm):
# ~/d56/tirx = main 287787ea's; ~/peers/cu13.part00 from call 1; .device/p2 = the cu13 wheel's
# rest and every other wheel of ../shared/tools/peer-wheels.sh.
set -u
BUDGET=${BUDGET:-570}
source kernels/bench/device/lib.sh
ROOT=$(pwd)
if ls ~/peers/cu13.part00 ~/d56/tirx >/dev/null 2>&1; then
  cp .device/p2/* ~/peers/ && cd ~/peers && cat cu13.part* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm cu13.part* && python3 -m pip install -q --no-index --no-deps --no-compile --target ~/site ~/peers/*.whl > /tmp/pip.txt 2>&1; echo "pip rc=$?"
  cd "$ROOT"; export PYTHONPATH=~/site:~/site/nvidia_cutlass_dsl/dsl_packages
else
  echo "the machine went back between the calls: nothing to run"; exit 3
fi
T=~/d56/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
SHAPES="16384,1001 8192,3001 4096,4999 8192,7171 2048,20001 4096,24573 1024,50257 8192,32768 4096,65536 2048,131072 1024,262144"
PS=""; for s in $SHAPES; do PS="$PS --shape $s"; done
echo "== rows peers at ${SECONDS}s"
timeout $(left 220) python3 kernels/bench/rows_peers.py $PS --out $OUT/rows-peers.json > /tmp/rows_peers.txt 2>&1
echo "rc=$?" >> /tmp/rows_peers.txt; grep -iE "error|skip|fail|rc=" /tmp/rows_peers.txt | head -6
echo "== rows ours beside them at ${SECONDS}s"
timeout $(left 120) $T bench rows --peers $OUT/rows-peers.json $PS > $OUT/rows_ours.txt 2>&1
echo "rc=$?" >> $OUT/rows_ours.txt; grep -vE "^  " $OUT/rows_ours.txt | grep -E "^(softmax|rmsnorm|layernorm) |rc=" | cut -c1-120
A="--shape 32,16,16,512,512,128,causal --shape 8,16,16,2048,2048,128,causal --shape 2,16,16,8192,8192,128 --shape 2,16,16,8192,8192,128,causal --shape 16,32,32,1024,1024,64 --shape 1,16,16,16384,16384,128,causal"
echo "== attention peers at ${SECONDS}s"
timeout $(left 150) python3 kernels/bench/attention_peers.py $A --out $OUT/attn-peers.json > /tmp/attn_peers.txt 2>&1
echo "rc=$?" >> /tmp/attn_peers.txt; grep -iE "error|fail|rc=" /tmp/attn_peers.txt | head -5
echo "== attention ours at ${SECONDS}s"
timeout $(left 60) $T bench attention --peers $OUT/attn-peers.json $A > $OUT/attn_ours.txt 2>&1
echo "rc=$?" >> $OUT/attn_ours.txt; grep -vE "^  " $OUT/attn_ours.txt | tail -12 | cut -c1-130
D="--shape 64,32,8,1,8192,128 --shape 16,32,8,1,131072,128 --shape 1,32,8,1,131072,128 --shape 64,32,8,4,32768,128"
echo "== decode peers at ${SECONDS}s"
timeout $(left 60) python3 kernels/bench/attention_peers.py $D --out $OUT/dec-peers.json > /tmp/dec_peers.txt 2>&1; echo "rc=$?" >> /tmp/dec_peers.txt
grep -iE "error|fail|rc=" /tmp/dec_peers.txt | head -4
echo "== decode ours at ${SECONDS}s"
timeout $(left 40) $T bench attention --decode --peers $OUT/dec-peers.json $D > $OUT/dec_ours.txt 2>&1; echo "rc=$?" >> $OUT/dec_ours.txt
grep -vE "^  " $OUT/dec_ours.txt | tail -6 | cut -c1-130
echo "== done at ${SECONDS}s"
