#!/bin/bash
# Stop 56, call 8 (#32), carry [".device/g60"]: gpu_tests of 88329079 (land3: the transposed
# tile ranked for NN, `nn_w2n96`). Each test in its own process: the odd rows past 16k with the
# re-ranked expectation, the transposed GEMM's every config (now with `nn_w2n96`), the GEMM
# host-choice tests that NN ranking can move.
set -u
BUDGET=${BUDGET:-330}
source kernels/bench/device/lib.sh
unpack .device/g60
B=.device/g60
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in gpu_rows::odd_rows_past gpu_transposed gpu_splitk gpu_gemv; do
  f=$(echo $t | tr ':' '_')
  echo "== $t at ${SECONDS}s"
  timeout $(left 150) $B/gpu_tests $t > $OUT/$f.txt 2>&1; echo "rc=$?"
  grep -E "^test |test result|panicked" $OUT/$f.txt | head -12
done
echo "== done at ${SECONDS}s"
