#!/bin/bash
# One short device call (nvidia-h200), carry ["devbin", ".whl"]: the host entry points with
# remembered choices (dispatch::remember) — the fused-epilogue bench, which times the host entry
# point gemm_bias_act, at the decode shapes where it was host-bound, and the Python host path.
# Build as decode_h200.sh says (devbin/tirx.gz, .whl/).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz && chmod +x * && cd ..
date -u
timeout 50 ./devbin/tirx bench gemm --epilogue bias-gelu --shape 127,8192,8192 --shape 16,4096,4096 --shape 2048,4096,4096 > $OUT/fused.txt 2>&1; echo "rc=$?" >> $OUT/fused.txt
tail -9 $OUT/fused.txt
python3 -m pip install -q --no-index --no-deps --target ~/tirx-site .whl/tirx-*.whl
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout 40 python3 kernels/bench/host_overhead.py > $OUT/host-overhead.txt 2>&1
head -20 $OUT/host-overhead.txt
