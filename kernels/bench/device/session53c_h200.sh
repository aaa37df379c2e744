#!/bin/bash
# Stop 53, the one call (#32, #29), carry [".device/b53", ".device/d53"]: b53 = main 55b1f26's
# tirx and gpu_tests (the cluster reductions by barrier and ld.shared::cluster), d53 = branch
# dev53 (main + stasync's push form of `reduce … across = cluster` by st.async + gemm128's
# 128-row split-K tile + lnodd's odd norms with w and b staged in shared memory), each stripped and xz. Correctness first (the ODD ladder o5k…o16k and the
# push form have run only in the emulator), then pull vs push side by side, odd widths, every
# skinny-GEMM config, FP8. At most 8 files come back.
set -u
BUDGET=${BUDGET:-480}
source kernels/bench/device/lib.sh
unpack .device/b53 .device/d53
O=.device/b53; N=.device/d53
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== GPU tests (d53) at ${SECONDS}s"
timeout $(left 130) $N/gpu_tests gpu_rows gpu_arg_reduce gpu_int64 > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -8
K="--kernel softmax_staged_cluster/x2 --kernel softmax_staged_cluster/h2 --kernel rmsnorm_staged_cluster/x2 --kernel layernorm_staged_cluster/x2"
S="--shape 4096,65536 --shape 8192,32768 --shape 1024,262144"
for b in b53 d53; do
  echo "== cluster kernels forced, $b, at ${SECONDS}s"
  timeout $(left 60) ./.device/$b/tirx bench rows $S $K > $OUT/cl_$b.txt 2>&1; echo "rc=$?" >> $OUT/cl_$b.txt
  grep -E "^(softmax|rmsnorm|layernorm)|rc=" $OUT/cl_$b.txt | cut -c1-110 | head -14
done
for b in b53 d53; do
  echo "== odd widths, host's choice ($b) at ${SECONDS}s"
  timeout $(left 50) ./.device/$b/tirx bench rows --shape 16384,1001 --shape 8192,3001 --shape 4096,4999 --shape 8192,7171 --shape 4096,12345 > $OUT/odd_$b.txt 2>&1; echo "rc=$?" >> $OUT/odd_$b.txt
  grep -E "^(softmax|rmsnorm|layernorm) |rc=" $OUT/odd_$b.txt | cut -c1-110
done
echo "== GEMM --all (d53) at ${SECONDS}s"
timeout $(left 120) $N/tirx bench gemm --all --shape 128,4096,4096 --shape 128,8192,8192 --shape 96,8192,8192 --shape 128,4096,14336 --shape 64,11008,4096 > $OUT/gemm_all.txt 2>&1; echo "rc=$?" >> $OUT/gemm_all.txt
grep -vE "^  " $OUT/gemm_all.txt | cut -c1-120 | tail -30
echo "== FP8 (d53) at ${SECONDS}s"
F="--shape 4096,4096,4096 --shape 8192,8192,8192"
{ echo "## rows fast"; timeout $(left 45) $N/tirx bench gemm --in e4m3 --out bf16 --scales rows --accum fast $F; echo "rc=$?"
  echo "## blocks"; timeout $(left 45) $N/tirx bench gemm --in e4m3 --out bf16 --scales blocks $F; echo "rc=$?"; } > $OUT/fp8.txt 2>&1
grep -vE "^  " $OUT/fp8.txt | cut -c1-120 | tail -16
echo "== done at ${SECONDS}s"
