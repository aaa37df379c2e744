#!/bin/bash
# Stop 59, call 4 (#29, #32), carry [".device/f59"]: `tirx` and GPU tests of land59 + fp8tma
# + bal3 (branch land59f; fp8tma's `tmasc` measured slower and did not land: see
# docs/perf/h100-2026-12-07-stop59.md §4). NN at the three stop-56 shapes whose choice moved to `nn_n80`/`nn_n112` untimed
# there (every config, JSON kept), then session59c (the block FP8 configs with `tmasc`, the
# scales loaded by TMA, at four shapes; `gpu_fp8::the_block_scaled`).
#   BUDGET=420 bash kernels/bench/device/session59f_h200.sh
set -u
BUDGET=${BUDGET:-420}
source kernels/bench/device/lib.sh
unpack .device/f59
T=$PWD/.device/f59/tirx
echo "== NN --all at ${SECONDS}s"
timeout $(left 40) $T bench gemm --all --layout nn --shape 80,8192,4096 --shape 112,4096,8192 --shape 72,14336,4096 --json $OUT/nn_all.json > $OUT/nn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]|->|worst|geometric|WRONG|failed" $OUT/nn_all.txt | cut -c1-120
python3 kernels/bench/device/all_table.py $OUT/nn_all.json 8 2>&1 | cut -c1-400
BUDGET=$((BUDGET - SECONDS)) bash kernels/bench/device/session59c_h200.sh
