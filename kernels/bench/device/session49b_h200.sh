#!/bin/bash
# Stop 49's second call, carry ["devbin"]: tirx.xz, tirx-wheel.tar.xz (as session49a_h200.sh)
# and candle_sym.xz (the tirx-candle GPU tests with their symbols, `strip --strip-debug`, and
# progress lines on stderr in the FP8 test, a local change not committed).
# Why `gemm_fp8_matches_an_f64_reference_in_every_scale_form` timed out in call 1: the same
# shapes and scale forms through `tirx bench` (our kernels alone), then the test alone with a
# stack dump of every thread after 25 s. Then py_check.py's gemm_fp8 checks again.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx candle_sym)
rm -rf ~/tirx-site && mkdir -p ~/tirx-site && python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" devbin/tirx-wheel.tar ~/tirx-site
echo "== 1. our kernels at the test's shapes"
for s in tensor rows blocks; do timeout 40 ./devbin/tirx bench gemm --in e4m3 --scales $s --shape 300,264,400 --shape 77,136,208 > $OUT/bench_$s.txt 2>&1; echo "rc=$?" >> $OUT/bench_$s.txt; tail -6 $OUT/bench_$s.txt; done
echo "== 2. the candle test alone"
TORCH_LIBS=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print(':'.join(sorted(glob.glob(d + '/nvidia/*/lib'))))" 2>/dev/null)
LD_LIBRARY_PATH=$LD_LIBRARY_PATH${TORCH_LIBS:+:$TORCH_LIBS} timeout 60 ./devbin/candle_sym gemm_fp8 --test-threads=1 --nocapture > $OUT/candle_fp8.txt 2>&1 &
P=$!
sleep 25
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv > $OUT/smi.txt 2>&1; cat $OUT/smi.txt
T=$(pgrep -x candle_sym | head -1)
which gdb eu-stack py-spy 2>&1 | head -3
if [ -n "$T" ]; then
  (command -v gdb >/dev/null && timeout 20 gdb -p $T -batch -ex "thread apply all bt 25" > $OUT/stack.txt 2>&1) || cat /proc/$T/task/*/stack > $OUT/stack.txt 2>&1
  for t in /proc/$T/task/*; do echo "$t $(cat $t/comm) wchan=$(cat $t/wchan 2>/dev/null) utime,stime=$(cut -d' ' -f14,15 $t/stat)"; done >> $OUT/stack.txt
  grep -E "task" $OUT/stack.txt | head -40
  grep -E "^#|^Thread|task" $OUT/stack.txt | grep -v "?? ()" | head -60
fi
wait $P; echo "candle rc=$?"; tail -15 $OUT/candle_fp8.txt
echo "== 3. py_check --fp8-only"
export PYTHONPATH=~/tirx-site${PYTHONPATH:+:$PYTHONPATH}
timeout 120 python3 kernels/bench/py_check.py --fp8-only --out $OUT > $OUT/py-fp8.txt 2>&1; echo "rc=$?" >> $OUT/py-fp8.txt
grep -E "^(FAIL|ok|-- checks|note|failed|all checks|rc=|Traceback)" $OUT/py-fp8.txt | head -60
