#!/bin/bash
# Stop 53, call 1 (#32, #29), carry [".device/b53", ".device/p1"]: .device/b53/tirx and gpu_tests =
# main 55b1f26, stripped, xz; .device/p1 = the first 44 MiB of the CUTLASS DSL's cu13 wheel
# (../shared/tools/peer-wheels.sh's wheels re-split for two calls: session53b_h200.sh is call 2,
# which finds the binaries and this part in the home folder if the machine stayed warm). Correctness first: the row kernels' GPU tests with the ODD ladder o5k…o16k (landed
# at stop 52 on the emulator only); then the host's choice at odd widths 4999…16383 beside the
# stop-51 walkers forced; the FP8 GEMMs (row-wise fast/promoted, block) at three shapes; every
# bf16 config at the skinny GEMMs the host chooses worst (--all marks the host's choice).
# At most 8 files come back.
set -u
BUDGET=${BUDGET:-540}
source kernels/bench/device/lib.sh
unpack .device/b53
B=.device/b53
mkdir -p ~/peers ~/b53 && cp .device/p1/* ~/peers/ && cp $B/tirx $B/gpu_tests ~/b53/
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_rows at ${SECONDS}s"
timeout $(left 110) $B/gpu_tests gpu_rows > $OUT/gpu_rows.txt 2>&1; echo "rc=$?" >> $OUT/gpu_rows.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt | head -8
S="--shape 4096,4999 --shape 8192,7171 --shape 4096,9999 --shape 2048,16383 --shape 4096,12345 --shape 16384,1001"
echo "== rows host's choice at ${SECONDS}s"
timeout $(left 70) $B/tirx bench rows $S > $OUT/rows.txt 2>&1; echo "rc=$?" >> $OUT/rows.txt
grep -E "^(softmax|rmsnorm|layernorm) |rc=" $OUT/rows.txt | cut -c1-110
echo "== rows walkers forced at ${SECONDS}s"
timeout $(left 60) $B/tirx bench rows --shape 4096,4999 --shape 8192,7171 --shape 4096,12345 --kernel softmax_long --kernel rmsnorm_long --kernel layernorm_long > $OUT/rows_walk.txt 2>&1; echo "rc=$?" >> $OUT/rows_walk.txt
grep -E "^(softmax|rmsnorm|layernorm)|rc=" $OUT/rows_walk.txt | cut -c1-110 | head -12
echo "== FP8 at ${SECONDS}s"
F="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,2112,7168"
{ for a in fast promoted; do echo "## rows $a"; timeout $(left 60) $B/tirx bench gemm --in e4m3 --out bf16 --scales rows --accum $a $F; echo "rc=$?"; done
  echo "## blocks"; timeout $(left 60) $B/tirx bench gemm --in e4m3 --out bf16 --scales blocks $F; echo "rc=$?"; } > $OUT/fp8.txt 2>&1
grep -vE "^  " $OUT/fp8.txt | grep -E "^##|x |×|rc=|geomean" | cut -c1-120 | head -24
echo "== GEMM --all at ${SECONDS}s"
timeout $(left 150) $B/tirx bench gemm --all --shape 128,4096,4096 --shape 64,11008,4096 --shape 128,11008,4096 --shape 256,4096,4096 --shape 96,8192,8192 > $OUT/gemm_all.txt 2>&1; echo "rc=$?" >> $OUT/gemm_all.txt
grep -E "host|fastest|rc=" $OUT/gemm_all.txt | cut -c1-120 | head -20
echo "== done at ${SECONDS}s"
