#!/bin/bash
# Stop 51, after call 3 found every host-chosen launch of all51 ~0.25 ms slower (the cost
# model's `Device::of` asked the driver for the memory clock at every launch). carry
# ["devbin4"]: tirx.xz and gpu_tests.xz from all51 with the fix (the clock and bus width read
# once when the runtime opens), tirx_base.xz = land51's tirx. The host-time test first, then the
# host's choice base vs new at odd and aligned widths and at the GEMM shapes whose choice
# moved, then the long-row kernels forced at odd widths (oddrows' own effect).
set -u
BUDGET=${BUDGET:-300}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin4 && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx tirx_base gpu_tests)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== host time of a launch"
timeout $(left 40) ./devbin4/gpu_tests a_split_k_plan_queues --nocapture > $OUT/host_time.txt 2>&1; echo "rc=$?" >> $OUT/host_time.txt
grep -E "µs|test result|rc=" $OUT/host_time.txt | head -8
G="--shape 64,8192,8192 --shape 64,14336,4096 --shape 64,11008,4096 --shape 128,4096,4096 --shape 1,4096,4096"
S="--shape 1024,50257 --shape 2048,20001 --shape 4096,4999 --shape 8192,7171 --shape 4096,65536"
for b in tirx_base tirx; do
  echo "== GEMM bf16, host's choice: $b at ${SECONDS}s"
  timeout $(left 40) ./devbin4/$b bench gemm $G > $OUT/gemm_$b.txt 2>&1; echo "rc=$?" >> $OUT/gemm_$b.txt
  grep -vE "^  " $OUT/gemm_$b.txt | grep -E "^[0-9]|geometric|rc=" | tail -8
  echo "== rows, host's choice: $b at ${SECONDS}s"
  timeout $(left 60) ./devbin4/$b bench rows $S > $OUT/rows_$b.txt 2>&1; echo "rc=$?" >> $OUT/rows_$b.txt
  grep -vE "^  " $OUT/rows_$b.txt | grep -E "^(softmax|rmsnorm|layernorm)|rc=" | tail -16
done
for b in tirx_base tirx; do
  echo "== long rows forced at odd widths: $b at ${SECONDS}s"
  timeout $(left 60) ./devbin4/$b bench rows --shape 1024,50257 --shape 2048,20001 --shape 4096,4999 --shape 8192,7171 --kernel softmax_long --kernel rmsnorm_long --kernel layernorm_long > $OUT/forced_odd_$b.txt 2>&1; echo "rc=$?" >> $OUT/forced_odd_$b.txt
  grep -E "^(softmax|rmsnorm|layernorm)|rc=" $OUT/forced_odd_$b.txt | tail -24
done
echo "== done at ${SECONDS}s"
