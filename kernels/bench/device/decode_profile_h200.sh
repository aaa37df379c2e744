#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: ncu profiles of the decode GEMMs (#32) —
# ours (the host's choice at 1×8192×8192 and 16×8192×8192: gemm_sm90_ws/n64) beside the
# kernel torch/cuBLAS runs for the same product — to see what bounds the B stream.
# Build here: cargo build --release -p tirx-kernels --bin tirx; gzip -c target/release/tirx > devbin/tirx.gz
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz && chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
SECS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats"
for mnk in "1 8192 8192" "16 8192 8192"; do
  set -- $mnk
  echo "== ours ws/n64 $1x$2x$3"
  timeout 120 ncu $SECS -k regex:gemm_sm90_ws -c 1 ./devbin/tirx run gemm_sm90_ws --config n64 --m $1 --n $2 --k $3 > $OUT/ncu_ours_$1.txt 2>&1
  grep -vE "^==PROF==|^ *$|----" $OUT/ncu_ours_$1.txt | head -120
  echo "== torch $1x$2x$3"
  cat > /tmp/t.py <<PY
import torch
a = torch.randn($1, $3, device="cuda", dtype=torch.bfloat16)
b = torch.randn($2, $3, device="cuda", dtype=torch.bfloat16)
torch.nn.functional.linear(a, b); torch.cuda.synchronize()
torch.cuda.profiler.start()
torch.nn.functional.linear(a, b)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
PY
  timeout 120 ncu $SECS --profile-from-start off python3 /tmp/t.py > $OUT/ncu_torch_$1.txt 2>&1
  grep -vE "^==PROF==|^ *$|----" $OUT/ncu_torch_$1.txt | head -160
done
echo "== ours split-K (the host's choice at 1x4096x4096: splitk/n64, S = 2)"
timeout 150 ncu $SECS -k regex:splitk -c 2 --launch-skip 10 ./devbin/tirx bench gemm --kernel gemm_sm90_splitk --shape 1,4096,4096 > $OUT/ncu_splitk_1.txt 2>&1
grep -vE "^==PROF==|^ *$|----" $OUT/ncu_splitk_1.txt | head -200
echo "== every ws / tma_epi / splitk config at the decode shapes"
timeout 150 ./devbin/tirx bench gemm --kernel gemm_sm90_ws --kernel gemm_sm90_tma_epi --kernel gemm_sm90_splitk --shape 1,8192,8192 --shape 16,4096,4096 --shape 1,4096,4096 > $OUT/configs.txt 2>&1; echo "rc=$?" >> $OUT/configs.txt
tail -30 $OUT/configs.txt
