#!/bin/bash
# Stop 49's call 4, carry ["devbin"]: tirx_attnp.xz + gpu_tests_attnp.xz (branch attnp: the
# persistent attention kernel's causal pair walk, hd 128 and hd 64), tirx_lead.xz (branch lead49:
# paged attention reads each page id once a block for K and V), candle_gpu_tests.xz (the FP8
# test's operands drawn exact), tirx-wheel.tar.xz (as session49a_h200.sh).
set -u
BUDGET=${BUDGET:-540}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx_attnp gpu_tests_attnp tirx_lead candle_gpu_tests)
rm -rf ~/tirx-site && mkdir -p ~/tirx-site && python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" devbin/tirx-wheel.tar ~/tirx-site
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 0. gpu_attention with the attnp tiles (background)"
(timeout $(left 420) ./devbin/gpu_tests_attnp gpu_attention > $OUT/gpu_attention.txt 2>&1; echo "rc=$?" >> $OUT/gpu_attention.txt) &
P=$!
S="--shape 32,16,16,512,512,128,causal --shape 16,16,16,1024,1024,128,causal --shape 8,16,16,2048,2048,128,causal --shape 2,16,16,8192,8192,128,causal --shape 32,32,32,512,512,64,causal --shape 16,32,32,1024,1024,64,causal --shape 8,32,32,2048,2048,64,causal --shape 2,32,32,8192,8192,64,causal"
echo "== 1. attnp: each tile forced at the causal shapes"
timeout $(left 150) ./devbin/tirx_attnp bench attention $S --kernel d128 --kernel d128_sms --kernel d64 --kernel d64_w3 --kernel causal_d64_sms > $OUT/attn_forced.txt 2>&1; echo "rc=$?" >> $OUT/attn_forced.txt; tail -50 $OUT/attn_forced.txt
echo "== 2. attnp: the host's choice (+ two unmasked hd128 points: d128_sms 499.6 / 623.0 on the H200 12-03)"
timeout $(left 100) ./devbin/tirx_attnp bench attention $S --shape 32,16,16,512,512,128 --shape 2,16,16,8192,8192,128 > $OUT/attn_host.txt 2>&1; echo "rc=$?" >> $OUT/attn_host.txt; tail -14 $OUT/attn_host.txt
echo "== 3. paged 16 / 32: main's producer (attnp binary, paged unchanged) vs lead49's (one page-id read a page)"
PS="--shape 8,32,8,2048,2048,128 --shape 4,32,8,4096,4096,128,causal --shape 8,32,8,2048,2048,64"
for pg in 16 32; do for b in tirx_attnp tirx_lead; do timeout $(left 60) ./devbin/$b bench attention $PS --paged $pg > $OUT/paged${pg}_$b.txt 2>&1; echo "rc=$?" >> $OUT/paged${pg}_$b.txt; echo "-- $b paged $pg"; tail -5 $OUT/paged${pg}_$b.txt; done; done
echo "== 4. ncu source counters, paged 16 hd128 (main's producer)"
timeout $(left 60) ncu -k regex:paged -c 1 --launch-skip 2 --section SourceCounters --section WarpStateStats --page source --print-source sass --csv ./devbin/tirx_attnp bench attention --shape 8,32,8,2048,2048,128 --paged 16 > $OUT/ncu_paged16.csv 2>$OUT/ncu_paged16.err; echo "ncu rc=$?"; tail -2 $OUT/ncu_paged16.err
timeout $(left 60) ncu -k regex:paged -c 1 --launch-skip 2 --section SpeedOfLight --section WarpStateStats ./devbin/tirx_attnp bench attention --shape 8,32,8,2048,2048,128 --paged 16 > $OUT/ncu_paged16_sol.txt 2>&1; grep -E "Throughput|Stall|Duration|Warp Cycles" $OUT/ncu_paged16_sol.txt | head -20
echo "== 5. tirx-candle GPU tests"
TORCH_LIBS=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print(':'.join(sorted(glob.glob(d + '/nvidia/*/lib'))))" 2>/dev/null)
LD_LIBRARY_PATH=$LD_LIBRARY_PATH${TORCH_LIBS:+:$TORCH_LIBS} timeout $(left 90) ./devbin/candle_gpu_tests --test-threads=1 > $OUT/candle.txt 2>&1; echo "rc=$?" >> $OUT/candle.txt
grep -E "test result|FAILED|panicked|rc=|fp8" $OUT/candle.txt | head
echo "== 6. py_check --fp8-only"
PYTHONPATH=~/tirx-site timeout $(left 60) python3 kernels/bench/py_check.py --fp8-only --out $OUT > $OUT/py-fp8.txt 2>&1; echo "rc=$?" >> $OUT/py-fp8.txt
grep -E "^(FAIL|-- checks|failed|all checks|rc=)" $OUT/py-fp8.txt
wait $P; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_attention.txt | head -20
echo "== done at ${SECONDS}s"
