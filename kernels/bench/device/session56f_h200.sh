#!/bin/bash
# Stop 56, call 7 (#32), carry [".device/t58"]: main 287787ea's tirx. Why the cluster row
# kernels stop at 78–91 % of the copy at 4096×65536 where QuACK reaches 99 % (call 5): ncu of
# softmax and RMSNorm `*_staged_cluster` `x2` (2 CTAs of 32768 columns) and `h4` (4 of 16384;
# softmax 91.1 %, RMSNorm 78.2 %: the same split, opposite verdicts).
set -u
BUDGET=${BUDGET:-240}
source kernels/bench/device/lib.sh
unpack .device/t58
T=.device/t58/tirx
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for kc in softmax_staged_cluster/x2 softmax_staged_cluster/h4 rmsnorm_staged_cluster/x2 rmsnorm_staged_cluster/h4; do
  k=${kc%/*}; op=${k%%_*}; f=$(echo $kc | tr '/' '_')
  echo "== ncu $kc 4096x65536 at ${SECONDS}s"
  timeout $(left 55) ncu -k regex:$k -c 1 --launch-skip 5 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats $T bench rows --shape 4096,65536 --op $op --kernel $kc > $OUT/ncu_$f.txt 2>&1; echo "ncu rc=$?"
  grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Block Limit|Registers Per|Eligible Warps|Issued Warp|No Eligible|Warp Cycles Per Issued|Stall|Waves Per SM|Cluster Size|Dynamic Shared" $OUT/ncu_$f.txt | head -24 | cut -c1-110
done
echo "== done at ${SECONDS}s"
