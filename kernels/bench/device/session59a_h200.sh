#!/bin/bash
# Stop 59, call 1 (#32, #29), carry [".device/e57", ".device/g59", ".device/dg"]:
# .device/e57/tirx = `tirx` of a1b8105b with diag57_fp8_block.patch applied (configs d1–d3,
# wrong by design); .device/g59/gpu_tests = the GPU tests of a1b8105b (no patch); .device/dg =
# DeepGEMM (session57a). In order: TN GEMMs at M = 144…224 with every config (first timing of
# `gemm_sm90_t` c2n96/c2n128; the re-read model's predictions at 144 and 208), the block FP8
# configs d1–d3 beside default, the GPU tests the last stop's landings touch (each in its own
# process), DeepGEMM.
#   BUDGET=580 bash kernels/bench/device/session59a_h200.sh
set -u
BUDGET=${BUDGET:-580}
source kernels/bench/device/lib.sh
unpack .device/e57 .device/g59
T=.device/e57/tirx
B=.device/g59/gpu_tests
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== TN GEMM --all at ${SECONDS}s"
timeout $(left 170) $T bench gemm --all --shape 144,4096,4096 --shape 160,4096,4096 --shape 192,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 > $OUT/gemm_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|host|fastest|rc=" $OUT/gemm_all.txt | cut -c1-130 | head -14
echo "== FP8 blocks at ${SECONDS}s"
timeout $(left 70) $T bench gemm --in e4m3 --out bf16 --scales blocks --kernel gemm_sm90_fp8_block --shape 4096,4096,4096 --shape 8192,8192,8192 > $OUT/ours_blocks.txt 2>&1; echo "rc=$?"
grep -vE "^  " $OUT/ours_blocks.txt | cut -c1-120 | head -5; sed -n '/every config/,$p' $OUT/ours_blocks.txt
for t in gpu_transposed gpu_rows::odd_rows_past gpu::the_host_side_choice gpu_gemv::the_host; do
  f=$(echo $t | tr ':' '_')
  echo "== $t at ${SECONDS}s"
  timeout $(left 120) $B $t > $OUT/$f.txt 2>&1; echo "rc=$?"
  grep -E "^test |test result|panicked" $OUT/$f.txt | head -12
done
echo "== DeepGEMM at ${SECONDS}s"
SHAPES="4096,4096,4096 8192,8192,8192" BUDGET=$(left 150) bash kernels/bench/device/session57a_h200.sh 2>&1 | grep -E "deepgemm|scaled_mm|unsupported|rc=|rror|compile" | head -20
echo "== done at ${SECONDS}s"
