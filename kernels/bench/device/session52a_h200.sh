#!/bin/bash
# Stop 52, call 1 (#32): stop 51's unmeasured changes, carry ["devbin4"]: tirx.xz and gpu_tests.xz
# from main 73b905d (per-launch driver query fixed; odd rows walked from their aligned column by
# the chunk walkers from 4096 columns; the M = 64 GEMM split choices), tirx_base.xz = 1643e70's
# tirx (before all of them). Then ncu of the long-row kernels, to see why they stop at 66–77 % of
# the copy.
set -u
BUDGET=${BUDGET:-560}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for d in devbin4 devbin5; do (cd $d && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx*; [ -f gpu_tests ] && chmod +x gpu_tests); done
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== host time of a launch"
timeout $(left 30) ./devbin4/gpu_tests a_split_k_plan_queues --nocapture > $OUT/host_time.txt 2>&1; echo "rc=$?" >> $OUT/host_time.txt
grep -E "µs|test result|rc=" $OUT/host_time.txt | head -8
echo "== GPU tests of the row kernels at ${SECONDS}s"
timeout $(left 60) ./devbin4/gpu_tests gpu_rows > $OUT/gpu_rows.txt 2>&1; echo "rc=$?" >> $OUT/gpu_rows.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt | head -12
S="--shape 1024,50257 --shape 2048,20001 --shape 4096,4999 --shape 8192,7171 --shape 4096,65536 --shape 1024,262144 --shape 8192,32768"
for b in tirx_base tirx; do
  echo "== rows, host's choice: $b at ${SECONDS}s"
  timeout $(left 80) ./devbin4/$b bench rows $S > $OUT/rows_$b.txt 2>&1; echo "rc=$?" >> $OUT/rows_$b.txt
  grep -E "^(softmax|rmsnorm|layernorm) |rc=" $OUT/rows_$b.txt
done
echo "== GEMM bf16, host's choice at ${SECONDS}s"
timeout $(left 40) ./devbin4/tirx bench gemm --shape 64,8192,8192 --shape 64,14336,4096 --shape 64,11008,4096 --shape 128,4096,4096 --shape 1,4096,4096 > $OUT/gemm.txt 2>&1; echo "rc=$?" >> $OUT/gemm.txt
grep -vE "^  " $OUT/gemm.txt | tail -9
echo "== the register kernels forced at an odd width at ${SECONDS}s"
timeout $(left 40) ./devbin4/tirx bench rows --shape 4096,4999 --shape 8192,7171 --op softmax --kernel softmax > $OUT/forced_reg.txt 2>&1; echo "rc=$?" >> $OUT/forced_reg.txt
grep -E "^==|^softmax|rc=" $OUT/forced_reg.txt | head -20
L="--shape 4096,65536 --shape 2048,20000 --shape 8192,32768 --op softmax --op rmsnorm --kernel softmax_staged_cluster --kernel rmsnorm_staged_cluster --kernel softmax_staged --kernel rmsnorm_staged"
for b in devbin4/tirx devbin5/tirx; do
  echo "== staged kernels forced: $b at ${SECONDS}s"
  timeout $(left 60) ./$b bench rows $L > $OUT/forced_staged_${b%%/*}.txt 2>&1; echo "rc=$?" >> $OUT/forced_staged_${b%%/*}.txt
  grep -E "^==|^(softmax|rmsnorm) |rc=" $OUT/forced_staged_${b%%/*}.txt
done
for k in softmax_staged_cluster softmax_long; do
  echo "== ncu $k 4096x65536 at ${SECONDS}s"
  timeout $(left 70) ncu -k regex:$k -c 1 --launch-skip 5 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis ./devbin4/tirx bench rows --shape 4096,65536 --op softmax --kernel $k > $OUT/ncu_$k.txt 2>&1; echo "ncu rc=$?"
  grep -E "^  [a-z]|Throughput|Duration|Occupancy|Stall|Warp Cycles|Block Limit|Registers|Shared Memory Config|Waves|Cluster|Eligible|Issued" $OUT/ncu_$k.txt | head -45
done
echo "== done at ${SECONDS}s"
