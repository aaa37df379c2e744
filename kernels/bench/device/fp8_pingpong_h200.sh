#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (devbin/tirx.gz: a release `tirx` from branch
# `pp`): the row-wise FP8 GEMMs (#29) — fp8.rs's cooperative configs and fp8_pingpong.rs's
# ping-pong ones, every config timed and listed ("every config, TFLOP/s") — on the large shapes,
# then torch._scaled_mm row-wise in the same command.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz 2>/dev/null; chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 380 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --shape 8192,8192,8192 --shape 8192,28672,4096 --shape 8192,4096,14336 --shape 4096,4096,4096 > $OUT/ours.txt 2>&1; echo "rc=$?" >> $OUT/ours.txt
grep -vE "^\s*$" $OUT/ours.txt | tail -30
for r in 1; do timeout 150 python3 kernels/bench/scaled_mm_rowwise.py > $OUT/torch$r.txt 2>&1; cat $OUT/torch$r.txt; done
