#!/bin/bash
# Stop 49's call 5, carry ["devbin"]: tirx_new.xz + gpu_tests.xz (lead49 with fp8k merged: the
# warpgroup index broadcast once with shfl so wgmma descriptors stay uniform, block FP8's scale
# rows hoisted; the persistent causal attention tiles; the remembered greedy walk; cost's
# per-device HBM rate) and tirx_base.xz (branch attnp at 3624b16: before fp8k's compiler
# change and the remembered walk), tirx_pg16.xz (branch pg16 at d05e281: the paged producer
# loads a block's page ids together and reuses them for V). A/B, base first.
set -u
BUDGET=${BUDGET:-330}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx_new tirx_base tirx_pg16 gpu_tests)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 0. every GPU test but gpu_paged (background)"
(timeout $(left 400) ./devbin/gpu_tests gpu --skip gpu_paged > $OUT/gpu_tests.txt 2>&1; echo "rc=$?" >> $OUT/gpu_tests.txt) &
P=$!
S="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168"
PS="--shape 8,32,8,2048,2048,128 --shape 4,32,8,4096,4096,128,causal --shape 8,32,8,2048,2048,64"
for pg in 16 32 64; do for b in base pg16; do
  echo "== paged $pg: $b"
  timeout $(left 40) ./devbin/tirx_$b bench attention $PS --paged $pg > $OUT/paged${pg}_$b.txt 2>&1; echo "rc=$?" >> $OUT/paged${pg}_$b.txt; tail -4 $OUT/paged${pg}_$b.txt
done; done
for sc in blocks; do for b in base new; do
  echo "== FP8 $sc: $b"
  timeout $(left 80) ./devbin/tirx_$b bench gemm --in e4m3 --out bf16 --scales $sc $S > $OUT/fp8_${sc}_$b.txt 2>&1; echo "rc=$?" >> $OUT/fp8_${sc}_$b.txt; grep -E "^ *[0-9]+x|geomean|rc=" $OUT/fp8_${sc}_$b.txt | tail -8
done; done
for b in base new; do
  echo "== bf16 GEMM (host choice vs cuBLASLt): $b"
  timeout $(left 60) ./devbin/tirx_$b bench gemm --shape 8192,8192,8192 --shape 4096,4096,4096 --shape 2048,2048,2048 > $OUT/bf16_$b.txt 2>&1; echo "rc=$?" >> $OUT/bf16_$b.txt; tail -6 $OUT/bf16_$b.txt
done
A="--shape 32,16,16,512,512,128,causal --shape 32,32,32,512,512,64,causal --shape 2,16,16,8192,8192,128 --shape 2,16,16,8192,8192,128,causal --shape 8,32,32,2048,2048,64"
for b in base new; do
  echo "== attention, host choice: $b"
  timeout $(left 60) ./devbin/tirx_$b bench attention $A > $OUT/attn_$b.txt 2>&1; echo "rc=$?" >> $OUT/attn_$b.txt; tail -7 $OUT/attn_$b.txt
done
echo "== ncu source counters, block FP8 8192^3 (new)"
timeout $(left 60) ncu -k regex:gemm_sm90_fp8_block -c 1 --launch-skip 3 --section SourceCounters --section WarpStateStats --page source --print-source sass --csv ./devbin/tirx_new bench gemm --in e4m3 --out bf16 --scales blocks --shape 8192,8192,8192 --kernel gemm_sm90_fp8_block > $OUT/ncu_block.csv 2>$OUT/ncu_block.err; echo "ncu rc=$?"
wait $P; grep -E "test result|FAILED|panicked|rc=" $OUT/gpu_tests.txt | head -20; grep -c "^test .* ok$" $OUT/gpu_tests.txt
echo "== done at ${SECONDS}s"
