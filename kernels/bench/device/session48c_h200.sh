#!/bin/bash
# Stop 48's third device call, carry ["devbin"] (tirx, gpu_tests from lead3: lead + the
# per-register gather loads (block FP8's weight scale) + helper dec's bottom-tested wgmma loops
# (C7519 gone from the decode kernels)).
set -u
BUDGET=${BUDGET:-540}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. block FP8 vs cuBLASLt (call 4: default 880/894/898/773, cuBLASLt 1156/1288/1291/1056)"
timeout $(left 120) ./devbin/tirx bench gemm --in e4m3 --scales blocks --shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168 > $OUT/fp8_blocks.txt 2>&1; echo "rc=$?" >> $OUT/fp8_blocks.txt; tail -32 $OUT/fp8_blocks.txt
echo "== 2. GPU tests: fp8, decode, attention, gather"
timeout $(left 200) ./devbin/gpu_tests gpu_fp8 gpu_decode gpu_attention gpu_gather gpu_rs > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -40
echo "== 3. decode vs cuDNN/FA2 through SDPA (stop 47: 1.424 0.950 0.925 2.292 0.903 4.327 4.411)"
D="--shape 1,32,8,1,8192,128 --shape 16,32,8,1,8192,128 --shape 64,32,8,1,4096,128 --shape 4,32,8,4,32768,128 --shape 1,32,8,1,131072,128 --shape 8,64,8,16,16384,128 --shape 32,32,8,1,8192,64 --shape 16,32,8,2,4096,256"
timeout $(left 60) python3 kernels/bench/attention_peers.py $D --out $OUT/dec-peers.json > $OUT/dec_peers.txt 2>&1; echo "rc=$?" >> $OUT/dec_peers.txt
timeout $(left 60) ./devbin/tirx bench attention $D --decode --peers $OUT/dec-peers.json > $OUT/dec.txt 2>&1; echo "rc=$?" >> $OUT/dec.txt; tail -12 $OUT/dec.txt
echo "== done at ${SECONDS}s"
