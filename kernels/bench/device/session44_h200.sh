#!/bin/bash
# One device call (nvidia-h200 or H100), carry ["devbin"], 2026-12-05 (stop 44), most important
# first. devbin/: tirx + gpu_tests (release, commit f59c02f or later on main: FP8 split-K #29,
# the transposed decode plan #32, varlen attention with the tile-list grid #31, transposing
# copies and integer scalars #30), candle_tests (tirx-candle --features gpu; #34).
set -u
BUDGET=${BUDGET:-550}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. every GPU test (modules gpu*)"
timeout $(left 200) ./devbin/gpu_tests gpu > $OUT/gpu_tests.txt 2>&1
echo "rc=$?" >> $OUT/gpu_tests.txt
grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_tests.txt | head -20
grep -cE "^test .* ok$" $OUT/gpu_tests.txt
echo "== 2. decode shapes, the host's choice vs cuBLASLt (#32)"
S=""; for s in 1,4096,4096 16,4096,4096 1,8192,8192 16,14336,4096 64,64,4104 8,4096,14336 1,14336,4096 128,4096,4096; do S="$S --shape $s"; done
timeout $(left 100) ./devbin/tirx bench gemm $S > $OUT/decode.txt 2>&1; echo "rc=$?" >> $OUT/decode.txt; tail -16 $OUT/decode.txt
timeout $(left 50) ./devbin/tirx bench gemm --epilogue bias-gelu --shape 1,4096,4096 --shape 16,4096,4096 > $OUT/fused.txt 2>&1; echo "rc=$?" >> $OUT/fused.txt; tail -6 $OUT/fused.txt
echo "== 3. FP8 around 128x8192x8192 vs cuBLASLt (#29)"
for s in tensor rows; do
  timeout $(left 50) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales $s --shape 128,8192,8192 --shape 64,8192,8192 --shape 256,8192,8192 > $OUT/fp8_$s.txt 2>&1
  echo "rc=$?" >> $OUT/fp8_$s.txt; tail -8 $OUT/fp8_$s.txt
done
echo "== 4. varlen attention (equal sequences packed) vs cuDNN/FA2 dense (#31)"
A="--shape 8,16,16,1024,1024,128 --shape 2,16,16,4096,4096,128,causal --shape 16,32,8,512,512,128"
timeout $(left 60) python3 kernels/bench/attention_peers.py $A --out $OUT/attn-peers.json > $OUT/attn_peers.txt 2>&1; echo "rc=$?" >> $OUT/attn_peers.txt; tail -8 $OUT/attn_peers.txt
timeout $(left 50) ./devbin/tirx bench attention $A --varlen --peers $OUT/attn-peers.json > $OUT/varlen.txt 2>&1; echo "rc=$?" >> $OUT/varlen.txt; tail -10 $OUT/varlen.txt
timeout $(left 50) ./devbin/tirx bench attention $A --peers $OUT/attn-peers.json > $OUT/dense.txt 2>&1; echo "rc=$?" >> $OUT/dense.txt; tail -10 $OUT/dense.txt
echo "== 5. tirx-candle GPU tests (#34)"
NV=$(python3 -c "
import glob, os, site
d=[]
for sp in site.getsitepackages(): d += sorted(glob.glob(os.path.join(sp,'nvidia','*','lib')))
print(':'.join(dict.fromkeys(d)))")
LD_LIBRARY_PATH=$NV:$LD_LIBRARY_PATH timeout $(left 60) ./devbin/candle_tests > $OUT/candle.txt 2>&1
echo "rc=$?" >> $OUT/candle.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/candle.txt | head -30
echo "== done at ${SECONDS}s"
