#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (tirx.gz built from branch pp at ad7039e):
# the ping-pong FP8 GEMMs (#29) checked by `tirx run` (every config against the f64 reference)
# at 2048×3000×1024 — the shape that faulted before the fix — then the
# row-wise bench at two large shapes (every config timed, best printed) and torch._scaled_mm.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && gunzip -f *.gz 2>/dev/null; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for kern in gemm_sm90_fp8_pingpong gemm_sm90_fp8_rowwise_pingpong; do
  for cfg in default m128; do
    timeout 40 ./devbin/tirx run $kern --config $cfg --m 2048 --n 3000 --k 1024 > $OUT/run_${kern}_$cfg.txt 2>&1; echo "rc=$?" >> $OUT/run_${kern}_$cfg.txt
    echo "== $kern $cfg 2048x3000x1024"; tail -4 $OUT/run_${kern}_$cfg.txt
  done
done
timeout 110 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --shape 8192,8192,8192 --shape 8192,28672,4096 > $OUT/ours.txt 2>&1; echo "rc=$?" >> $OUT/ours.txt
grep -vE "^\s*$" $OUT/ours.txt | tail -30
timeout 45 python3 kernels/bench/scaled_mm_rowwise.py > $OUT/torch.txt 2>&1; cat $OUT/torch.txt
