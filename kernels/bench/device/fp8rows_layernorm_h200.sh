#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (binaries as tests_fp8_h200.sh says):
#  1. #29: the row-wise FP8 GEMM beside torch._scaled_mm (CUTLASS on sm_90; cuBLASLt has no
#     row-wise FP8 algorithm) — torch, ours, torch again, so the peer's drift shows;
#  2. #32: LayerNorm/RMSNorm/softmax at the long-row shapes, torch beside the host's choice and
#     every long-row kernel forced (the h2/h4 configs of layernorm_staged_cluster included).
set -u
BUDGET=${BUDGET:-420}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >> $OUT/date.txt 2>&1
cat $OUT/date.txt
echo "== 1. row-wise FP8: torch, ours, torch"
timeout $(left 60) python3 kernels/bench/scaled_mm_rowwise.py > $OUT/scaled_mm_1.txt 2>&1; cat $OUT/scaled_mm_1.txt | tail -7
timeout $(left 130) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows > $OUT/fp8rows.txt 2>&1
echo "rc=$?" >> $OUT/fp8rows.txt; grep -E "x[0-9]+ " $OUT/fp8rows.txt | tail -20
timeout $(left 60) python3 kernels/bench/scaled_mm_rowwise.py > $OUT/scaled_mm_2.txt 2>&1; cat $OUT/scaled_mm_2.txt | tail -7
echo "== 2. long rows: torch, the host's choice, every long-row kernel forced"
S="--shape 8192,32768 --shape 4096,65536 --shape 1024,262144 --shape 8192,16384"
timeout $(left 90) python3 kernels/bench/rows_peers.py $S --peer torch --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1
echo "rc=$?" >> $OUT/peers.txt; tail -3 $OUT/peers.txt
timeout $(left 60) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $S --json $OUT/bench-rows.json > $OUT/ours.txt 2>&1
echo "rc=$?" >> $OUT/ours.txt; tail -20 $OUT/ours.txt
timeout $(left 100) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $S --kernel layernorm_long --kernel layernorm_staged_cluster --kernel rmsnorm_staged_cluster --kernel softmax_staged_cluster --json $OUT/forced-long.json > $OUT/forced-long.txt 2>&1
echo "rc=$?" >> $OUT/forced-long.txt; grep -E "^==|32768|65536|262144|16384|rc=" $OUT/forced-long.txt | head -80
