#!/bin/bash
# Stop 57, planned call 4 (#32) — NOT RUN (no machine lent after call 2), carry [".device/e57"]: which kernels cuBLASLt runs at the TN shapes
# where our fastest config trails it (M = 160…240, N ≥ 4096: 0.80–0.92 at stop 56): ncu's
# launch statistics (grid, block, cluster, registers, shared memory) and duration of its
# kernels, and of our host's choice beside it.
set -u
BUDGET=${BUDGET:-200}
source kernels/bench/device/lib.sh
unpack .device/e57
T=.device/e57/tirx
for s in 160,4096,4096 224,4096,4096 192,8192,8192 240,5120,5120; do
  echo "== $s at ${SECONDS}s"
  timeout $(left 45) ncu --section LaunchStats --section SpeedOfLight -k regex:'nvjet|xmma|cutlass|gemm|splitK|reduce' -c 4 --launch-skip 40 $T bench gemm --shape $s > $OUT/ncu_$s.txt 2>&1; echo "rc=$?"
  grep -E "^  [a-z_0-9]+.*\(|Duration|Grid Size|Block Size|Cluster Size|Registers Per|Shared Memory Config|Dynamic Shared|Waves Per SM|Compute \(SM\)|DRAM Through" $OUT/ncu_$s.txt | cut -c1-150 | head -40
done
echo "== done at ${SECONDS}s"
