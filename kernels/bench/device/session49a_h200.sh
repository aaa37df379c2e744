#!/bin/bash
# Stop 49's first device call, carry ["devbin"]: devbin/ holds tirx.xz, gpu_tests.xz (the tests
# binary, `cargo test --release -p tirx-tests --features gpu --no-run`), candle_gpu_tests.xz
# (built as candle_h200.sh's header says) and tirx-wheel.tar.xz (the files of the wheel that
# `maturin build --release -m tirx-py/Cargo.toml -o .whl` makes, unzipped, `tar cf - . | xz -9`). Binaries are kept in ~/devbin for warm follow-up calls.
# 1. `gpu_paged` (every paged config incl. the p64w tiles of stop 48, against f64) in the
#    background; 2. the wheel: `py_check.py` (every function vs torch, now with `gemm_fp8` in
#    each scale form against f64 and beside torch._scaled_mm); 3. tirx-candle's GPU tests
#    (gemm_fp8 in each scale form against f64 among them).
set -u
BUDGET=${BUDGET:-560}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx gpu_tests candle_gpu_tests 2>/dev/null)  # tirx-wheel.tar.xz -> tirx-wheel.tar too
mkdir -p ~/devbin && cp devbin/* ~/devbin/
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. gpu_paged (background)"
(timeout $(left 450) ./devbin/gpu_tests gpu_paged > $OUT/gpu_paged.txt 2>&1; echo "rc=$?" >> $OUT/gpu_paged.txt) &
P=$!
echo "== 2. the wheel: py_check.py"
# the wheel's files, unzipped and re-packed as tar.xz here (2.4 MB instead of 12.3): a wheel
# installed with --target is exactly its files unpacked
rm -rf ~/tirx-site && mkdir -p ~/tirx-site && python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" devbin/tirx-wheel.tar ~/tirx-site; echo "unpack rc=$?"
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout $(left 300) python3 kernels/bench/py_check.py --out $OUT > $OUT/py-check.txt 2>&1; echo "rc=$?" >> $OUT/py-check.txt
grep -E "^(FAIL|-- checks|block|gemm|refused|note|all checks|failed|rc=|Traceback)" $OUT/py-check.txt | head -90
echo "== 3. tirx-candle GPU tests"
# CUDA 13's libraries: the toolkit's, then torch's wheels (as candle_h200.sh)
TORCH_LIBS=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print(':'.join(sorted(glob.glob(d + '/nvidia/*/lib'))))" 2>/dev/null)
LD_LIBRARY_PATH=$LD_LIBRARY_PATH${TORCH_LIBS:+:$TORCH_LIBS} timeout $(left 120) ./devbin/candle_gpu_tests --test-threads=1 > $OUT/candle.txt 2>&1; echo "rc=$?" >> $OUT/candle.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/candle.txt | head -40
wait $P
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_paged.txt | head -20
echo "== done at ${SECONDS}s"
