#!/bin/bash
# Stop 56, call 6 (#32), carry [".device/t59"]: tirx of main d3cd9ac2 (the one-wave rule of the
# GEMM cost model, `nn_w2n96`) with the transposed tile ranked for NN too. 1. NN: every
# `gemm_sm90_t` NN config forced (the new `nn_w2n96` first measured) and every config the model
# now accepts, the host's choice against the fastest; 2. TN: the same at stop 56's shapes and at
# shapes the model was not fitted to.
set -u
BUDGET=${BUDGET:-200}
source kernels/bench/device/lib.sh
unpack .device/t59
T=.device/t59/tirx
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S="--shape 160,4096,4096 --shape 192,4096,4096 --shape 224,4096,4096 --shape 96,8192,8192 --shape 192,8192,8192 --shape 192,8192,4096 --shape 80,8192,4096 --shape 128,4096,4096"
U="--shape 176,6144,4096 --shape 208,8192,2048 --shape 112,4096,8192 --shape 240,5120,5120 --shape 72,14336,4096"
echo "== NN, gemm_sm90_t forced, at ${SECONDS}s"
timeout $(left 40) $T bench gemm --layout nn --kernel gemm_sm90_t $S --json $OUT/nn_t.json > $OUT/nn_t.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]+x|geometric" $OUT/nn_t.txt | cut -c1-120
echo "== NN --all at ${SECONDS}s"
timeout $(left 60) $T bench gemm --layout nn --all $S $U --json $OUT/nn_all.json > $OUT/nn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]+x|geometric" $OUT/nn_all.txt | cut -c1-120
grep -A14 "host-side choice" $OUT/nn_all.txt | head -15
echo "== TN --all at ${SECONDS}s"
timeout $(left 70) $T bench gemm --all $S $U --json $OUT/tn_all.json > $OUT/tn_all.txt 2>&1; echo "rc=$?"
grep -E "^[0-9]+x|geometric" $OUT/tn_all.txt | cut -c1-120
grep -A14 "host-side choice" $OUT/tn_all.txt | head -15
rm -f $OUT/*.svg
echo "== done at ${SECONDS}s"
