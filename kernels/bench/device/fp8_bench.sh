#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: the FP8 GEMMs of issue #29 on the H200.
#  1. the FP8 GPU tests (tests/gpu_fp8.rs: every config of gemm_sm90_fp8 / _rowwise and
#     cuBLASLt's FP8 GEMM against the f64 reference, odd shapes, D poisoned first);
#  2. `tirx bench gemm --in e4m3` beside cuBLASLt's FP8 GEMM (fast accumulation on both sides,
#     same buffers, same scales, every result checked), per-tensor then row-wise scales, bf16
#     out, on 8192³, 4096³ and the LLM shapes (the bench's default sweep).
# Build here (this machine has no GPU):
#   cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run
#   mkdir -p devbin && cp target/release/tirx devbin/tirx &&
#   cp "$(ls -t target/release/deps/main-* | grep -v '\.d$' | head -1)" devbin/gpu_tests
# Command (device tool): bash kernels/bench/device/fp8_bench.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> $OUT/date.txt 2>&1
timeout 200 ./devbin/gpu_tests gpu_fp8 > $OUT/gpu_fp8.txt 2>&1
echo "rc=$?" >> $OUT/gpu_fp8.txt
grep -E "^test |test result|FAILED|panicked|D\[" $OUT/gpu_fp8.txt | head -40
# tirx run through the GEMM family (gemm::check::check_fp8): every config at 130x136x208 and 1000x1000x1024.
for k in gemm_sm90_fp8 gemm_sm90_fp8_rowwise; do
  timeout 60 ./devbin/tirx run $k > $OUT/run_$k.txt 2>&1; echo "rc=$?" >> $OUT/run_$k.txt
  timeout 60 ./devbin/tirx run $k --m 1000 --n 1000 --k 1024 >> $OUT/run_$k.txt 2>&1; echo "rc=$?" >> $OUT/run_$k.txt
  cat $OUT/run_$k.txt
done
timeout 150 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales tensor > $OUT/bench_tensor.txt 2>&1
echo "rc=$?" >> $OUT/bench_tensor.txt
tail -20 $OUT/bench_tensor.txt
timeout 150 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows > $OUT/bench_rows.txt 2>&1
echo "rc=$?" >> $OUT/bench_rows.txt
tail -20 $OUT/bench_rows.txt
