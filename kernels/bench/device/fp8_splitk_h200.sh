#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: FP8 split-K of issue #29 on the H200.
#  1. the FP8 GPU tests (tests/gpu_fp8.rs: every config of ours, the split-K plans among them,
#     against the f64 reference; split-K in caller workspaces with uneven slices, reruns
#     bit-identical; the host's choice at 128x8192x8192);
#  2. `tirx bench gemm --in e4m3` at the decode-like 128x8192x8192 beside cuBLASLt's FP8 GEMM,
#     per-tensor then row-wise scales (every config of ours, the split-K plans with the
#     model's S, is timed and printed; the row's "ours" is the fastest checked right).
# Build here (this machine has no GPU):
#   cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --test main --no-run
#   mkdir -p devbin && cp target/release/tirx devbin/tirx &&
#   cp "$(ls -t target/release/deps/main-* | grep -v '\.d$' | head -1)" devbin/gpu_tests
# Command (device tool): bash kernels/bench/device/fp8_splitk_h200.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> $OUT/date.txt 2>&1
timeout 240 ./devbin/gpu_tests gpu_fp8 --test-threads 1 --nocapture > $OUT/gpu_fp8.txt 2>&1
echo "rc=$?" >> $OUT/gpu_fp8.txt
grep -E "^test |test result|FAILED|panicked|rows=" $OUT/gpu_fp8.txt | head -40
timeout 60 ./devbin/tirx run gemm_sm90_fp8_splitk > $OUT/run_splitk.txt 2>&1; echo "rc=$?" >> $OUT/run_splitk.txt
cat $OUT/run_splitk.txt
for s in tensor rows; do
  timeout 120 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales $s --shape 128,8192,8192 \
    > $OUT/bench_$s.txt 2>&1
  echo "rc=$?" >> $OUT/bench_$s.txt
  tail -25 $OUT/bench_$s.txt
done
