#!/bin/bash
# Stop 57, call 1 (#29), carry [".device/e57"]: main 1fa6a5ad's tirx, stripped, xz. Where the
# block-scaled FP8 GEMM loses 15 % to the promoted row-wise kernel of the same 128×128 tile and
# pipeline (stop 53: 994 vs 1163 TFLOP/s at 4096³): the three FP8 forms beside cuBLASLt, then
# ncu's stall sampling by SASS line for `gemm_sm90_fp8_block/default` and
# `gemm_sm90_fp8/promoted` at 4096³ (`--page source`, CSV).
set -u
BUDGET=${BUDGET:-300}
source kernels/bench/device/lib.sh
unpack .device/e57
T=.device/e57/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="--shape 4096,4096,4096 --shape 8192,8192,8192"
echo "== FP8 forms at ${SECONDS}s"
{ echo "## blocks"; timeout $(left 90) $T bench gemm --in e4m3 --out bf16 --scales blocks $F; echo "rc=$?"
  echo "## rows promoted"; timeout $(left 90) $T bench gemm --in e4m3 --out bf16 --scales rows --accum promoted $F; echo "rc=$?"; } > $OUT/fp8.txt 2>&1
grep -vE "^  " $OUT/fp8.txt | cut -c1-140 | head -30
for kc in gemm_sm90_fp8_block/default:blocks::gemm_sm90_fp8_block_default_sm gemm_sm90_fp8/promoted:rows:promoted:gemm_sm90_fp8_promoted_sm; do
  IFS=: read k sc ac re <<< "$kc"; f=$(echo ${k%/*} | tr -d '/')
  echo "== ncu $k at ${SECONDS}s"
  timeout $(left 100) ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --import-source no -k regex:$re -c 1 --launch-skip 4 -o $OUT/$f $T bench gemm --in e4m3 --out bf16 --scales $sc ${ac:+--accum $ac} --shape 4096,4096,4096 > $OUT/ncu_$f.txt 2>&1; echo "ncu rc=$?"
  ncu --import $OUT/$f.ncu-rep --page details > $OUT/det_$f.txt 2>&1
  ncu --import $OUT/$f.ncu-rep --page source --csv --print-source sass > $OUT/sass_$f.csv 2>&1
  grep -E "Duration|Compute \(SM\)|Issued Warp|No Eligible|Warp Cycles Per Issued|Eligible Warps|Stall" $OUT/det_$f.txt | head -14 | cut -c1-110
  wc -l $OUT/sass_$f.csv; rm -f $OUT/$f.ncu-rep
done
echo "== done at ${SECONDS}s"
