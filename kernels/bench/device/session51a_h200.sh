#!/bin/bash
# Stop 51's first call, carry ["devbin"]. devbin/ (each stripped, `xz -6`):
#   tirx.xz            land51 (main 68c6baf + next51: block FP8 scales through shared memory with
#                      the scale warps' turn fix, `writers = N`)
#   tirx_base.xz       stop 49's base (the block kernel as on main: its K loop of 141 SASS)
#   gpu_tests.xz       land51's `cargo test --release -p tirx-tests --features gpu --no-run`
#   tirx-wheel.tar.xz  land51's wheel, unzipped, `tar cf - . | xz`
# Order: correctness of the block kernel first (it faulted at 4096³ f32 before the fix), then the
# Python FP8 checks, then speed (block base vs new; row-wise promoted vs fast), then the rest of gpu_fp8.
set -u
BUDGET=${BUDGET:-570}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx tirx_base gpu_tests)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== block FP8 GPU tests"
timeout $(left 90) ./devbin/gpu_tests block_scaled --nocapture > $OUT/gpu_block.txt 2>&1; echo "rc=$?" >> $OUT/gpu_block.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_block.txt | head -20
echo "== Python FP8 checks"
rm -rf ~/tirx-site && mkdir -p ~/tirx-site && python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" devbin/tirx-wheel.tar ~/tirx-site; echo "unpack rc=$?"
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout $(left 120) python3 kernels/bench/py_check.py --fp8-only --out $OUT > $OUT/py-fp8.txt 2>&1; echo "rc=$?" >> $OUT/py-fp8.txt
grep -E "^(FAIL|-- checks|all checks|failed|rc=|Traceback)|block|Error" $OUT/py-fp8.txt | head -40
S="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,2112,7168"
for b in tirx_base tirx; do
  echo "== FP8 blocks bf16: $b"
  timeout $(left 35) ./devbin/$b bench gemm --in e4m3 --out bf16 --scales blocks $S > $OUT/fp8_blocks_$b.txt 2>&1; echo "rc=$?" >> $OUT/fp8_blocks_$b.txt
  grep -vE "^  " $OUT/fp8_blocks_$b.txt | tail -14
done
for acc in fast promoted; do
  echo "== FP8 rows, --accum $acc"
  timeout $(left 35) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --accum $acc $S > $OUT/fp8_rows_$acc.txt 2>&1; echo "rc=$?" >> $OUT/fp8_rows_$acc.txt
  grep -vE "^  " $OUT/fp8_rows_$acc.txt | tail -14
done
echo "== the rest of gpu_fp8 at ${SECONDS}s"
timeout $(left 300) ./devbin/gpu_tests gpu_fp8 --skip block_scaled --nocapture > $OUT/gpu_fp8.txt 2>&1; echo "rc=$?" >> $OUT/gpu_fp8.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_fp8.txt | head -20
echo "== done at ${SECONDS}s"
