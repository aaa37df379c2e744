#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"] (release `tirx` as devbin/tirx.gz): the
# decode shapes whose split changed with the per-wave fill term (#32, 2026-12-04), the M = 64
# shapes where the model keeps ws/n64 beside every split-K config, and the scaled f16 -> f32
# GEMM at M = 127 beside the split-K plan, with an ncu profile of its one-launch kernel.
set -u
BUDGET=${BUDGET:-300}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz && chmod +x * && cd ..
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== 1. host's choice at the re-split decode shapes"
S=""; for s in 1,4096,4096 16,4096,4096 8,4096,4096 1,4096,14336 8,4096,14336 1,14336,4096 8,14336,4096 1,8192,8192 2,6144,6144 4,11008,4096 12,5120,13824; do S="$S --shape $s"; done
timeout $(left 90) ./devbin/tirx bench gemm $S > $OUT/decode.txt 2>&1; echo "rc=$?" >> $OUT/decode.txt
tail -32 $OUT/decode.txt
echo "== 2. M = 64 / 128: ws beside split-K"
timeout $(left 80) ./devbin/tirx bench gemm --kernel gemm_sm90_ws --kernel gemm_sm90_splitk --shape 64,14336,4096 --shape 64,8192,8192 --shape 128,4096,4096 > $OUT/m64.txt 2>&1; echo "rc=$?" >> $OUT/m64.txt
tail -12 $OUT/m64.txt
echo "== 3. scaled f16 -> f32 at M = 127"
timeout $(left 60) ./devbin/tirx bench gemm --in f16 --out f32 --alpha 1.5 --beta -0.5 --kernel gemm_sm90_tma_epi_abc --kernel gemm_sm90_splitk --shape 127,8192,8192 > $OUT/scaled.txt 2>&1; echo "rc=$?" >> $OUT/scaled.txt
tail -8 $OUT/scaled.txt
timeout $(left 90) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats -k regex:tma_epi_abc -c 1 ./devbin/tirx run gemm_sm90_tma_epi_abc --config f16_f32_n64 --m 127 --n 8192 --k 8192 > $OUT/ncu_abc.txt 2>&1
grep -E "^  [a-z_].*\(|DRAM Throughput|Duration|Registers Per|Achieved Occupancy|No Eligible|Dynamic Shared|Stall|Grid Size" $OUT/ncu_abc.txt | head -30
