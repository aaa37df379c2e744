#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (tirx.gz, gpu_tests.gz built from the commit
# to land): every GPU test (modules gpu*), then the row kernels beside torch on issue #32's
# shapes (torch only as peer: no wheels carried), via kernels/bench/device/rows_h200.sh's
# steps 1–2.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && gunzip -f *.gz; chmod +x *)
date -u | tee $OUT/date.txt; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $OUT/date.txt
timeout 330 ./devbin/gpu_tests gpu --test-threads 1 > $OUT/gpu_tests.txt 2>&1; echo "rc=$?" >> $OUT/gpu_tests.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_tests.txt | head -30
PS=""; for s in 4096,5000 4096,65536 8192,32768 1024,262144 16384,1000; do PS="$PS --shape $s"; done
timeout 120 python3 kernels/bench/rows_peers.py $PS --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1; echo "rc=$?" >> $OUT/peers.txt; tail -3 $OUT/peers.txt
timeout 110 ./devbin/tirx bench rows --peers $OUT/rows-peers.json $PS --json $OUT/bench-rows.json > $OUT/ours.txt 2>&1; echo "rc=$?" >> $OUT/ours.txt; tail -32 $OUT/ours.txt
