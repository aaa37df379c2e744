#!/bin/bash
# One device call, carry ["devbin"]: `tirx run` of every shipped kernel through its problem
# family (#25: Family::check, the family's f64 reference, launch by role), at each family's
# default shape (odd: tails in every tiled dimension) and, for GEMMs, at 1000^3 too; then
# the GPU tests (modules gpu*). Build here:
#   cargo build --release -p tirx-kernels --bin tirx            -> devbin/tirx
#   cargo test --release -p tirx-tests --features gpu --no-run  -> newest
#     target/release/deps/main-<hash> as devbin/gpu_tests
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/date.txt 2>&1
for k in $(./devbin/tirx list | awk '$2 == "sm_90a" {print $1}' | sort -u); do
  timeout 60 ./devbin/tirx run $k >> $OUT/run_default.txt 2>&1 || echo "$k rc=$?" >> $OUT/run_default.txt
done
for k in $(./devbin/tirx list | awk '$2 == "sm_90a" && / gemm\(/ {print $1}' | sort -u); do
  timeout 60 ./devbin/tirx run $k --m 1000 --n 1000 --k 1000 >> $OUT/run_1000.txt 2>&1 || echo "$k rc=$?" >> $OUT/run_1000.txt
done
grep -c ' ok$' $OUT/run_default.txt $OUT/run_1000.txt
grep -E 'FAIL|error|rc=' $OUT/run_default.txt $OUT/run_1000.txt | head -40
timeout 400 ./devbin/gpu_tests gpu > $OUT/gpu_tests.txt 2>&1
echo "rc=$?" >> $OUT/gpu_tests.txt
grep -E "test result|FAILED|panicked" $OUT/gpu_tests.txt | head -40
