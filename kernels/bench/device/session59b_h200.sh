#!/bin/bash
# Stop 59, call 2 (#32), carry [".device/b59"]: .device/b59/tirx.xz and gpu_tests.xz = `tirx`
# and the GPU tests of branch `bal` (the two-row-block transposed tiles `gemm_sm90_t`
# n80/n112/c2n80/c2n112, `UNTIMED = 1`: the host never chooses them, `--all` times them). In
# order: TN GEMMs with every config, the untimed ones included, at 160 and 224 × 4096 × 4096
# (M exactly two blocks of 80 and 112: the model, guard lifted, predicts `t/n80` 19.6 µs and
# `t/n112` 23.0 µs, `dispatch::transposed`), 240×4096×4096 (where it keeps `t/n128`) and
# 176×6144×4096 (`t/w2n96`); then every config of `gemm_sm90_t` on the GPU against the f64
# reference (`gpu_transposed`, the new configs' first GPU run).
#   BUDGET=420 bash kernels/bench/device/session59b_h200.sh
set -u
BUDGET=${BUDGET:-420}
source kernels/bench/device/lib.sh
unpack .device/b59
T=.device/b59/tirx
B=.device/b59/gpu_tests
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== TN GEMM --all at ${SECONDS}s"
timeout $(left 220) $T bench gemm --all --shape 160,4096,4096 --shape 224,4096,4096 --shape 240,4096,4096 --shape 176,6144,4096 --json $OUT/tn_all.json > $OUT/gemm_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|host|fastest|rc=" $OUT/gemm_all.txt | cut -c1-130 | head -14
# Every config's time at each shape, fastest first (the text shows the fastest only).
python3 kernels/bench/device/all_table.py $OUT/tn_all.json 8 2>&1 | cut -c1-400
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 150) $B gpu_transposed > $OUT/gpu_transposed.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked" $OUT/gpu_transposed.txt | head -12
echo "== done at ${SECONDS}s"
