#!/bin/bash
# Stop 60, call 1 (as it ran, after seven failed starts), carry [".device/o60", ".device/mn"]:
# session60a (the odd-block tiles timed, ncu at 192×4096²) then fp8_block_mn_h200.sh (branch mn:
# the MN-major block-scaled FP8 GEMM's first GPU run and bench; binaries of mn 4054440e).
#   bash kernels/bench/device/session60b_h200.sh
BUDGET=250 bash kernels/bench/device/session60a_h200.sh
BUDGET=250 bash kernels/bench/device/fp8_block_mn_h200.sh
