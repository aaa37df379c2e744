#!/bin/bash
# Stop 45 first device call (2026-12-06): session44b_h200.sh (which never ran) plus a decode baseline.
# session44b: what session44_h200.sh could not hold. devbin/: tirx + gpu_tests (release, main ff7c7fe or
# later: paged attention #31, the quantisers #29), candle_tests (tirx-candle --features gpu; #34).
set -u
BUDGET=${BUDGET:-400}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# The binaries travel xz-compressed (the tree's snapshots leave about 20 MB of the 64 MiB carry).
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. GPU tests: paged attention, quantisers"
timeout $(left 120) ./devbin/gpu_tests gpu_paged gpu_quant > $OUT/gpu_new.txt 2>&1
echo "rc=$?" >> $OUT/gpu_new.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_new.txt | head -30
echo "== 2. quantisers: TB/s vs the device copy, torch (#29)"
Q="--shape 8192,7168 --shape 16384,4096 --shape 4096,16384"
timeout $(left 60) ./devbin/tirx bench quant $Q > $OUT/bench_quant.txt 2>&1; echo "rc=$?" >> $OUT/bench_quant.txt; tail -14 $OUT/bench_quant.txt
timeout $(left 60) python3 kernels/bench/quant_peers.py $Q --out $OUT/quant_peers.json > $OUT/quant_peers.txt 2>&1; echo "rc=$?" >> $OUT/quant_peers.txt; tail -12 $OUT/quant_peers.txt
echo "== 3. tirx-candle GPU tests (#34)"
NV=$(python3 -c "
import glob, os, site
d=[]
for sp in site.getsitepackages(): d += sorted(glob.glob(os.path.join(sp,'nvidia','*','lib')))
print(':'.join(dict.fromkeys(d)))")
LD_LIBRARY_PATH=$NV:$LD_LIBRARY_PATH timeout $(left 60) ./devbin/candle_tests > $OUT/candle.txt 2>&1
echo "rc=$?" >> $OUT/candle.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/candle.txt | head -30
echo "== 4. paged attention (pages of 128, shuffled) vs the dense peers (#31)"
A="--shape 8,16,16,1024,1024,128 --shape 2,16,16,4096,4096,128,causal --shape 32,32,8,16,4096,128"
timeout $(left 50) python3 kernels/bench/attention_peers.py $A --out $OUT/attn-peers.json > $OUT/attn_peers.txt 2>&1; echo "rc=$?" >> $OUT/attn_peers.txt; tail -8 $OUT/attn_peers.txt
timeout $(left 40) ./devbin/tirx bench attention $A --paged 128 --peers $OUT/attn-peers.json > $OUT/paged.txt 2>&1; echo "rc=$?" >> $OUT/paged.txt; tail -8 $OUT/paged.txt
echo "== 5. the small split shapes: every split config (#32)"
S="--shape 64,64,4104 --shape 32,128,4096 --shape 64,256,8192"
timeout $(left 50) ./devbin/tirx bench gemm $S --kernel gemm_sm90_splitk --kernel gemm_sm90_splitk_t --kernel gemm_sm90_ws > $OUT/small.txt 2>&1; echo "rc=$?" >> $OUT/small.txt; tail -30 $OUT/small.txt
echo "== 6. decode-shaped attention (SQ 1..16, long K, GQA 32/8): our dense kernel vs cuDNN (#31 baseline)"
D="--shape 1,32,8,1,8192,128 --shape 16,32,8,1,8192,128 --shape 64,32,8,4,4096,128 --shape 4,32,8,16,32768,128"
timeout $(left 40) python3 kernels/bench/attention_peers.py $D --out $OUT/dec-peers.json > $OUT/dec_peers.txt 2>&1; echo "rc=$?" >> $OUT/dec_peers.txt; tail -8 $OUT/dec_peers.txt
timeout $(left 30) ./devbin/tirx bench attention $D --peers $OUT/dec-peers.json > $OUT/dec.txt 2>&1; echo "rc=$?" >> $OUT/dec.txt; tail -8 $OUT/dec.txt
echo "== done at ${SECONDS}s"
