#!/bin/bash
# Stop 54, call 1 (#32), carry [".device/d54", ".device/p1"]: .device/d54/tirx and gpu_tests =
# main dd1fa63, stripped, xz; .device/p1 = the first 44 MiB of the CUTLASS DSL's cu13 wheel (call 2,
# session54b_h200.sh, finds it and the binaries in the home folder if the machine stayed warm).
# Correctness first: helper nnsplit's NN split-K (stop 53, emulator only) and every split-K/GEMV
# test; then every config at the skinny shapes in NN and TN beside cuBLASLt (--all marks the
# host's choice), each kept as JSON for dispatch/measured.rs. At most 8 files come back.
set -u
BUDGET=${BUDGET:-540}
source kernels/bench/device/lib.sh
unpack .device/d54
B=.device/d54
mkdir -p ~/peers ~/d54 && cp .device/p1/* ~/peers/ 2>/dev/null; cp $B/tirx $B/gpu_tests ~/d54/
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== gpu_splitk gpu_gemv at ${SECONDS}s"
timeout $(left 150) $B/gpu_tests gpu_splitk gpu_gemv > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -12
S="--shape 1,4096,4096 --shape 8,4096,4096 --shape 16,4096,4096 --shape 32,4096,4096 --shape 64,4096,4096 --shape 64,8192,8192 --shape 64,14336,4096 --shape 128,4096,4096 --shape 128,4096,14336 --shape 96,8192,8192 --shape 192,4096,4096 --shape 256,8192,2048"
for l in nn tn; do
  echo "== GEMM --all --layout $l at ${SECONDS}s"
  timeout $(left 170) $B/tirx bench gemm --layout $l --all $S --json $OUT/gemm_$l.json > $OUT/gemm_$l.txt 2>&1; echo "rc=$?" >> $OUT/gemm_$l.txt
  grep -vE "^  " $OUT/gemm_$l.txt | cut -c1-120 | tail -16
done
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
