#!/bin/bash
# Stop 50's third call, not run (the 176 s of device budget left could not start a machine), carry ["devbin2"]: tirx.xz (lead50
# aad0999: fp8acc's promoted configs, fp8blk's block kernel) and tirx_base.xz (stop 49's base,
# as session50b_h200.sh). Speed only: promoted against fast row-wise FP8, each beside cuBLASLt
# with the same FAST_ACCUM; the block kernel's bf16 configs base against fp8blk.
set -u
BUDGET=${BUDGET:-110}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin2 && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx tirx_base)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
S="--shape 8192,8192,8192 --shape 4096,4096,4096"
for acc in fast promoted; do
  echo "== FP8 rows, --accum $acc"
  timeout $(left 28) ./devbin2/tirx bench gemm --in e4m3 --out bf16 --scales rows --accum $acc $S > $OUT/fp8_rows_$acc.txt 2>&1; echo "rc=$?" >> $OUT/fp8_rows_$acc.txt
  grep -vE "^  " $OUT/fp8_rows_$acc.txt | tail -12
done
for b in tirx_base tirx; do
  echo "== FP8 blocks bf16: $b"
  timeout $(left 28) ./devbin2/$b bench gemm --in e4m3 --out bf16 --scales blocks $S > $OUT/fp8_blocks_$b.txt 2>&1; echo "rc=$?" >> $OUT/fp8_blocks_$b.txt
  grep -vE "^  " $OUT/fp8_blocks_$b.txt | tail -14
done
echo "== done at ${SECONDS}s"
