#!/bin/bash
# Stop 54, call 1 (#32), carry [".device/d54", ".device/p1"]: .device/d54/tirx and gpu_tests =
# main dd1fa63 + the GPU split-K tests by layout + helper rmsodd's rmsnorm_odd_rows + helper nna's NN decode plan (MN-major A for wgmma; branch own, 4a6c0d7), stripped, xz; .device/p1 = the first 44 MiB of the CUTLASS DSL's cu13 wheel (call 2,
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
timeout $(left 170) $B/gpu_tests gpu_splitk gpu_gemv gpu_rows::odd > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -12
S="--shape 1,4096,4096 --shape 8,4096,4096 --shape 16,4096,4096 --shape 32,4096,4096 --shape 64,4096,4096 --shape 64,8192,8192 --shape 64,14336,4096 --shape 128,4096,4096 --shape 128,4096,14336 --shape 96,8192,8192"
echo "== GEMM --all --layout nn at ${SECONDS}s"
timeout $(left 170) $B/tirx bench gemm --layout nn --all $S --json $OUT/gemm_nn.json > $OUT/gemm_nn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_nn.txt
grep -vE "^  " $OUT/gemm_nn.txt | cut -c1-120 | tail -14
# M of 129…256: 192x4096x4096 measured 0.678 of cuBLASLt at stop 53 (ws/n64 31.8 us there,
# 21.3 us at M = 256 with the same grid): every config at M between 128 and 256, then ncu.
S="--shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 --shape 256,4096,4096 --shape 192,8192,8192 --shape 192,8192,4096"
echo "== GEMM --all TN, M 160…256 at ${SECONDS}s"
timeout $(left 120) $B/tirx bench gemm --all $S --json $OUT/gemm_tn.json > $OUT/gemm_tn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_tn.txt
grep -vE "^  " $OUT/gemm_tn.txt | cut -c1-120 | tail -10
SECS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats"
{ for m in 192 256; do echo "## ours ws/n64 ${m}x4096x4096"
  timeout $(left 40) ncu $SECS -k regex:gemm_sm90_ws -c 1 $B/tirx run gemm_sm90_ws --config n64 --m $m --n 4096 --k 4096 2>&1 | grep -vE "^==PROF==|^ *$|----"; done
  cat > /tmp/t.py <<'PY'
import torch
a = torch.randn(192, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
torch.nn.functional.linear(a, b); torch.cuda.synchronize()
torch.cuda.profiler.start(); torch.nn.functional.linear(a, b); torch.cuda.synchronize(); torch.cuda.profiler.stop()
PY
  echo "## torch 192x4096x4096"; timeout $(left 40) ncu $SECS --profile-from-start off python3 /tmp/t.py 2>&1 | grep -vE "^==PROF==|^ *$|----"; } > $OUT/ncu192.txt 2>&1
grep -E "^## |nvjet|sm90|Duration|Memory Throughput|Compute \(SM\)|Grid Size|Registers" $OUT/ncu192.txt | head -30
echo "== RMSNorm odd: one CTA a row (rmsnorm_odd_rows) vs the staged walk forced at ${SECONDS}s"
timeout $(left 40) $B/tirx bench rows --shape 16384,1001 --shape 8192,3001 --shape 8192,4093 --kernel rmsnorm_odd_rows --kernel rmsnorm_odd/o5k > $OUT/rows_odd.txt 2>&1; echo "rc=$?" >> $OUT/rows_odd.txt
grep -E "^rmsnorm|rc=" $OUT/rows_odd.txt | cut -c1-110 | head -8
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
