#!/bin/bash
# Stop 49's call 5 as the device time left allowed (~170 s of a call; session49d_h200.sh was
# planned, the machine did not come), carry ["devbin"]. It never ran: run it first next stop.
# Benches first, alone on the GPU, base before new; then the FP8 GPU tests with what is left.
# devbin/ (each stripped, `xz -6`):
#   tirx_base.xz  branch attnp at b826816 (before fp8k's warpgroup-index broadcast and block
#                 FP8 change, before pg16's paged producer): `git worktree add /tmp/b b826816`,
#                 `cargo build --release -p tirx-kernels --bin tirx` there
#   tirx_new.xz   main (fp8k and pg16 merged, 2998504 or later)
#   tirx_pg16.xz  the same binary as tirx_new (the paged A/B is base against pg16)
#   gpu_tests.xz  main's `cargo test --release -p tirx-tests --features gpu --no-run` binary
# Then, in further calls: `./devbin/gpu_tests gpu --skip gpu_paged` (~300 s) and
# `./devbin/gpu_tests gpu_paged` (~275 s on an H100).
set -u
BUDGET=${BUDGET:-170}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx_new tirx_base tirx_pg16 gpu_tests)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
PS="--shape 8,32,8,2048,2048,128 --shape 4,32,8,4096,4096,128,causal --shape 8,32,8,2048,2048,64"
for pg in 16 32; do for b in base pg16; do
  echo "== paged $pg: $b"
  timeout $(left 30) ./devbin/tirx_$b bench attention $PS --paged $pg > $OUT/paged${pg}_$b.txt 2>&1; echo "rc=$?" >> $OUT/paged${pg}_$b.txt; tail -4 $OUT/paged${pg}_$b.txt
done; done
S="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,2112,7168"
for b in base new; do
  echo "== FP8 blocks, gemm_sm90_fp8_block only: $b"
  timeout $(left 30) ./devbin/tirx_$b bench gemm --in e4m3 --out bf16 --scales blocks $S --kernel gemm_sm90_fp8_block > $OUT/fp8_blocks_$b.txt 2>&1; echo "rc=$?" >> $OUT/fp8_blocks_$b.txt; tail -5 $OUT/fp8_blocks_$b.txt
done
for b in base new; do
  echo "== bf16 GEMM 8192^3, host choice: $b"
  timeout $(left 20) ./devbin/tirx_$b bench gemm --shape 8192,8192,8192 --shape 4096,4096,4096 > $OUT/bf16_$b.txt 2>&1; echo "rc=$?" >> $OUT/bf16_$b.txt; tail -3 $OUT/bf16_$b.txt
done
echo "== attention s512 causal, host choice (new: the remembered walk)"
timeout $(left 20) ./devbin/tirx_new bench attention --shape 32,16,16,512,512,128,causal --shape 32,32,32,512,512,64,causal > $OUT/attn_new.txt 2>&1; echo "rc=$?" >> $OUT/attn_new.txt; tail -3 $OUT/attn_new.txt
echo "== gpu_fp8 (new tests binary) with what is left"
timeout $(left 60) ./devbin/gpu_tests gpu_fp8 > $OUT/gpu_fp8.txt 2>&1; echo "rc=$?" >> $OUT/gpu_fp8.txt; grep -E "^test |test result|rc=" $OUT/gpu_fp8.txt | tail -10
echo "== done at ${SECONDS}s"
