#!/bin/bash
# Stop 56, call 4 (#32), carry [".device/t58", ".device/p1"]: t58 = main 287787ea's tirx; p1 =
# the first 44 MiB of the CUTLASS DSL cu13 wheel (peers: ../shared/tools/peer-wheels.sh), left in
# ~/peers for call 5 (session56d_h200.sh), with tirx in ~/d56. Measures the transposed tile's
# NN configs (`gemm_sm90_t/nn_*`, unranked for NN: "run by name only") beside the NN configs the
# model accepts and cuBLASLt, at the skinny NN shapes (stop 56 call 1: 192×4096² NN 0.683).
set -u
BUDGET=${BUDGET:-150}
source kernels/bench/device/lib.sh
mkdir -p ~/peers ~/d56 && cp .device/p1/* ~/peers/
unpack .device/t58 && cp .device/t58/tirx ~/d56/
T=~/d56/tirx
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S="--shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 --shape 96,8192,8192 --shape 192,8192,8192 --shape 192,8192,4096 --shape 80,8192,4096 --shape 128,4096,4096"
echo "== NN, gemm_sm90_t forced, at ${SECONDS}s"
timeout $(left 60) $T bench gemm --layout nn --kernel gemm_sm90_t $S --json $OUT/nn_t.json > $OUT/nn_t.txt 2>&1; echo "rc=$?"
grep -vE "^  " $OUT/nn_t.txt | grep -E "^[0-9]+x|geometric|rc=" | cut -c1-120
echo "== NN, every accepted config, at ${SECONDS}s"
timeout $(left 80) $T bench gemm --layout nn --all $S --json $OUT/nn_all.json > $OUT/nn_all.txt 2>&1; echo "rc=$?"
grep -vE "^  " $OUT/nn_all.txt | grep -E "^[0-9]+x|geometric|rc=" | cut -c1-120
grep -A9 "host-side choice" $OUT/nn_all.txt | head -10
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
