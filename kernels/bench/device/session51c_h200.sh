#!/bin/bash
# Stop 51, rows of odd length and the M = 64 GEMM choices (#32), carry ["devbin4"]: tirx.xz and
# gpu_tests.xz from branch all51 (land51 + dedup + model + oddrows: a one-row tile's alignment
# from its own start, the long-row kernels walking from the row's first aligned column; the
# one-launch GEMM's HBM rate counting its boxes' rows inside the tensors), tirx_base.xz =
# land51's tirx. GPU tests of the row kernels first, then the host's choice base vs new at odd
# and aligned widths (torch beside each), then the GEMM shapes whose choice moved.
set -u
BUDGET=${BUDGET:-400}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin4 && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx tirx_base gpu_tests)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== GPU tests of the row kernels"
timeout $(left 200) ./devbin4/gpu_tests gpu_rows > $OUT/gpu_rows.txt 2>&1; echo "rc=$?" >> $OUT/gpu_rows.txt
grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_rows.txt | head -20
S="--shape 1024,50257 --shape 512,100003 --shape 2048,20001 --shape 4096,4999 --shape 8192,7171 --shape 4096,65536 --shape 1024,262144"
for b in tirx_base tirx; do
  echo "== rows, host's choice: $b at ${SECONDS}s"
  timeout $(left 90) ./devbin4/$b bench rows $S > $OUT/rows_$b.txt 2>&1; echo "rc=$?" >> $OUT/rows_$b.txt
  grep -vE "^  " $OUT/rows_$b.txt | tail -26
done
G="--shape 64,8192,8192 --shape 64,14336,4096 --shape 64,11008,4096 --shape 128,4096,4096 --shape 1,4096,4096"
for b in tirx_base tirx; do
  echo "== GEMM bf16, host's choice: $b at ${SECONDS}s"
  timeout $(left 40) ./devbin4/$b bench gemm $G > $OUT/gemm_$b.txt 2>&1; echo "rc=$?" >> $OUT/gemm_$b.txt
  grep -vE "^  " $OUT/gemm_$b.txt | tail -10
done
echo "== the long rows: every staged and cluster config forced at ${SECONDS}s"
timeout $(left 60) ./devbin4/tirx bench rows --shape 4096,65536 --shape 1024,262144 --shape 2048,20000 --op softmax --op rmsnorm --kernel softmax_long --kernel softmax_staged --kernel softmax_staged_cluster --kernel softmax_cluster --kernel rmsnorm_long --kernel rmsnorm_staged --kernel rmsnorm_staged_cluster --kernel rmsnorm_cluster > $OUT/forced_long.txt 2>&1; echo "rc=$?" >> $OUT/forced_long.txt
grep -vE "^  " $OUT/forced_long.txt | tail -40
echo "== done at ${SECONDS}s"
