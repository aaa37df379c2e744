#!/bin/bash
# One device call, carry ["devbin"]: every GPU test (modules gpu*), after a session whose
# changes were mostly sm_100a and the emulator — to show the sm_90a kernels and the runtime
# (new FP8 element types, dispatcher changes) still run. Build here:
#   cargo test --release -p tirx-tests --features gpu --no-run, copy the newest
#   target/release/deps/main-<hash> to devbin/gpu_tests.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/date.txt 2>&1
timeout 500 ./devbin/gpu_tests gpu > $OUT/gpu_tests.txt 2>&1
echo "rc=$?" >> $OUT/gpu_tests.txt
grep -E "^test |test result|FAILED|panicked" $OUT/gpu_tests.txt | head -60
