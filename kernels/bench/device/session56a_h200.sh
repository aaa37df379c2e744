#!/bin/bash
# Stop 56, call 2 (#32), carry [".device/e57" ".device/e57b"]: e57 = main 75f68001's tirx and
# gpu_tests, e57b = tirx with the re-ranked rows (cluster kernels past 32768 columns at any row
# count; `o52k`/`o100k` after the walkers). Call 1 (session55b) ran the GPU tests in one
# process: an illegal instruction made the context sticky, failing `gpu_transposed` and every
# `*_staged_odd` case of `every_row_kernel_config` past 1x1. 1. each in a process of its own
# (`tirx run` per shape), compute-sanitizer on a failing one; 2. rows: the host's new choice at
# aligned long rows, LayerNorm's cluster kernels forced.
set -u
BUDGET=${BUDGET:-300}
source kernels/bench/device/lib.sh
unpack .device/e57 .device/e57b
B=.device/e57
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu_transposed alone at ${SECONDS}s"
timeout $(left 90) $B/gpu_tests gpu_transposed > $OUT/gpu_t.txt 2>&1; echo "rc=$?" >> $OUT/gpu_t.txt
grep -E "^test |test result|panicked|rc=" $OUT/gpu_t.txt | head -6
echo "== staged_odd, a process a shape, at ${SECONDS}s"
for k in softmax_staged_odd rmsnorm_staged_odd; do
  for s in "1 1" "3 1" "2 1" "1 7" "3 7" "3 9" "37 100" "3 1000" "37 8192" "9 16385"; do
    set -- $s
    r=$(timeout 20 $B/tirx run $k --config o24k --m $1 --n $2 2>&1); c=$?; echo "$k $1x$2 rc=$c $(echo "$r" | tail -1 | cut -c1-110)"
  done
done | tee $OUT/odd_small.txt
echo "== sanitizer at ${SECONDS}s"
timeout $(left 60) compute-sanitizer --tool memcheck $B/tirx run softmax_staged_odd --config o24k --m 3 --n 1 > $OUT/san.txt 2>&1
head -30 $OUT/san.txt | cut -c1-160
echo "== rows, new choice, at ${SECONDS}s"
R="--shape 4096,65536 --shape 2048,131072 --shape 1024,262144 --shape 8192,32768 --shape 8192,40000 --shape 1024,50257"
timeout $(left 40) .device/e57b/tirx bench rows $R > $OUT/rows_new.txt 2>&1; echo "rc=$?" >> $OUT/rows_new.txt
grep -E "x[0-9]+ |rc=" $OUT/rows_new.txt | grep -v minimum | cut -c1-110
echo "== LayerNorm cluster forced at ${SECONDS}s"
L="--shape 4096,65536 --shape 2048,131072 --shape 1024,262144 --shape 8192,32768"
timeout $(left 80) $B/tirx bench rows $L --kernel layernorm_staged_cluster > $OUT/ln_cluster.txt 2>&1; echo "rc=$?" >> $OUT/ln_cluster.txt
grep -E "^==|x[0-9]+ |rc=" $OUT/ln_cluster.txt | grep -v minimum | cut -c1-110
rm -f $OUT/*.svg $OUT/*.json
echo "== done at ${SECONDS}s"
