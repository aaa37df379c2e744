#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: the FP8 quantisers of issue #29 on the H200.
#  1. the GPU tests (tests/gpu_quant.rs: quant_rowwise's every config and quant_block's on
#     tails, zero/tiny/huge rows, q and s poisoned, bit for bit against the CPU reference);
#  2. `tirx bench quant`: each quantiser's TB/s and its fraction of the device copy's (the
#     issue asks ≥ 90%), every output checked first;
#  3. torch's eager and compiled quantisation on the same shapes (kernels/bench/quant_peers.py).
# Build here (this machine has no GPU):
#   cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run
#   mkdir -p devbin && cp target/release/tirx devbin/tirx &&
#   cp "$(ls -t target/release/deps/main-* | grep -v '\.d$' | head -1)" devbin/gpu_tests
# Command (device tool): bash kernels/bench/device/quant_h200.sh
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> $OUT/date.txt 2>&1
cat $OUT/date.txt
echo "== 1. GPU tests"
timeout 120 ./devbin/gpu_tests gpu_quant --test-threads 1 > $OUT/gpu_quant.txt 2>&1
echo "rc=$?" >> $OUT/gpu_quant.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_quant.txt | head -20
SHAPES="--shape 8192,7168 --shape 16384,4096 --shape 4096,16384 --shape 16384,1024"
echo "== 2. tirx bench quant"
timeout 240 ./devbin/tirx bench quant $SHAPES > $OUT/bench_quant.txt 2>&1
echo "rc=$?" >> $OUT/bench_quant.txt
cat $OUT/bench_quant.txt | tail -30
echo "== 3. torch"
timeout 180 python3 kernels/bench/quant_peers.py $SHAPES --out $OUT/quant_peers.json > $OUT/quant_peers.txt 2>&1
echo "rc=$?" >> $OUT/quant_peers.txt
cat $OUT/quant_peers.txt | tail -30
