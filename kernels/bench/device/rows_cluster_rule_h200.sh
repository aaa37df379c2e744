#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (binaries as tests_fp8_h200.sh says): #32's
# rule that a row split over a cluster is for fewer rows than SMs — torch, the host's choice
# and the candidates it now ranks first or second, forced, in one command:
#  1. torch at the long-row shapes and two with fewer rows than SMs;
#  2. the host's choice there (`tirx bench rows`);
#  3. the one-CTA long kernels and the cluster kernels forced at the shapes the rule changed;
#  0. first, the GPU tests of attention (its shared pieces), the row kernels and the runtime.
set -u
BUDGET=${BUDGET:-330}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >> $OUT/date.txt 2>&1
cat $OUT/date.txt
echo "== 0. GPU tests: attention (shared pieces), the row kernels, TMA copy, the host choice (the runtime under cudarc fallback-dynamic-loading)"
timeout $(left 100) ./devbin/gpu_tests gpu_attention gpu_rows gpu::tma_copy gpu::the_host_side_choice gpu::a_blackwell > $OUT/gpu_rows.txt 2>&1
echo "rc=$?" >> $OUT/gpu_rows.txt; grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt
S="--shape 8192,32768 --shape 4096,65536 --shape 1024,262144 --shape 8192,16384 --shape 64,262144 --shape 100,65536"
echo "== 1. torch"
timeout $(left 70) python3 kernels/bench/rows_peers.py $S --peer torch --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1
echo "rc=$?" >> $OUT/peers.txt; tail -2 $OUT/peers.txt
echo "== 2. the host's choice"
timeout $(left 60) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $S --json $OUT/bench-rows.json > $OUT/ours.txt 2>&1
echo "rc=$?" >> $OUT/ours.txt; grep -E "x[0-9]+ |geometric|minimum|rc=" $OUT/ours.txt
echo "== 3. forced"
F="--shape 4096,65536 --shape 1024,262144 --shape 8192,16384 --shape 64,262144"
timeout $(left 90) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $F --kernel softmax_long --kernel rmsnorm_long --kernel layernorm --kernel rmsnorm --kernel softmax --json $OUT/forced.json > $OUT/forced.txt 2>&1
echo "rc=$?" >> $OUT/forced.txt; grep -E "^==|x[0-9]+ |rc=" $OUT/forced.txt | grep -v "minimum" | head -70
timeout $(left 50) ./devbin/tirx bench rows --peers $OUT/rows-peers.json --shape 4096,65536 --shape 64,262144 --kernel softmax_staged_cluster --kernel rmsnorm_staged_cluster --json $OUT/forced-cluster.json > $OUT/forced-cluster.txt 2>&1
echo "rc=$?" >> $OUT/forced-cluster.txt; grep -E "^==|x[0-9]+ |rc=" $OUT/forced-cluster.txt | grep -v minimum | head -40
