#!/bin/bash
# Stop 55, call 1 (#32), carry [".device/e56"]: .device/e56/tirx and gpu_tests = main 23ad5f9b
# (helper gemmt's `gemm_sm90_t`, emulator-verified only until now; the cluster row kernels'
# `h8`) + helper oddstage's `*_staged_odd` (odd widths 16385…102400 staged by TMA through x's
# flat view, emulator-verified only), stripped, xz. 1. GPU tests: gpu_transposed, every row
# kernel config, the staged odd rows; 2. every TN config at M = 80…256 beside cuBLASLt (stop 54:
# 0.66–0.87 there); 3. odd long rows, the host's choice (now `*_staged_odd`) and the walkers
# forced; 4. aligned long rows, the host's choice and every cluster config forced (stop 53:
# the push cluster kernels 81.7 / 85.1 % of the copy at 4096×65536 where the host's one-CTA
# choice ran 74.8 / 76.3 %); 5. NN at three shapes. At most 8 files come back.
set -u
BUDGET=${BUDGET:-420}
source kernels/bench/device/lib.sh
unpack .device/e56
B=.device/e56
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== GPU tests at ${SECONDS}s"
timeout $(left 120) $B/gpu_tests gpu_transposed gpu_rows::every_row_kernel_config gpu_rows::odd_rows_past > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt
grep -E "^test |test result|panicked|rc=" $OUT/gpu.txt | head -12
S="--shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 --shape 256,4096,4096 --shape 192,8192,8192 --shape 192,8192,4096 --shape 96,8192,8192 --shape 128,4096,4096 --shape 80,8192,4096"
echo "== GEMM --all TN, M 80…256 at ${SECONDS}s"
timeout $(left 110) $B/tirx bench gemm --all $S --json $OUT/gemm_tn.json > $OUT/gemm_tn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_tn.txt
grep -vE "^  " $OUT/gemm_tn.txt | cut -c1-120 | tail -14
grep -A12 "host-side choice" $OUT/gemm_tn.txt | head -12
echo "== odd long rows at ${SECONDS}s"
O="--shape 2048,20001 --shape 1024,50257 --shape 4096,16385 --shape 512,99999 --shape 4096,24573"
timeout $(left 40) $B/tirx bench rows $O > $OUT/rows_odd.txt 2>&1; echo "rc=$?" >> $OUT/rows_odd.txt
timeout $(left 40) $B/tirx bench rows $O --kernel softmax_long --kernel rmsnorm_long --kernel layernorm_long >> $OUT/rows_odd.txt 2>&1; echo "rc=$?" >> $OUT/rows_odd.txt
grep -E "^==|x[0-9]+ |rc=" $OUT/rows_odd.txt | grep -v minimum | cut -c1-110 | head -40
echo "== aligned long rows at ${SECONDS}s"
R="--shape 4096,65536 --shape 2048,131072 --shape 1024,262144 --shape 8192,32768"
timeout $(left 30) $B/tirx bench rows $R > $OUT/rows.txt 2>&1; echo "rc=$?" >> $OUT/rows.txt
timeout $(left 90) $B/tirx bench rows $R --kernel softmax_staged_cluster --kernel rmsnorm_staged_cluster --kernel layernorm_staged_cluster --json $OUT/rows_forced.json >> $OUT/rows.txt 2>&1; echo "rc=$?" >> $OUT/rows.txt
grep -E "^==|x[0-9]+ |rc=" $OUT/rows.txt | grep -v minimum | cut -c1-110 | head -70
echo "== GEMM --all NN at ${SECONDS}s"
timeout $(left 50) $B/tirx bench gemm --layout nn --all --shape 192,4096,4096 --shape 96,8192,8192 --json $OUT/gemm_nn.json > $OUT/gemm_nn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_nn.txt
grep -vE "^  " $OUT/gemm_nn.txt | cut -c1-120 | tail -6
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
