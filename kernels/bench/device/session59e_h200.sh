#!/bin/bash
# Stop 59, call 3 (#32), carry [".device/n59"]: `tirx` of land59 + bal2 (TN n80/n112 ranked,
# the c2 cluster configs gone, NN `nn_n80`/`nn_n112` untimed, timed by `--all`). NN at
# M = 144…224 × 4096² (the model, guard lifted, predicts `nn_n80` at 144/160 and `nn_n112` at
# 208/224); TN at the two stop-56 shapes whose choice moved to a tile no run timed there
# (112×4096×8192 → `t/n112`, 72×14336×4096 → `t/n80`, the latter a likely miss).
#   BUDGET=150 bash kernels/bench/device/session59e_h200.sh
set -u
BUDGET=${BUDGET:-150}
source kernels/bench/device/lib.sh
unpack .device/n59
T=.device/n59/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
table() {
python3 kernels/bench/device/all_table.py $1 10 2>&1 | cut -c1-460
}
echo "== NN --all at ${SECONDS}s"
timeout $(left 70) $T bench gemm --all --layout nn --shape 144,4096,4096 --shape 160,4096,4096 --shape 192,4096,4096 --shape 208,4096,4096 --shape 224,4096,4096 --json $OUT/nn_all.json > $OUT/nn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|->|worst|geometric|WRONG|failed" $OUT/nn_all.txt | cut -c1-120; table $OUT/nn_all.json
echo "== TN --all at ${SECONDS}s"
timeout $(left 60) $T bench gemm --all --shape 112,4096,8192 --shape 72,14336,4096 --shape 240,4096,4096 --json $OUT/tn_all.json > $OUT/tn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|->|worst|geometric|WRONG|failed" $OUT/tn_all.txt | cut -c1-120; table $OUT/tn_all.json
echo "== done at ${SECONDS}s"
