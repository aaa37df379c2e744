#!/bin/bash
# Stop 52, call 2 (#32), carry ["devbin4", "devbin5"] : devbin4/tirx =
# main 73b905d; devbin5/tirx and gpu_tests = branch long 6eddee4 (a barrier per chunk in the staged kernels,
# the long walkers' t1024/c16k configs, `--kernel NAME/CONFIG`, merged with oddreg: the
# odd-width register kernels softmax_odd/rmsnorm_odd/layernorm_odd and their host rule). The host's choice at odd and long rows, base vs new, then
# every long-row candidate forced side by side, then ncu stall reasons of the staged cluster
# kernel and the walkers. At most 8 files come back: each step writes one.
set -u
BUDGET=${BUDGET:-540}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for d in devbin4 devbin5 devbin6; do [ -d $d ] && (cd $d && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx* ; [ -f gpu_tests ] && chmod +x gpu_tests); done
rm -f devbin4/gpu_tests devbin4/tirx_base
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== GPU tests of the row kernels (devbin5) at ${SECONDS}s"
timeout $(left 90) ./devbin5/gpu_tests gpu_rows > $OUT/gpu_rows.txt 2>&1; echo "rc=$?" >> $OUT/gpu_rows.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt | head -12
S="--shape 1024,50257 --shape 2048,20001 --shape 4096,4999 --shape 8192,7171 --shape 16384,1001 --shape 8192,3001 --shape 4096,65536 --shape 1024,262144 --shape 8192,32768 --shape 2048,20000"
BINS="devbin4 devbin5"
for b in $BINS; do
  echo "== rows, host's choice: $b at ${SECONDS}s"
  timeout $(left 75) ./$b/tirx bench rows $S > $OUT/rows_$b.txt 2>&1; echo "rc=$?" >> $OUT/rows_$b.txt
  grep -E "^(softmax|rmsnorm|layernorm) |rc=" $OUT/rows_$b.txt
done
echo "== long rows, every candidate forced (devbin5) at ${SECONDS}s"
K="--kernel softmax_long --kernel rmsnorm_long --kernel softmax_staged_cluster/x2 --kernel softmax_staged_cluster/h2 --kernel softmax_staged_cluster/x8 --kernel rmsnorm_staged_cluster/x2 --kernel rmsnorm_staged_cluster/h2 --kernel softmax_staged/s32k --kernel rmsnorm_staged/s32k"
timeout $(left 150) ./devbin5/tirx bench rows --shape 4096,65536 --shape 8192,32768 --shape 1024,262144 --shape 2048,20000 $K > $OUT/forced_long.txt 2>&1; echo "rc=$?" >> $OUT/forced_long.txt
grep -E "^==|^(softmax|rmsnorm) |rc=" $OUT/forced_long.txt
M="smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct"
( for k in softmax_staged_cluster/x2 softmax_long/long softmax_long/t1024 softmax_long/c16k; do
  echo "== ncu $k 4096x65536"
  timeout $(left 45) ncu -k regex:${k%%/*} -c 1 --launch-skip 5 --metrics $M ./devbin5/tirx bench rows --shape 4096,65536 --op softmax --kernel $k 2>&1 | grep -E "^  [a-z]|smsp__|dram__|gpu__|sm__|lts__"
done ) > $OUT/ncu.txt 2>&1
cat $OUT/ncu.txt | sed -E 's/ +/ /g' | head -100
echo "== done at ${SECONDS}s"
