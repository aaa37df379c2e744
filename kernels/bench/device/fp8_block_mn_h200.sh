#!/bin/bash
# Branch `mn` (#29), carry [".device/mn"]: .device/mn/tirx.xz and gpu_tests.xz = `tirx` and the
# GPU tests (`cargo test --release -p tirx-tests --features gpu --no-run`) of branch `mn`.
# In order: the MN-major block-scaled GEMM's first GPU run (`gpu_fp8` filters `mn_major`:
# every config at tails and M % 4 != 0, the host's entry, its refusals; and cuBLASLt on the
# same layout); then the bench of `gemm_sm90_fp8_block_mn` against cuBLASLt with the same
# scales (`--scales blocks-mn`: cuBLASLt gets the [KB, M] transpose it takes) and, in the same
# call for the ratio, `gemm_sm90_fp8_block/default` (`--scales blocks`) at 4096³ and 8192³ and
# the DeepSeek-V3 shapes. Prediction (`fp8_block_mn.rs`): 1060–1117 / 1135–1196 TFLOP/s at
# 4096³ / 8192³, 1.0–1.06× cuBLASLt.
#   BUDGET=400 bash kernels/bench/device/fp8_block_mn_h200.sh
set -u
BUDGET=${BUDGET:-400}
source kernels/bench/device/lib.sh
unpack .device/mn
T=.device/mn/tirx
B=.device/mn/gpu_tests
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_fp8 mn_major at ${SECONDS}s"
timeout $(left 150) $B gpu_fp8::the_mn_major gpu_fp8::the_host_runs_mn_major gpu_fp8::cublaslt_fp8 > $OUT/gpu_mn.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked|note:" $OUT/gpu_mn.txt | head -12
SHAPES="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168"
for s in blocks-mn blocks; do
  echo "== bench --scales $s at ${SECONDS}s"
  K=gemm_sm90_fp8_block_mn/default; [ $s = blocks ] && K=gemm_sm90_fp8_block/default
  timeout $(left 120) $T bench gemm --in e4m3 --scales $s --kernel $K $SHAPES --json $OUT/$s.json > $OUT/$s.txt 2>&1; echo "rc=$?"
  grep -E "^[0-9]|->|worst|geometric|WRONG|failed|TFLOP" $OUT/$s.txt | cut -c1-140 | head -12
done
echo "== done at ${SECONDS}s"
