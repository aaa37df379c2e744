#!/bin/bash
# No wheels needed: a GEMM spot check against cuBLASLt, the quick attention sweep with every
# seq-8k point dumped and compared with cuDNN's output on the same inputs, the emulator
# validation dump (tirx sim-dump; compare here with tirx sim-compare --gpu DIR), and ncu on one
# attention launch. One call, carry ["devbin"] (devbin/tirx built as in the other script).
# The device returns at most 8 files from $OUT: keep big or many outputs in a tarball.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt 2>&1
./devbin/tirx bench gemm --shape 8192,8192,8192 --shape 4096,4096,4096 --shape 8192,2048,8192 --shape 2048,2048,2048 --json $OUT/gemm.json > $OUT/gemm.txt 2>&1
tail -9 $OUT/gemm.txt
./devbin/tirx bench attention --quick --json $OUT/bench-attention.json --dump /tmp/dump > $OUT/ours.txt 2>&1
tail -2 $OUT/ours.txt
python3 kernels/bench/attention_compare.py --dump /tmp/dump --out $OUT/attention-compare.json > $OUT/compare.txt 2>&1
cat $OUT/compare.txt
./devbin/tirx sim-dump --out $OUT/simdump > $OUT/simdump.txt 2>&1; tail -2 $OUT/simdump.txt
timeout 80 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats -k regex:attention -c 1 ./devbin/tirx run attention_sm90 --config d128 --m 8192 --n 16 > $OUT/ncu_d128.txt 2>&1
grep -E "Tensor|Issue Slots|No Eligible|Achieved Occupancy|Duration|Warp Cycles Per Issued" $OUT/ncu_d128.txt | head -12
