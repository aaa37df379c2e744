#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (gzipped, stripped binaries built here:
#   cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run, then devbin/tirx and the newest
#   target/release/deps/main-<hash> as devbin/gpu_tests):
#  1. every GPU test (`gpu_tests gpu`: the sm_90a kernels, the runtime, residual epilogues,
#     split-K, FP8, rows, attention);
#  2. `exp2_poly3` on the GPU with its printed errors (--nocapture) for #28;
#  3. the FP8 GEMMs beside cuBLASLt's FP8 GEMM (#29), per-tensor then row-wise scales.
# BUDGET (s, default 560) bounds the whole call.
set -u
BUDGET=${BUDGET:-560}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >> $OUT/date.txt 2>&1
cat $OUT/date.txt
echo "== 1. GPU tests"
timeout $(left 280) ./devbin/gpu_tests gpu > $OUT/gpu_tests.txt 2>&1
echo "rc=$? after ${SECONDS}s" >> $OUT/gpu_tests.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_tests.txt | head -30
echo "== 2. exp2_poly3 on the GPU"
timeout $(left 30) ./devbin/gpu_tests gpu_exp2_poly --nocapture > $OUT/exp2_poly.txt 2>&1
echo "rc=$?" >> $OUT/exp2_poly.txt; grep -E "exp2_poly3 on|test result|rc=" $OUT/exp2_poly.txt
echo "== 3. FP8 GEMMs beside cuBLASLt"
for s in tensor rows; do
  timeout $(left 130) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales $s > $OUT/bench_fp8_$s.txt 2>&1
  echo "rc=$? after ${SECONDS}s" >> $OUT/bench_fp8_$s.txt; tail -16 $OUT/bench_fp8_$s.txt
done
