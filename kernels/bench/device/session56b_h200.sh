#!/bin/bash
# Stop 56, call 3 (#32), carry [".device/e58"]: main 287787ea's tirx and gpu_tests (the
# staged_odd fix for rows with no aligned column, the re-ranked rows). Each GPU test in a
# process of its own (an illegal instruction poisons the whole context): the row kernels'
# every-config test, the host's choice per length class, the odd rows, the transposed GEMM (its
# f64 reference is CPU-bound: 300 s). Then the host's own choice at long rows (aligned: now the
# cluster kernels past 32768 columns; odd: the walkers past 32768).
set -u
BUDGET=${BUDGET:-480}
source kernels/bench/device/lib.sh
unpack .device/e58
B=.device/e58
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in gpu_rows::every_row_kernel_config gpu_rows::the_host_side_choice gpu_rows::odd_rows_past gpu_rows::odd_rows_up_to; do
  echo "== $t at ${SECONDS}s"
  timeout $(left 90) $B/gpu_tests $t > $OUT/$(echo $t | tr ':' '_').txt 2>&1; echo "rc=$?"
  grep -E "^test |test result|panicked" $OUT/$(echo $t | tr ':' '_').txt | head -4
  grep -vE "^test |test result|panicked|^$|running|^failures|stack backtrace|note:" $OUT/$(echo $t | tr ':' '_').txt | head -8 | cut -c1-150
done
echo "== rows, host's choice, at ${SECONDS}s"
R="--shape 4096,65536 --shape 2048,131072 --shape 1024,262144 --shape 8192,32768 --shape 1024,50257 --shape 512,99999"
timeout $(left 120) $B/tirx bench rows $R > $OUT/rows_host.txt 2>&1; echo "rc=$?"
grep -E "x[0-9]+ " $OUT/rows_host.txt | grep -v minimum | cut -c1-110
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 300) $B/gpu_tests gpu_transposed > $OUT/gpu_transposed.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked" $OUT/gpu_transposed.txt | head -4
rm -f $OUT/*.svg $OUT/*.json
echo "== done at ${SECONDS}s"
