#!/bin/bash
# Device calls (nvidia-h200), carry ["devbin"], for the ping-pong FP8 GEMMs of branch `pp` (#29).
#   bash kernels/bench/device/fp8_pingpong_h200.sh        the row-wise FP8 bench: fp8.rs's
#       cooperative configs and fp8_pingpong.rs's ping-pong ones, every config timed and listed
#       ("every config, TFLOP/s"), on the large shapes; then torch._scaled_mm row-wise.
#   bash kernels/bench/device/fp8_pingpong_h200.sh tests  the FP8 GPU tests (tests/gpu_fp8.rs:
#       every config of both schedules at odd shapes against the f64 reference).
#   bash kernels/bench/device/fp8_pingpong_h200.sh sanitize  compute-sanitizer memcheck of
#       both ping-pong kernels (default, m128) at 2048x3000x1024, the shape of the launch
#       failure fixed by the K loops' turns (several tiles per warpgroup, K = 8 steps).
# devbin/tirx.gz: `cargo build --release -p tirx-kernels --bin tirx`; devbin/gpu_tests.gz:
# `cargo test --release -p tirx-tests --features gpu --no-run` (the newest deps/main-*).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz 2>/dev/null; chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${1:-}" = sanitize ]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for kern in gemm_sm90_fp8_pingpong gemm_sm90_fp8_rowwise_pingpong; do
    for cfg in default m128; do
      f=$OUT/san_${kern}_$cfg.txt
      timeout 120 $CS --tool memcheck ./devbin/tirx run $kern --config $cfg --m 2048 --n 3000 --k 1024 > $f 2>&1; echo "rc=$?" >> $f
      echo "== $kern $cfg"; grep -E "ERROR SUMMARY|Error|error|rc=|max|ok|FAIL" $f | head -6
    done
  done
  exit 0
fi
if [ "${1:-}" = tests ]; then
  timeout 500 ./devbin/gpu_tests gpu_fp8 > $OUT/gpu_fp8.txt 2>&1; echo "rc=$?" >> $OUT/gpu_fp8.txt
  grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_fp8.txt | head -30
  exit 0
fi
timeout 400 ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --shape 8192,8192,8192 --shape 8192,28672,4096 --shape 8192,4096,14336 --shape 4096,4096,4096 > $OUT/ours.txt 2>&1; echo "rc=$?" >> $OUT/ours.txt
grep -vE "^\s*$" $OUT/ours.txt | tail -30
timeout 150 python3 kernels/bench/scaled_mm_rowwise.py > $OUT/torch.txt 2>&1; cat $OUT/torch.txt
