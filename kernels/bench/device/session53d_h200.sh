#!/bin/bash
# Stop 53, call 2 (#32), carry [".device/b53", ".device/d53"] as call 1 (session53c_h200.sh):
# every skinny bf16 config at the 15 shapes of `dispatch/measured.rs` and three more, with the
# JSON the model's test reads (TN), the NN skinny shapes as they stand (before an NN split-K),
# the odd RMSNorm configs base vs new, and the host's choice at long rows base vs new.
set -u
BUDGET=${BUDGET:-260}
source kernels/bench/device/lib.sh
unpack .device/b53 .device/d53
N=.device/d53
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
G=""; for s in 8,4096,4096 32,4096,4096 64,4096,4096 128,4096,4096 256,4096,4096 64,8192,8192 128,8192,8192 256,8192,2048 64,14336,4096 128,4096,14336 4096,64,4096 4096,128,8192 64,64,4104 32,128,4096 64,256,8192 96,8192,8192 128,11008,4096 192,4096,4096; do G="$G --shape $s"; done
echo "== GEMM --all TN (d53) at ${SECONDS}s"
timeout $(left 90) $N/tirx bench gemm --all $G --json $OUT/bench-gemm.json > $OUT/gemm_tn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_tn.txt
sed -n '/host-side/,$p' $OUT/gemm_tn.txt | cut -c1-110
echo "== GEMM --all NN (d53) at ${SECONDS}s"
timeout $(left 50) $N/tirx bench gemm --all --layout nn --shape 1,4096,4096 --shape 16,4096,4096 --shape 64,8192,8192 --shape 128,4096,4096 --shape 64,14336,4096 > $OUT/gemm_nn.txt 2>&1; echo "rc=$?" >> $OUT/gemm_nn.txt
grep -E "^[0-9]+x|host|->|rc=" $OUT/gemm_nn.txt | cut -c1-110
for b in b53 d53; do
  echo "== rows ($b) at ${SECONDS}s"
  { timeout $(left 40) ./.device/$b/tirx bench rows --shape 16384,1001 --kernel rmsnorm_odd/o1k; timeout $(left 40) ./.device/$b/tirx bench rows --shape 8192,3001 --kernel rmsnorm_odd/o3k
    timeout $(left 50) ./.device/$b/tirx bench rows --shape 4096,65536 --shape 8192,32768 --shape 1024,262144 --shape 2048,20001 --shape 1024,50257; echo "rc=$?"; } > $OUT/rows_$b.txt 2>&1
  grep -E "^(softmax|rmsnorm|layernorm)|rc=" $OUT/rows_$b.txt | cut -c1-100
done
echo "== done at ${SECONDS}s"
