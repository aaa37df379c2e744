#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: ncu of the row-wise FP8 GEMM (#29) at 8192³
# beside torch._scaled_mm's row-wise kernel (CUTLASS on sm_90), to see why CUTLASS sustains
# ~1490 TFLOP/s where ours stays at ~1330: the peer's kernel name (its tile, cluster and
# schedule), occupancy, issue-slot use and the warp stall reasons of both.
# Build here: cargo build --release -p tirx-kernels --bin tirx; gzip -c target/release/tirx > devbin/tirx.gz
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
SECS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
echo "== ours gemm_sm90_fp8_rowwise 8192^3"
timeout 200 ncu $SECS -k regex:gemm_sm90_fp8 -c 1 --launch-skip 3 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --shape 8192,8192,8192 > $OUT/ncu_ours.txt 2>&1
grep -vE "^==PROF==|^ *$|----" $OUT/ncu_ours.txt | head -150
cat > /tmp/t.py <<'PY'
import torch
fp8 = torch.float8_e4m3fn
a = (torch.randn(8192, 8192, device="cuda") * 0.5).to(fp8)
b = (torch.randn(8192, 8192, device="cuda") * 0.5).to(fp8)
sa = torch.rand(8192, 1, device="cuda") + 0.5
sb = torch.rand(1, 8192, device="cuda") + 0.5
f = lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=True)
f(); torch.cuda.synchronize()
torch.cuda.profiler.start(); f(); torch.cuda.synchronize(); torch.cuda.profiler.stop()
PY
echo "== torch._scaled_mm rowwise 8192^3"
timeout 200 ncu $SECS --profile-from-start off python3 /tmp/t.py > $OUT/ncu_torch.txt 2>&1; grep -E "nvjet|cutlass|Duration" $OUT/ncu_torch.txt
