#!/bin/bash
# Stop 55, call 1 (#32), carry [".device/e55", ".device/p1"]: .device/e55/tirx and gpu_tests = main 8d3383b
# (helper gemmt's `gemm_sm90_t`, the transposed one-launch tile, emulator-verified only until
# now) + the cluster row kernels' `h8` (8 CTAs of 16384 columns; branch rows55), stripped, xz. 1. its GPU tests; 2. every TN config at M = 80…256 beside cuBLASLt
# (stop 54: 0.66–0.87 there); 3. NN at three shapes; 4. long rows, the host's choice and every
# one-CTA and cluster kernel forced (stop 53: the push cluster kernels 81.7 / 85.1 % of the copy
# at 4096×65536 where the host's one-CTA choice ran 74.8 / 76.3 %). At most 8 files come back.
set -u
BUDGET=${BUDGET:-450}
source kernels/bench/device/lib.sh
unpack .device/e55
B=.device/e55
# For call 2 (session54b_h200.sh, the peers), while the machine stays warm: the cu13 wheel's
# first part and this tirx.
mkdir -p ~/peers ~/d54 && cp .device/p1/* ~/peers/ 2>/dev/null; cp $B/tirx $B/gpu_tests ~/d54/
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_transposed, every row kernel config at ${SECONDS}s"
timeout $(left 110) $B/gpu_tests gpu_transposed gpu_rows::every_row_kernel_config > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -8
S="--shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 --shape 256,4096,4096 --shape 192,8192,8192 --shape 192,8192,4096 --shape 96,8192,8192 --shape 128,4096,4096 --shape 80,8192,4096"
echo "== GEMM --all TN, M 80…256 at ${SECONDS}s"
timeout $(left 130) $B/tirx bench gemm --all $S --json $OUT/gemm_tn.json > $OUT/gemm_tn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_tn.txt
grep -vE "^  " $OUT/gemm_tn.txt | cut -c1-120 | tail -14
grep -A12 "host-side choice" $OUT/gemm_tn.txt | head -12
echo "== GEMM --all NN at ${SECONDS}s"
timeout $(left 70) $B/tirx bench gemm --layout nn --all --shape 192,4096,4096 --shape 160,8192,4096 --shape 96,8192,8192 --json $OUT/gemm_nn.json > $OUT/gemm_nn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_nn.txt
grep -vE "^  " $OUT/gemm_nn.txt | cut -c1-120 | tail -8
echo "== long rows, host's choice and forced, at ${SECONDS}s"
R="--shape 4096,65536 --shape 2048,131072 --shape 1024,262144 --shape 8192,32768 --shape 16384,32768"
timeout $(left 40) $B/tirx bench rows $R > $OUT/rows.txt 2>&1; echo "rc=$?" >> $OUT/rows.txt
timeout $(left 120) $B/tirx bench rows $R --kernel softmax_staged_cluster --kernel rmsnorm_staged_cluster --kernel layernorm_staged_cluster --kernel softmax_long --kernel rmsnorm_long --kernel layernorm_long --kernel softmax_staged --kernel rmsnorm_staged --json $OUT/rows_forced.json >> $OUT/rows.txt 2>&1; echo "rc=$?" >> $OUT/rows.txt
grep -E "^==|x[0-9]+ |rc=" $OUT/rows.txt | grep -v minimum | cut -c1-110 | head -90
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
