#!/bin/bash
# Stop 52, call 3 (#32, #29) — NOT RUN at stop 52 (the device started no machine; 197 s were left):
# the first thing for the next stop, with binaries built from main., carry ["devbin5", "devbin6"]: devbin5/tirx = branch long 6eddee4
# (odd rows up to 4095 columns held from their aligned column, the walkers past that);
# devbin6/tirx and gpu_tests = branch oddwide (the ODD ladder on to 16k). GPU tests of the row
# kernels, the host's choice base vs new at odd widths 4096…16383, then the fast row-wise FP8
# GEMM that stop 51 could not time. At most 8 files come back.
set -u
BUDGET=${BUDGET:-330}
source kernels/bench/device/lib.sh
unpack devbin5 devbin6
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== GPU tests of the row kernels (devbin6) at ${SECONDS}s"
timeout $(left 100) ./devbin6/gpu_tests gpu_rows > $OUT/gpu_rows.txt 2>&1; echo "rc=$?" >> $OUT/gpu_rows.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt | head -12
S="--shape 4096,4999 --shape 8192,7171 --shape 4096,9999 --shape 2048,16383 --shape 4096,12345 --shape 16384,1001"
for b in devbin5 devbin6; do
  echo "== rows, host's choice: $b at ${SECONDS}s"
  timeout $(left 60) ./$b/tirx bench rows $S > $OUT/rows_$b.txt 2>&1; echo "rc=$?" >> $OUT/rows_$b.txt
  grep -E "^(softmax|rmsnorm|layernorm) |rc=" $OUT/rows_$b.txt
done
echo "== FP8 row-wise, fast accumulation, at ${SECONDS}s"
timeout $(left 70) ./devbin6/tirx bench gemm --in e4m3 --out bf16 --scales rows --accum fast --shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,2112,7168 > $OUT/fp8_rows_fast.txt 2>&1; echo "rc=$?" >> $OUT/fp8_rows_fast.txt
grep -vE "^  " $OUT/fp8_rows_fast.txt | tail -8
echo "== done at ${SECONDS}s"
