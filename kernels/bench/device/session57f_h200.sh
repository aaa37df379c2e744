#!/bin/bash
# Stop 57's planned call 3 (#32, #29) — NOT RUN: the device tool lent no machine after call 2
# (nine failed starts spent the budget). Ready for the next stop, carry [".device/e57",
# ".device/dg"]: .device/e57/tirx.xz = `tirx` built from main with
# `git apply kernels/bench/device/diag57_fp8_block.patch` (diagnostic configs d1–d3 of
# `gemm_sm90_fp8_block`, wrong by design — never commit the patch applied: d1 consumers skip
# the scales (acc += part), d2 also release once a warpgroup, d3 also without the scale
# warps, i.e. the promoted row-wise kernel's loop on five stages); .device/dg = the DeepGEMM
# tarball of session57a. In order: TN GEMMs at M = 160…224 with every config (the first timing
# of `gemm_sm90_t` c2n96/c2n128, the 2×1 cluster multicasting A); the block FP8 configs at
# 4096³ (d1–d3 beside default split the 12–16 % the block kernel loses to the promoted
# row-wise one: the consumers' scale reads, the per-warp release, the scale warps); DeepGEMM.
#   BUDGET=280 bash kernels/bench/device/session57f_h200.sh
set -u
BUDGET=${BUDGET:-280}
source kernels/bench/device/lib.sh
unpack .device/e57
T=.device/e57/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== TN GEMM --all at ${SECONDS}s"
timeout $(left 110) $T bench gemm --all --shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 > $OUT/gemm_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|host|fastest|rc=" $OUT/gemm_all.txt | cut -c1-130 | head -12
grep -E "gemm_sm90_t/|gemm_sm90_ws/n64|tma_epi/n128" $OUT/gemm_all.txt | head -40
echo "== FP8 blocks at ${SECONDS}s"
timeout $(left 60) $T bench gemm --in e4m3 --out bf16 --scales blocks --kernel gemm_sm90_fp8_block --shape 4096,4096,4096 --shape 8192,8192,8192 > $OUT/ours_blocks.txt 2>&1; echo "rc=$?"
grep -vE "^  " $OUT/ours_blocks.txt | cut -c1-120 | head -5; sed -n '/every config/,$p' $OUT/ours_blocks.txt
echo "== DeepGEMM at ${SECONDS}s"
SHAPES="4096,4096,4096 8192,8192,8192" BUDGET=$(left 100) bash kernels/bench/device/session57a_h200.sh 2>&1 | grep -E "deepgemm|scaled_mm|unsupported|rc=|rror|compile" | head -20
echo "== done at ${SECONDS}s"
