#!/bin/bash
# Stop 61, call b, carry [".device/s61b"]: `tirx` and the GPU tests of branch fp8dbl d8af3938
# (= main 426858b0 + `gemm_sm90_fp8_block_mn_dbl`, the partial accumulator double-buffered).
# (#29) gpu_fp8's MN-major tests (every kernel solving ScaleBlocksMn: dbl among them), then
# `dbl` against `block_mn/default` and cuBLASLt, same scales, in one command. Prediction (helper):
# 950–1050 / 970–1070 TFLOP/s at 4096³ / 8192³ (block_mn/default 990 / 1012 at stop 60).
# (#32) TN and NN `--all` at M = 144…240 × 4096² (the untimed `m2*` clusters), gpu_transposed,
# then (#29) ncu of both FP8 kernels at 4096³ if budget is left. At most 8 files come back.
#   BUDGET=500 bash kernels/bench/device/session61b_h200.sh
set -u
BUDGET=${BUDGET:-500}
source kernels/bench/device/lib.sh
unpack .device/s61b
T=$PWD/.device/s61b/tirx
B=$PWD/.device/s61b/gpu_tests
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_fp8 mn_major at ${SECONDS}s"
timeout $(left 120) $B gpu_fp8::the_mn_major gpu_fp8::the_host_runs_mn_major > /tmp/gpu_mn.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked" /tmp/gpu_mn.txt | head -8
F="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168"
echo "== fp8 dbl vs block_mn at ${SECONDS}s"
timeout $(left 100) $T bench gemm --in e4m3 --scales blocks-mn --kernel gemm_sm90_fp8_block_mn/default --kernel gemm_sm90_fp8_block_mn_dbl/default $F --json $OUT/fp8mn.json > /tmp/fp8mn.txt 2>&1; echo "rc=$?"
rm -f $OUT/fp8mn.svg
grep -E "^[0-9]|->|worst|geometric|WRONG|failed" /tmp/fp8mn.txt | cut -c1-140 | head -12
python3 kernels/bench/device/all_table.py $OUT/fp8mn.json 4 2>&1 | cut -c1-300
S="--shape 144,4096,4096 --shape 160,4096,4096 --shape 176,4096,4096 --shape 192,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 --shape 240,4096,4096"
for l in tn nn; do
  echo "== $l --all at ${SECONDS}s"
  timeout $(left 80) $T bench gemm --all --layout $l $S --json $OUT/${l}_all.json > /tmp/${l}_all.txt 2>&1; echo "rc=$?"
  rm -f $OUT/${l}_all.svg
  grep -E "^[0-9]|->|worst|geometric|WRONG|failed" /tmp/${l}_all.txt | cut -c1-120
  python3 kernels/bench/device/all_table.py $OUT/${l}_all.json 10 2>&1 | cut -c1-460
done
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 120) $B gpu_transposed > /tmp/gpu_t.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked|relative error" /tmp/gpu_t.txt | head -12
echo "== ncu fp8 at ${SECONDS}s"
for k in gemm_sm90_fp8_block_mn_dbl gemm_sm90_fp8_block_mn; do
  timeout $(left 45) ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats -k regex:"${k}\$|${k}_" -c 1 --launch-skip 4 -o /tmp/ncu_$k $T bench gemm --in e4m3 --scales blocks-mn --kernel $k/default --shape 4096,4096,4096 > /tmp/ncu_$k.txt 2>&1; echo "ncu $k rc=$?"
  ncu --import /tmp/ncu_$k.ncu-rep --page details >> $OUT/det_fp8.txt 2>&1
done
grep -E "^  [a-z_]|Duration|No Eligible|Issued Warp|Warp Cycles Per Issued|Registers Per" $OUT/det_fp8.txt | head -20
ls $OUT
echo "== done at ${SECONDS}s"
