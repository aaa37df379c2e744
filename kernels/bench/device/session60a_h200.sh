#!/bin/bash
# Stop 60, call 1, carry [".device/o60"]: `tirx` of s60 (main eb90bff2 + n120/nn_n120, untimed).
# (#32) TN and NN `--all` at M = 144, 176, 208, 240 × 4096² (the odd-block tiles n72…n120 and
# nn_n72…nn_n120, untimed; the model with the guard lifted predicts each at its M:
# `the_untimed_odd_block_tiles_are_unranked_but_would_be_chosen`), every config's time kept;
# then ncu's source counters of `t/n96` and of cuBLASLt's kernel at 192×4096² (same 64×96 tile,
# cuBLASLt ~6 % ahead at stop 59).
#   BUDGET=200 bash kernels/bench/device/session60a_h200.sh
set -u
BUDGET=${BUDGET:-200}
source kernels/bench/device/lib.sh
unpack .device/o60
T=$PWD/.device/o60/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for l in tn nn; do
  echo "== $l --all at ${SECONDS}s"
  timeout $(left 75) $T bench gemm --all --layout $l --shape 144,4096,4096 --shape 176,4096,4096 --shape 208,4096,4096 --shape 240,4096,4096 --json $OUT/${l}_all.json > $OUT/${l}_all.txt 2>&1; echo "rc=$?"
  grep -E "^[0-9]|->|worst|geometric|WRONG|failed" $OUT/${l}_all.txt | cut -c1-120
  python3 kernels/bench/device/all_table.py $OUT/${l}_all.json 2>&1 | cut -c1-400
done
S=192,4096,4096
for who in ours cublas; do
  if [ $who = ours ]; then re='gemm_sm90_t_n96_sm_90a'; else re='nvjet|xmma|cutlass'; fi
  echo "== ncu $who at ${SECONDS}s"
  timeout $(left 60) ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --import-source no -k regex:"$re" -c 1 --launch-skip 5 -o $OUT/ncu_$who $T bench gemm --all --shape $S > $OUT/ncu_run_$who.txt 2>&1; echo "ncu rc=$?"
  ncu --import $OUT/ncu_$who.ncu-rep --page details > $OUT/det_$who.txt 2>&1
  ncu --import $OUT/ncu_$who.ncu-rep --page source --csv --print-source sass > $OUT/sass_$who.csv 2>&1
  grep -E "Function Name|^  [a-z_0-9]+.*\(|Duration|Registers Per|Grid Size|Block Size|Shared Memory Config|Dynamic Shared|Compute \(SM\) Th|Memory Throughput|No Eligible|Issued Warp|Warp Cycles Per Issued|Achieved Occ|Cluster" $OUT/det_$who.txt | head -30
done
echo "== done at ${SECONDS}s"
