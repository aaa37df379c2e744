#!/bin/bash
# Stop 59, call 3 (#32), carry [".device/b59"]: `tirx` and the GPU tests of land59 (main +
# branch `bal`: `gemm_sm90_t` n80/n112/c2n80/c2n112, `UNTIMED = 1`, timed by `--all`). TN
# at M = 144…240 × 4096² and 176×6144×4096, 80×8192×4096 (the model, guard lifted, predicts
# `t/n80` at 160 and `t/n112` at 224), NN at 160/208/224 × 4096², every config's time kept
# (the JSON, printed fastest first); then `gpu_transposed` (every config, the new ones'
# first GPU run).
#   BUDGET=470 bash kernels/bench/device/session59d_h200.sh
set -u
BUDGET=${BUDGET:-470}
source kernels/bench/device/lib.sh
unpack .device/b59
T=.device/b59/tirx
B=.device/b59/gpu_tests
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
table() {
python3 kernels/bench/device/all_table.py $1 10 2>&1 | cut -c1-460
}
echo "== TN --all at ${SECONDS}s"
timeout $(left 120) $T bench gemm --all --shape 144,4096,4096 --shape 160,4096,4096 --shape 176,4096,4096 --shape 192,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 --shape 240,4096,4096 --shape 176,6144,4096 --shape 80,8192,4096 --json $OUT/tn_all.json > $OUT/tn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|->|worst|geometric" $OUT/tn_all.txt | cut -c1-120; table $OUT/tn_all.json
echo "== NN --all at ${SECONDS}s"
timeout $(left 80) $T bench gemm --all --layout nn --shape 160,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 --json $OUT/nn_all.json > $OUT/nn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|->|worst|geometric" $OUT/nn_all.txt | cut -c1-120; table $OUT/nn_all.json
echo "== gpu_transposed at ${SECONDS}s"
timeout $(left 260) $B gpu_transposed > $OUT/gpu_transposed.txt 2>&1; echo "rc=$?"
grep -E "^test |test result|panicked" $OUT/gpu_transposed.txt | head -12
echo "== done at ${SECONDS}s"
