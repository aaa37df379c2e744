#!/bin/bash
# One device call (nvidia-h200), carry ["devbin", ".whl"]: the session's GPU work of
# 2026-12-03 (evening), in one command so every ratio is measured side by side.
#  1. GPU tests of split-K (tests/gpu_splitk.rs: decode shapes, random data, D poisoned).
#  2. `tirx bench gemm` beside cuBLASLt on decode / skinny shapes (#32): M in 1..256 against
#     the LLM N×K pairs, 64×64×4104, and the scaled and fused forms at M = 127.
#  3. The Python host path per call (#34): kernels/bench/host_overhead.py, then py_check --quick.
#  4. Row-wise FP8: tirx beside torch._scaled_mm (#29).
# Build here: cargo build --release -p tirx-kernels --bin tirx &&
#   cargo test --release -p tirx-tests --features gpu --no-run; copy target/release/tirx and the
#   newest target/release/deps/main-<hash> to devbin/ (gzip both: the carry limit is 64 MiB);
#   maturin build --release -m tirx-py/Cargo.toml -o .whl.
set -u
# One budget for the whole call: each step's timeout is the smaller of its own and what is left.
BUDGET=${BUDGET:-320}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz && chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== 1. gpu_splitk"
timeout $(left 90) ./devbin/gpu_tests gpu_splitk 2>&1 | grep -E "^test |test result|panicked|FAILED" | tee $OUT/gpu_splitk.txt
echo "== 2. decode / skinny GEMMs vs cuBLASLt"
S=""
for m in 1 16 64 128 256; do
  for nk in 4096,4096 14336,4096 4096,14336 8192,8192; do S="$S --shape $m,$nk"; done
done
S="$S --shape 64,64,4104 --shape 127,8192,8192 --shape 4096,16,4096 --shape 5120,5120,5120"
timeout $(left 150) ./devbin/tirx bench gemm $S --json $OUT/decode.json > $OUT/decode.txt 2>&1; echo "rc=$?" >> $OUT/decode.txt
cat $OUT/decode.txt | tail -45
timeout $(left 60) ./devbin/tirx bench gemm --in f16 --out f32 --alpha 1.5 --beta -0.5 --shape 127,8192,8192 --shape 16,4096,4096 > $OUT/scaled.txt 2>&1; echo "rc=$?" >> $OUT/scaled.txt
tail -8 $OUT/scaled.txt
timeout $(left 60) ./devbin/tirx bench gemm --epilogue bias-gelu --shape 127,8192,8192 --shape 16,4096,4096 > $OUT/fused.txt 2>&1; echo "rc=$?" >> $OUT/fused.txt
tail -8 $OUT/fused.txt
echo "== 3. Python host path"
python3 -m pip install -q --no-index --no-deps --target ~/tirx-site .whl/tirx-*.whl
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout $(left 90) python3 kernels/bench/host_overhead.py > $OUT/host-overhead.txt 2>&1
head -30 $OUT/host-overhead.txt
timeout $(left 80) python3 kernels/bench/py_check.py --quick --out $OUT > $OUT/py-check.txt 2>&1; echo "rc=$?" >> $OUT/py-check.txt
grep -E "^(FAIL|all checks|failed|rc=|Traceback|block)" $OUT/py-check.txt | head -20
echo "== 4. row-wise FP8 vs torch._scaled_mm"
timeout $(left 60) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --shape 8192,8192,8192 --shape 4096,4096,4096 --shape 8192,28672,4096 --shape 8192,4096,14336 --shape 128,8192,8192 > $OUT/fp8rows.txt 2>&1; echo "rc=$?" >> $OUT/fp8rows.txt
tail -10 $OUT/fp8rows.txt
timeout $(left 90) python3 kernels/bench/scaled_mm_rowwise.py 2>&1 | tee $OUT/scaled_mm.txt
