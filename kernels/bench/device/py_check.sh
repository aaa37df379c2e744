#!/bin/bash
# One device call, carry [".whl"]: the `tirx` Python package on the H200 against PyTorch
# (kernels/bench/py_check.py: every function vs torch's op, a benchmark beside it, one
# transformer block end to end). The device cannot build: make the wheel here first,
#   target/py-venv/bin/maturin build --release -m tirx-py/Cargo.toml -o .whl
# (`cargo xtask test-python` creates target/py-venv), then run this with carry [".whl"].
# `pip install` of the wheel is the whole setup: no nvcc, no CUDA toolkit.
set -u
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/date.txt 2>&1
python3 -m pip install -q --no-index --no-deps --target ~/tirx-site .whl/tirx-*.whl > $OUT/pip.txt 2>&1
echo "pip rc=$?" >> $OUT/pip.txt
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import torch, tirx; print(torch.__version__, tirx.device(0))" >> $OUT/date.txt 2>&1
timeout 480 python3 kernels/bench/py_check.py --out $OUT > $OUT/py-check.txt 2>&1
echo "rc=$?" >> $OUT/py-check.txt
cat $OUT/date.txt $OUT/pip.txt
grep -E "^(FAIL|-- checks|block|  error|  time|gemm|softmax|rms_norm|layer_norm|silu_mul|attention|all checks|failed|rc=|Traceback|torch )" $OUT/py-check.txt | head -120
