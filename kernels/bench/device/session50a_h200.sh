#!/bin/bash
# Stop 50's first call, carry ["devbin"] (built as session49e_h200.sh's header says, with
# tirx_new = tirx_pg16 = lead50 826e4a2: main 3ae0207 + helper pyhost's host path, and
# gpu_tests from the same commit). session49e's benches alone on the GPU (the A/B of stop 49's
# unmeasured fp8k and pg16 against tirx_base), then every GPU test: gpu_paged in a second
# process beside the rest (the f64 references are CPU-bound; no test times the GPU).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BUDGET=175 bash kernels/bench/device/session49e_h200.sh 2>&1 | grep -v "^test \|gpu_fp8" | tail -40
echo "== gpu tests at $(date -u)"
timeout 360 ./devbin/gpu_tests gpu_paged > $OUT/gpu_paged.txt 2>&1 &
P=$!
timeout 360 ./devbin/gpu_tests gpu --skip gpu_paged > $OUT/gpu_rest.txt 2>&1; echo "rc=$?" >> $OUT/gpu_rest.txt
wait $P; echo "rc=$?" >> $OUT/gpu_paged.txt
grep -hE "FAILED|panicked|^failures|test result|rc=" $OUT/gpu_rest.txt $OUT/gpu_paged.txt | tail -30
echo "== done at ${SECONDS}s"
