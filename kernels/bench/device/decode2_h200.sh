#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"]: split-K with its bytes in flight modelled
# (#32, 2026-12-04): the split-K GPU tests (every config incl. n256), the decode / skinny sweep
# beside cuBLASLt, the scaled and fused forms at decode shapes, and the bench's default sweep
# (the square and LLM shapes must not lose).
# Build here: cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run; gzip target/release/tirx and the
#   newest target/release/deps/main-<hash> (as gpu_tests) into devbin/.
set -u
BUDGET=${BUDGET:-420}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz && chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== 1. gpu_splitk"
timeout $(left 90) ./devbin/gpu_tests gpu_splitk 2>&1 | grep -E "^test |test result|panicked|FAILED" | tee $OUT/gpu_splitk.txt
echo "== 2. decode / skinny GEMMs vs cuBLASLt"
S=""
for m in 1 8 16 64 128 256; do
  for nk in 4096,4096 14336,4096 4096,14336 8192,8192; do S="$S --shape $m,$nk"; done
done
S="$S --shape 64,64,4104 --shape 127,8192,8192 --shape 4096,16,4096 --shape 5120,5120,5120"
timeout $(left 150) ./devbin/tirx bench gemm $S --json $OUT/decode.json > $OUT/decode.txt 2>&1; echo "rc=$?" >> $OUT/decode.txt
tail -45 $OUT/decode.txt
timeout $(left 60) ./devbin/tirx bench gemm --in f16 --out f32 --alpha 1.5 --beta -0.5 --shape 127,8192,8192 --shape 16,4096,4096 --shape 1,8192,8192 > $OUT/scaled.txt 2>&1; echo "rc=$?" >> $OUT/scaled.txt
tail -8 $OUT/scaled.txt
timeout $(left 60) ./devbin/tirx bench gemm --epilogue bias-gelu --shape 127,8192,8192 --shape 16,4096,4096 --shape 1,8192,8192 > $OUT/fused.txt 2>&1; echo "rc=$?" >> $OUT/fused.txt
tail -8 $OUT/fused.txt
echo "== 3. the default sweep"
timeout $(left 120) ./devbin/tirx bench gemm --json $OUT/sweep.json > $OUT/sweep.txt 2>&1; echo "rc=$?" >> $OUT/sweep.txt
tail -40 $OUT/sweep.txt
