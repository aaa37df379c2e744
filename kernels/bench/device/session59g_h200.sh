#!/bin/bash
# Stop 59, call 5 (#32), carry [".device/o59"]: `tirx` of land59 3409968b (helper odd8's
# `gemm_sm90_t` n72/n88/n104 and nn_n72/nn_n88/nn_n104, untimed, timed by `--all`). TN and NN
# at M = 144, 176, 208 × 4096² (the model, guard lifted, predicts the odd-block tile at each:
# two whole row blocks of 72, 88, 104 rows), every config's time kept.
#   BUDGET=100 bash kernels/bench/device/session59g_h200.sh
set -u
BUDGET=${BUDGET:-100}
source kernels/bench/device/lib.sh
unpack .device/o59
T=$PWD/.device/o59/tirx
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for l in tn nn; do
  echo "== $l --all at ${SECONDS}s"
  timeout $(left 45) $T bench gemm --all --layout $l --shape 144,4096,4096 --shape 176,4096,4096 --shape 208,4096,4096 --json $OUT/${l}_all.json > $OUT/${l}_all.txt 2>&1; echo "rc=$?"
  grep -E "^[0-9]|->|worst|geometric|WRONG|failed" $OUT/${l}_all.txt | cut -c1-120
  python3 kernels/bench/device/all_table.py $OUT/${l}_all.json 8 2>&1 | cut -c1-400
done
echo "== done at ${SECONDS}s"
