#!/bin/bash
# One device call, carry [".whl"]: where a short tirx call from Python spends its host time
# (kernels/bench/host_overhead.py). Build the wheel first, as py_check.sh says.
set -u
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target ~/tirx-site .whl/tirx-*.whl
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout 300 python3 kernels/bench/host_overhead.py 2>&1 | tee $OUT/host-overhead.txt
