#!/bin/bash
# One device call (nvidia-h200), carry ["devbin", ".peers/liger"], 2026-12-05 (stop 43): the
# session's one call if the device is scarce, most important first.
# devbin/: tirx + gpu_tests (branch lead: FP8 split-K #29, attention --shape #31),
#          tirx_g + gpu_tests_g (branch gemv32: the transposed decode plan #32),
#          candle_tests (tirx-candle --features gpu, debug, stripped; #34).
set -u
BUDGET=${BUDGET:-560}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. FP8 split-K GPU tests (#29)"
timeout $(left 90) ./devbin/gpu_tests gpu_fp8::fp8_split gpu_fp8::the_host > $OUT/gpu_fp8.txt 2>&1
echo "rc=$?" >> $OUT/gpu_fp8.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_fp8.txt | head -20
echo "== 2. transposed decode plan + split-K GPU tests (#32, gemv32 binaries)"
timeout $(left 120) ./devbin/gpu_tests_g gpu_gemv gpu_splitk > $OUT/gpu_gemv.txt 2>&1
echo "rc=$?" >> $OUT/gpu_gemv.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_gemv.txt | head -30
echo "== 3. attention GPU tests (#31 lead)"
timeout $(left 80) ./devbin/gpu_tests gpu_attention > $OUT/gpu_attention.txt 2>&1
echo "rc=$?" >> $OUT/gpu_attention.txt; grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_attention.txt | head -10
echo "== 4a. FP8 128x8192x8192 vs cuBLASLt (per-tensor, row-wise)"
for s in tensor rows; do
  timeout $(left 60) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales $s --shape 128,8192,8192 --shape 64,8192,8192 --shape 256,8192,8192 > $OUT/fp8_$s.txt 2>&1
  echo "rc=$?" >> $OUT/fp8_$s.txt; tail -12 $OUT/fp8_$s.txt
done
echo "== 4b. decode shapes, host's choice vs cuBLASLt (gemv32 binaries)"
S=""; for s in 1,4096,4096 16,4096,4096 1,8192,8192 16,14336,4096 64,64,4104 8,4096,14336 1,14336,4096 128,4096,4096; do S="$S --shape $s"; done
timeout $(left 100) ./devbin/tirx_g bench gemm $S > $OUT/decode_g.txt 2>&1; echo "rc=$?" >> $OUT/decode_g.txt; tail -16 $OUT/decode_g.txt
timeout $(left 60) ./devbin/tirx_g bench gemm --epilogue bias-gelu --shape 1,4096,4096 --shape 16,4096,4096 > $OUT/fused_g.txt 2>&1; echo "rc=$?" >> $OUT/fused_g.txt; tail -6 $OUT/fused_g.txt
echo "== 5. tirx-candle GPU tests (#34)"
NV=$(python3 -c "
import glob, os, site
d=[]
for sp in site.getsitepackages(): d += sorted(glob.glob(os.path.join(sp,'nvidia','*','lib')))
print(':'.join(dict.fromkeys(d)))")
ls $(echo $NV | tr ':' ' ') 2>/dev/null | grep -E "libcublas.so|libcurand.so" | head -4
LD_LIBRARY_PATH=$NV:$LD_LIBRARY_PATH timeout $(left 60) ./devbin/candle_tests > $OUT/candle.txt 2>&1
echo "rc=$?" >> $OUT/candle.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/candle.txt | head -30
echo "== 6. rows 10k..16k columns: the host's choice and the long kernels, torch (+ Liger)"
PEER="--peer torch"
if ls .peers/liger/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .peers/liger/*.whl && export PYTHONPATH=/tmp/site && PEER="--peer torch --peer liger"
fi
S=""; for r in 1024 8192; do for c in 10240 12288 16384; do S="$S --shape $r,$c"; done; done
timeout $(left 60) python3 kernels/bench/rows_peers.py $S $PEER --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1; echo "rc=$?" >> $OUT/peers.txt; tail -2 $OUT/peers.txt
timeout $(left 90) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $S --kernel softmax_long --kernel rmsnorm_long --kernel layernorm_long --kernel softmax --kernel rmsnorm --kernel layernorm > $OUT/forced.txt 2>&1
echo "rc=$?" >> $OUT/forced.txt; grep -E "^==|x[0-9]+ |rc=" $OUT/forced.txt | grep -v minimum | head -120
