#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: the transposed decode split-K plan
# (`gemm_sm90_splitk_t` + `splitk_reduce_t`, issue #32, 2026-12-05). Build here, in release:
#   cargo build --release -p tirx-kernels --bin tirx          -> devbin/tirx
#   cargo test --release -p tirx-tests --features gpu --no-run -> newest
#     target/release/deps/main-<hash> as devbin/gpu_tests
# (gzip them if the carry is over 64 MiB; this script gunzips any *.gz.)
set -u
BUDGET=${BUDGET:-420}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && (gunzip -f *.gz 2>/dev/null; true) && chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== 1. GPU tests: the transposed plan, and split-K's (its choices moved)"
timeout $(left 150) ./devbin/gpu_tests gpu_gemv gpu_splitk > $OUT/gpu_tests.txt 2>&1
echo "rc=$?" >> $OUT/gpu_tests.txt
grep -E "^test |test result|FAILED|panicked" $OUT/gpu_tests.txt | head -30
echo "== 2. host's choice at the decode shapes, beside cuBLASLt"
S=""; for s in 1,4096,4096 16,4096,4096 1,8192,8192 16,14336,4096 64,64,4104 8,4096,14336 1,14336,4096; do S="$S --shape $s"; done
timeout $(left 100) ./devbin/tirx bench gemm $S > $OUT/decode.txt 2>&1; echo "rc=$?" >> $OUT/decode.txt
tail -14 $OUT/decode.txt
echo "== 3. every transposed and split-K config competing at the same shapes"
timeout $(left 120) ./devbin/tirx bench gemm --kernel gemm_sm90_splitk_t --kernel gemm_sm90_splitk $S > $OUT/configs.txt 2>&1; echo "rc=$?" >> $OUT/configs.txt
tail -14 $OUT/configs.txt
echo "== 4. fused bias-GELU and scaled f16 -> f32 at decode shapes (the transposing reduces)"
timeout $(left 60) ./devbin/tirx bench gemm --epilogue bias-gelu --shape 1,4096,4096 --shape 16,4096,4096 --shape 1,8192,8192 > $OUT/fused.txt 2>&1; echo "rc=$?" >> $OUT/fused.txt
tail -6 $OUT/fused.txt
timeout $(left 60) ./devbin/tirx bench gemm --in f16 --out f32 --alpha 1.5 --beta -0.5 --shape 1,8192,8192 --shape 16,4096,4096 > $OUT/scaled.txt 2>&1; echo "rc=$?" >> $OUT/scaled.txt
tail -6 $OUT/scaled.txt
