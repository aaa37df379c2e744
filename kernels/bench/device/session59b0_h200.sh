#!/bin/bash
# Stop 59, call 2 (#32), carry [".device/e57"]: the TN and NN transposed-tile shapes with every
# config, run from $OUT so that the per-config tables (bench-gemm.json) come back — call 1's
# `--all` printed only each shape's fastest config (c2n96/c2n128 were not among them).
set -u
BUDGET=${BUDGET:-120}
source kernels/bench/device/lib.sh
unpack .device/e57
T=$PWD/.device/e57/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
S="--shape 144,4096,4096 --shape 160,4096,4096 --shape 176,4096,4096 --shape 192,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 --shape 240,4096,4096"
for l in tn nn; do
  mkdir -p $OUT/$l; echo "== $l at ${SECONDS}s"
  (cd $OUT/$l && timeout $(left 50) $T bench gemm --all --layout $l $S > all.txt 2>&1; echo "rc=$?")
  grep -E "^[0-9]|worst|geometric" $OUT/$l/all.txt | cut -c1-110
done
echo "== done at ${SECONDS}s"
