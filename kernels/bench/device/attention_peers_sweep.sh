#!/bin/bash
# The attention sweep beside the peers, in one device command (docs/perf/attention-h200.md).
# Build here first:  cargo build --release -p tirx-kernels --bin tirx && mkdir -p devbin &&
#   cp target/release/tirx devbin/ && strip devbin/tirx   (devbin/ and .peers/ in .git/info/exclude)
# Wheels: ../shared/tools/peer-wheels.sh .peers, then split so each call carries < 64 MiB
# with the ~15 MB tree: .peers/a = cu13.part00, .peers/b = cu13.part01, .peers/c = every other
# wheel but liger's. Three back-to-back device calls (the machine keeps ~ for 30 s):
#   1. carry [".peers/a"]:           mkdir -p ~/peers && cp .peers/a/* ~/peers/
#   2. carry [".peers/b"]:           cp .peers/b/* ~/peers/
#   3. carry ["devbin", ".peers/c"]: bash kernels/bench/device/attention_peers_sweep.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ROOT=$(pwd)
cp .peers/c/* ~/peers/ && cd ~/peers && cat cu13.part* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm cu13.part* && python3 -m pip install -q --no-index --no-deps --no-compile --target ~/site ~/peers/*.whl > $OUT/pip.txt 2>&1
cd "$ROOT"
export PYTHONPATH=~/site:~/site/nvidia_cutlass_dsl/dsl_packages
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt 2>&1
python3 -c "import torch; print(torch.__version__, torch.backends.cudnn.version())" >> $OUT/gpu.txt 2>&1
python3 kernels/bench/attention_peers.py --out $OUT/attention-peers.json > $OUT/peers.txt 2>&1
tail -3 $OUT/peers.txt
./devbin/tirx bench attention --peers $OUT/attention-peers.json --json $OUT/bench-attention.json > $OUT/ours.txt 2>&1
cat $OUT/ours.txt
