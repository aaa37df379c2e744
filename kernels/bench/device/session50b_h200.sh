#!/bin/bash
# Stop 50's second call, carry ["devbin"]. devbin/ (each stripped, `xz -6`):
#   tirx_base.xz         stop 49's base (before fp8k and fp8blk: the block FP8 K loop of 170 SASS)
#   tirx.xz              lead50 after fp8blk + fp8acc (`cargo build --release -p tirx-kernels --bin tirx`)
#   gpu_tests.xz         the same commit's `cargo test --release -p tirx-tests --features gpu --no-run`
#   candle_gpu_tests.xz  tirx-candle's GPU tests (README: `cargo xtask test-candle`'s env, `--features gpu --no-run`)
#   tirx-wheel.tar.xz    the wheel's files (`maturin build --release -m tirx-py/Cargo.toml`), unzipped, `tar cf - . | xz -9`
# Order: benches alone on the GPU (block FP8 base/new; row-wise promoted vs fast, each beside
# cuBLASLt with the same FAST_ACCUM), then the split-K host-time test alone, gpu_fp8, the
# candle tests, then Python: host_overhead.py (helper pyhost) and py_check --fp8-only.
set -u
BUDGET=${BUDGET:-480}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx tirx_base gpu_tests candle_gpu_tests)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
S="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,2112,7168 --shape 2048,7168,2048"
for b in tirx_base tirx; do
  echo "== FP8 blocks: $b"
  timeout $(left 45) ./devbin/$b bench gemm --in e4m3 --out bf16 --scales blocks $S > $OUT/fp8_blocks_$b.txt 2>&1; echo "rc=$?" >> $OUT/fp8_blocks_$b.txt
  grep -E "fp8_block|geometric|rc=" $OUT/fp8_blocks_$b.txt | head -30
done
for acc in fast promoted; do
  echo "== FP8 rows, --accum $acc"
  timeout $(left 40) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --accum $acc $S > $OUT/fp8_rows_$acc.txt 2>&1; echo "rc=$?" >> $OUT/fp8_rows_$acc.txt
  grep -vE "^  " $OUT/fp8_rows_$acc.txt | head -30
done
echo "== split-K host-time test alone"
timeout $(left 30) ./devbin/gpu_tests a_split_k_plan_queues --nocapture > $OUT/splitk_host.txt 2>&1; echo "rc=$?" >> $OUT/splitk_host.txt
grep -E "host µs|test result|rc=" $OUT/splitk_host.txt
echo "== gpu_fp8"
timeout $(left 150) ./devbin/gpu_tests gpu_fp8 --nocapture > $OUT/gpu_fp8.txt 2>&1; echo "rc=$?" >> $OUT/gpu_fp8.txt
grep -E "^test |test result|FAILED|panicked|cuBLASLt|promoted|rc=" $OUT/gpu_fp8.txt | head -30
echo "== tirx-candle GPU tests"
TORCH_LIBS=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print(':'.join(sorted(glob.glob(d + '/nvidia/*/lib'))))" 2>/dev/null)
LD_LIBRARY_PATH=$LD_LIBRARY_PATH${TORCH_LIBS:+:$TORCH_LIBS} timeout $(left 60) ./devbin/candle_gpu_tests --test-threads=1 > $OUT/candle.txt 2>&1; echo "rc=$?" >> $OUT/candle.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/candle.txt | head -10
echo "== Python"
rm -rf ~/tirx-site && mkdir -p ~/tirx-site && python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" devbin/tirx-wheel.tar ~/tirx-site; echo "unpack rc=$?"
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout $(left 60) python3 kernels/bench/host_overhead.py > $OUT/host-overhead.txt 2>&1; echo "rc=$?" >> $OUT/host-overhead.txt
cat $OUT/host-overhead.txt | head -60
timeout $(left 120) python3 kernels/bench/py_check.py --fp8-only --out $OUT > $OUT/py-fp8.txt 2>&1; echo "rc=$?" >> $OUT/py-fp8.txt
grep -E "^(FAIL|-- checks|all checks|failed|rc=|Traceback)|fast|bench" $OUT/py-fp8.txt | head -40
echo "== done at ${SECONDS}s"
