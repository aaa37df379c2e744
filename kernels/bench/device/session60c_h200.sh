#!/bin/bash
# Stop 60, call 2, carry [".device/c2b", ".device/mn"]: `tirx` and the GPU tests of branch c2b 2a043db5
# (`gemm_sm90_t`'s 2×1 clusters along M multicasting B, untimed) and `tirx` of branch mn.
# (#32) gpu_transposed (every config, the new ones included) against the f64 reference; TN and NN
# `--all` at M = 144…240 × 4096² (every config's time in the JSON); (#29) ncu's source counters of
# `gemm_sm90_fp8_block_mn/default` at 4096³. At most 8 files come back: only the JSONs and the
# ncu report/listing go to $OUT.
#   BUDGET=330 bash kernels/bench/device/session60c_h200.sh
set -u
BUDGET=${BUDGET:-330}
source kernels/bench/device/lib.sh
unpack .device/c2b .device/mn
T=$PWD/.device/c2b/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 120) .device/c2b/gpu_tests gpu_transposed > /tmp/gpu_t.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked|relative error" /tmp/gpu_t.txt | head -12
S="--shape 144,4096,4096 --shape 160,4096,4096 --shape 176,4096,4096 --shape 192,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 --shape 240,4096,4096"
for l in tn nn; do
  echo "== $l --all at ${SECONDS}s"
  timeout $(left 80) $T bench gemm --all --layout $l $S --json $OUT/${l}_all.json > /tmp/${l}_all.txt 2>&1; echo "rc=$?"
  rm -f $OUT/${l}_all.svg
  grep -E "^[0-9]|->|worst|geometric|WRONG|failed" /tmp/${l}_all.txt | cut -c1-120
  python3 kernels/bench/device/all_table.py $OUT/${l}_all.json 10 2>&1 | cut -c1-460
done
echo "== ncu fp8_block_mn at ${SECONDS}s"
timeout $(left 90) ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --import-source no -k regex:gemm_sm90_fp8_block_mn -c 1 --launch-skip 4 -o $OUT/ncu_fp8mn .device/mn/tirx bench gemm --in e4m3 --scales blocks-mn --kernel gemm_sm90_fp8_block_mn/default --shape 4096,4096,4096 > /tmp/ncu_fp8mn.txt 2>&1; echo "ncu rc=$?"
ncu --import $OUT/ncu_fp8mn.ncu-rep --page details > $OUT/det_fp8mn.txt 2>&1
ncu --import $OUT/ncu_fp8mn.ncu-rep --page source --csv --print-source sass > $OUT/sass_fp8mn.csv 2>&1
grep -E "Duration|Compute \(SM\) Th|No Eligible|Issued Warp|Warp Cycles Per Issued|Registers Per" $OUT/det_fp8mn.txt | head
ls $OUT
echo "== done at ${SECONDS}s"
