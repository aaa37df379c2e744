#!/bin/bash
# Stop 46's device call (nvidia-h200 or H100), carry ["devbin"], 2026-12-06. devbin/ (xz):
# tirx + gpu_tests built from main e3e33ad (stop 45: prepared split-K launches #32, the block-scaled
# FP8 GEMM #29, split-KV decode + GQA packing #31, i64 / vector red / cluster argmax #30).
set -u
BUDGET=${BUDGET:-520}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. GPU tests: paged, quant, fp8 (block), decode, split-K (prepared launches), gemv, atomics, arg_reduce, int64"
timeout $(left 130) ./devbin/gpu_tests gpu_paged gpu_quant gpu_fp8 gpu_decode gpu_splitk gpu_gemv gpu_atomics gpu_arg_reduce gpu_int64 > $OUT/gpu_new.txt 2>&1
echo "rc=$?" >> $OUT/gpu_new.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_new.txt | head -60
echo "== 2. block-scaled FP8 (1x128 / 128x128) vs cuBLASLt VEC128/BLK128x128 (#29)"
F="--shape 8192,8192,8192 --shape 4096,7168,2048 --shape 4096,4096,7168 --shape 2048,24576,1536 --shape 4096,2112,7168"
timeout $(left 60) ./devbin/tirx bench gemm --in e4m3 --scales blocks $F > $OUT/fp8_block.txt 2>&1; echo "rc=$?" >> $OUT/fp8_block.txt; tail -16 $OUT/fp8_block.txt
echo "== 3. decode attention (split-KV, GQA packed) vs cuDNN through SDPA (#31)"
D="--shape 1,32,8,1,8192,128 --shape 16,32,8,1,8192,128 --shape 64,32,8,1,4096,128 --shape 4,32,8,4,32768,128 --shape 1,32,8,1,131072,128 --shape 8,64,8,16,16384,128"
timeout $(left 45) python3 kernels/bench/attention_peers.py $D --out $OUT/dec-peers.json > $OUT/dec_peers.txt 2>&1; echo "rc=$?" >> $OUT/dec_peers.txt; tail -9 $OUT/dec_peers.txt
timeout $(left 35) ./devbin/tirx bench attention $D --decode --peers $OUT/dec-peers.json > $OUT/dec.txt 2>&1; echo "rc=$?" >> $OUT/dec.txt; tail -10 $OUT/dec.txt
[ $((BUDGET - SECONDS)) -gt 150 ] && timeout $(left 30) ./devbin/tirx bench attention $D --peers $OUT/dec-peers.json > $OUT/dec_dense.txt 2>&1; echo "rc=$?" >> $OUT/dec_dense.txt; tail -10 $OUT/dec_dense.txt
echo "== 4. small GEMMs, split-K launches prepared together (#32)"
S="--shape 64,64,4104 --shape 32,128,4096 --shape 64,256,8192 --shape 1,4096,4096 --shape 16,4096,4096 --shape 128,4096,4096"
timeout $(left 50) ./devbin/tirx bench gemm $S > $OUT/small.txt 2>&1; echo "rc=$?" >> $OUT/small.txt; tail -14 $OUT/small.txt
echo "== 5. quantisers: TB/s vs the device copy, torch (#29)"
Q="--shape 8192,7168 --shape 16384,4096 --shape 4096,16384"
timeout $(left 50) ./devbin/tirx bench quant $Q > $OUT/bench_quant.txt 2>&1; echo "rc=$?" >> $OUT/bench_quant.txt; tail -14 $OUT/bench_quant.txt
timeout $(left 50) python3 kernels/bench/quant_peers.py $Q --out $OUT/quant_peers.json > $OUT/quant_peers.txt 2>&1; echo "rc=$?" >> $OUT/quant_peers.txt; tail -12 $OUT/quant_peers.txt
echo "== done at ${SECONDS}s"
