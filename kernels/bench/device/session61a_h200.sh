#!/bin/bash
# Stop 61, call 1, carry [".device/s61"]: main 309a837a's `tirx` and GPU tests (session60c's content, which could not run at stop 60)
# (`gemm_sm90_t`'s 2×1 clusters along M multicasting B, untimed; `gemm_sm90_fp8_block_mn`).
# (#32) gpu_transposed (every config, the new ones included) against the f64 reference; TN and NN
# `--all` at M = 144…240 × 4096² (every config's time in the JSON); (#29) ncu's source counters of
# `gemm_sm90_fp8_block_mn/default` at 4096³. At most 8 files come back: only the JSONs and the
# ncu report/listing go to $OUT.
#   BUDGET=540 bash kernels/bench/device/session61a_h200.sh
# Then: long rows (host's choice) and ncu of softmax/RMSNorm 4096×65536 (#32), ncu of attention hd64 s1024 (#31).
set -u
BUDGET=${BUDGET:-330}
source kernels/bench/device/lib.sh
unpack .device/s61
T=$PWD/.device/s61/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 120) .device/s61/gpu_tests gpu_transposed > /tmp/gpu_t.txt 2>&1; echo "rc=$?"
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
timeout $(left 90) ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --import-source no -k regex:gemm_sm90_fp8_block_mn -c 1 --launch-skip 4 -o $OUT/ncu_fp8mn $T bench gemm --in e4m3 --scales blocks-mn --kernel gemm_sm90_fp8_block_mn/default --shape 4096,4096,4096 > /tmp/ncu_fp8mn.txt 2>&1; echo "ncu rc=$?"
ncu --import $OUT/ncu_fp8mn.ncu-rep --page details > $OUT/det_fp8mn.txt 2>&1
ncu --import $OUT/ncu_fp8mn.ncu-rep --page source --csv --print-source sass > $OUT/sass_fp8mn.csv 2>&1
grep -E "Duration|Compute \(SM\) Th|No Eligible|Issued Warp|Warp Cycles Per Issued|Registers Per" $OUT/det_fp8mn.txt | head
ls $OUT
echo "== rows long (host's choice) at ${SECONDS}s"
for op in softmax rmsnorm; do
  timeout $(left 40) $T bench rows --op $op --shape 4096,65536 --shape 8192,32768 --shape 1024,262144 > /tmp/rows_$op.txt 2>&1; echo "rc=$?"
  grep -vE "^  " /tmp/rows_$op.txt | cut -c1-140 | head -12
done
echo "== ncu rows 4096x65536 at ${SECONDS}s"
for op in softmax rmsnorm; do
  timeout $(left 60) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy -k regex:$op -c 1 --launch-skip 3 -o /tmp/ncu_$op $T bench rows --op $op --shape 4096,65536 > /tmp/ncu_$op.txt 2>&1; echo "ncu $op rc=$?"
  ncu --import /tmp/ncu_$op.ncu-rep --page details > /tmp/det_$op.txt 2>&1
done
cat /tmp/det_softmax.txt /tmp/det_rmsnorm.txt > $OUT/det_rows.txt
grep -E "^  [a-z_]|Duration|Memory Throughput|DRAM Throughput|Registers Per|Block Size|Grid Size|Cluster Size|Achieved Occupancy|No Eligible|Dynamic Shared" $OUT/det_rows.txt | head -40
echo "== attention hd64 s1024 ncu at ${SECONDS}s"
timeout $(left 60) ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats -k regex:attention -c 1 --launch-skip 3 -o /tmp/ncu_attn $T bench attention --shape 16,32,32,1024,1024,64 > /tmp/ncu_attn.txt 2>&1; echo "ncu attn rc=$?"
ncu --import /tmp/ncu_attn.ncu-rep --page details > $OUT/det_attn.txt 2>&1
grep -E "^  [a-z_]|Duration|Compute \(SM\) Th|No Eligible|Issued Warp|Registers Per|Grid Size|Block Size" $OUT/det_attn.txt | head -14
ls $OUT
echo "== done at ${SECONDS}s"
