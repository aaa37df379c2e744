# Block-scaled FP8 GEMM (#29) after branch fp8k's K-loop changes: the warpgroup index
# (`tid / 128`) broadcast with `shfl.sync.idx` in the prologue (flatten-exprs), so ptxas keeps
# the wgmma descriptors in uniform registers (no R2UR; every wgmma kernel gains), and
# gemm_sm90_fp8_block's scale rows / weight block computed once before the K loop: 170 → 141
# SASS instructions a warp and K block (the row-wise FP8 GEMM's loop 69 → 51).
# devbin/: tirx (release, branch fp8k), xz-compressed. Build here (no GPU on this machine):
#   cargo build --release -p tirx-kernels --bin tirx && mkdir -p devbin &&
#   xz -T2 -c target/release/tirx > devbin/tirx.xz
# Command (device tool, carry ["devbin"]): bash kernels/bench/device/fp8k_h200.sh
#  1. `tirx run` of the block-scaled kernels against the CPU reference (odd shapes);
#  2. `tirx bench gemm` block scales beside cuBLASLt's block-scaled FP8 GEMM, four shapes;
#  3. the row-wise kernel at the same shapes (same pipeline, scales in the epilogue: the
#     ceiling the block-scaled loop aims at; its loop also loses its R2URs);
#  4. ncu source counters of gemm_sm90_fp8_block at 8192³ (instructions per K block, stalls).
set -u
BUDGET=${BUDGET:-540}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
S="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168"
echo "== 1. correctness"
for k in gemm_sm90_fp8_block gemm_sm90_fp8_block_overlap gemm_sm90_fp8_rowwise; do
  timeout $(left 60) ./devbin/tirx run $k --m 1000 --n 1000 --k 1024 > $OUT/run_$k.txt 2>&1
  echo "rc=$?" >> $OUT/run_$k.txt; tail -4 $OUT/run_$k.txt
done
echo "== 2. block scales vs cuBLASLt"
timeout $(left 150) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales blocks $S > $OUT/bench_blocks.txt 2>&1
echo "rc=$?" >> $OUT/bench_blocks.txt; tail -16 $OUT/bench_blocks.txt
echo "== 3. row-wise scales vs cuBLASLt"
timeout $(left 150) ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows $S > $OUT/bench_rows.txt 2>&1
echo "rc=$?" >> $OUT/bench_rows.txt; tail -16 $OUT/bench_rows.txt
echo "== 4. ncu source counters, gemm_sm90_fp8_block at 8192³"
timeout $(left 150) ncu --section SourceCounters --section WarpStateStats --section ComputeWorkloadAnalysis \
  --import-source no -k regex:gemm_sm90_fp8_block -c 1 --launch-skip 3 -o $OUT/block \
  ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales blocks --shape 8192,8192,8192 > $OUT/ncu_log.txt 2>&1
echo "rc=$?" >> $OUT/ncu_log.txt; tail -3 $OUT/ncu_log.txt
ncu --import $OUT/block.ncu-rep --page source --csv --print-source sass > $OUT/sass.csv 2>&1
ncu --import $OUT/block.ncu-rep --page details > $OUT/details.txt 2>&1
grep -iE "tensor|issue|executed ipc|stall" $OUT/details.txt | head -20
wc -l $OUT/sass.csv
