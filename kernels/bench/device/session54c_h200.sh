#!/bin/bash
# Stop 54, call 2 (#32), carry [".device/e54"]: .device/e54/tirx and gpu_tests = branch own with
# helper gemmt's transposed one-launch tile `gemm_sm90_t` (D = A·Bᵀ as Dᵀ = B·Aᵀ, 64 of B's
# rows by BN = 96/128 of A's, stored through a transposing stmatrix and one TMA store;
# emulator-verified only), stripped, xz. Correctness first (its GPU tests), then every config
# at M = 160…256 beside cuBLASLt (stop 54 call 1: 0.66–0.87 there), then the host's choice at
# stop 53's 18 skinny shapes (the model must not have moved elsewhere). At most 8 files come back.
set -u
BUDGET=${BUDGET:-380}
source kernels/bench/device/lib.sh
unpack .device/e54
B=.device/e54
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 90) $B/gpu_tests gpu_transposed > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -8
S="--shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 --shape 256,4096,4096 --shape 192,8192,8192 --shape 192,8192,4096 --shape 96,8192,8192 --shape 128,4096,4096 --shape 80,8192,4096"
echo "== GEMM --all TN, M 80…256 at ${SECONDS}s"
timeout $(left 150) $B/tirx bench gemm --all $S --json $OUT/gemm_tn.json > $OUT/gemm_tn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_tn.txt
grep -vE "^  " $OUT/gemm_tn.txt | cut -c1-120 | tail -14
grep -A12 "host-side choice" $OUT/gemm_tn.txt | head -12
echo "== GEMM --all NN, M 96…192 at ${SECONDS}s"
timeout $(left 100) $B/tirx bench gemm --layout nn --all --shape 192,4096,4096 --shape 160,8192,4096 --shape 96,8192,8192 --json $OUT/gemm_nn.json > $OUT/gemm_nn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_nn.txt
grep -vE "^  " $OUT/gemm_nn.txt | cut -c1-120 | tail -8
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
