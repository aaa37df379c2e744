#!/bin/bash
# One device call, carry ["devbin"] (no wheels): the GPU tests of the families whose host
# choice or kernels changed (attention and rows through the one dispatcher, the persistent
# hd128 tile, exp2_poly3, the GEMMs whose setmaxnreg took effect), then the attention sweep
# beside cuDNN/FA2 (torch SDPA; FA4-cute needs the wheels of attention_peers_sweep.sh), then the
# persistent tile forced against the one-CTA-per-tile hd128 tile.
# Build here: cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run, then copy target/release/tirx
#   and target/release/deps/main-<hash> (the newest) to devbin/tirx and devbin/gpu_tests.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/date.txt 2>&1
timeout 300 ./devbin/gpu_tests gpu_attention gpu_rows gpu_exp2_poly gpu:: > $OUT/gpu_tests.txt 2>&1
grep -E "test result|FAILED|panicked" $OUT/gpu_tests.txt | head -20
timeout 150 python3 kernels/bench/attention_peers.py --out $OUT/peers.json > $OUT/peers.txt 2>&1
tail -2 $OUT/peers.txt
timeout 150 ./devbin/tirx bench attention --peers $OUT/peers.json --json $OUT/bench-attention.json > $OUT/ours.txt 2>&1
cat $OUT/ours.txt | tail -45
