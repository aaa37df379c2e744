#!/bin/bash
# Ran at stop 59 from branch land59f (helper fp8tma's `tmasc`, which did not land; record §4).
# Stop 59, call 3 (#29), carry [".device/f59"]: .device/f59/tirx.xz and gpu_tests.xz, built from
# branch fp8tma (the lead builds and packs them). The block-scaled FP8 GEMM's configs side by
# side with cuBLASLt — first timing of `gemm_sm90_fp8_block/tmasc` (the TMA thread loads the
# scales, no scale warps) beside `default` and `ping` — at 4096³, 8192³, 4096×7168×7168 and
# 2048×7168×2048 (every K a multiple of 512, so `tmasc` runs at all four), then the GPU test of
# every block-scaled config against the f64 reference (`tmasc` refused where cdiv(K, 128) is
# not a multiple of 4). The bench runs in $OUT, so its JSON files come back.
#   BUDGET=580 bash kernels/bench/device/session59c_h200.sh
set -u
BUDGET=${BUDGET:-580}
source kernels/bench/device/lib.sh
unpack .device/f59
R=$PWD
T=$R/.device/f59/tirx
B=$R/.device/f59/gpu_tests
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== FP8 blocks at ${SECONDS}s"
(cd $OUT && timeout $(left 400) $T bench gemm --in e4m3 --out bf16 --scales blocks --kernel gemm_sm90_fp8_block --shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,7168 --shape 2048,7168,2048 > $OUT/ours_blocks.txt 2>&1); echo "rc=$?"
grep -vE "^  " $OUT/ours_blocks.txt | cut -c1-120 | head -8; sed -n '/every config/,$p' $OUT/ours_blocks.txt
echo "== gpu_fp8::the_block_scaled at ${SECONDS}s"
timeout $(left 150) $B gpu_fp8::the_block_scaled > $OUT/gpu_fp8_block.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked|not refused|worst" $OUT/gpu_fp8_block.txt | head -20
ls $OUT
echo "== done at ${SECONDS}s"
