#!/bin/bash
# Stop 51's last call, not run (the device started no machine; 336 s were left). For the next
# stop, carry ["devbin4"] holding tirx.xz and gpu_tests.xz built from main 41f5797 or later
# (the per-launch driver query fixed; odd rows walked from their aligned column and given to
# the chunk walkers from 4096 columns; helper model's M = 64 split choices), each stripped and
# `xz -6`. New binary only: the base numbers are stop 51 call 3's (land51's tirx, H100); for a
# side-by-side A/B add tirx_base.xz (1643e70's tirx) and run the three benches with it too.
set -u
BUDGET=${BUDGET:-170}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin4 && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x tirx gpu_tests; [ -f tirx_base ] && chmod +x tirx_base)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== host time of a launch"
timeout $(left 30) ./devbin4/gpu_tests a_split_k_plan_queues --nocapture > $OUT/host_time.txt 2>&1; echo "rc=$?" >> $OUT/host_time.txt
grep -E "µs|test result|rc=" $OUT/host_time.txt | head -8
echo "== GEMM bf16, host's choice at ${SECONDS}s"
timeout $(left 30) ./devbin4/tirx bench gemm --shape 64,8192,8192 --shape 64,14336,4096 --shape 64,11008,4096 --shape 128,4096,4096 --shape 1,4096,4096 > $OUT/gemm.txt 2>&1; echo "rc=$?" >> $OUT/gemm.txt
grep -E "^[0-9]|geometric|rc=" $OUT/gemm.txt | tail -8
echo "== rows, host's choice at ${SECONDS}s"
timeout $(left 50) ./devbin4/tirx bench rows --shape 1024,50257 --shape 2048,20001 --shape 4096,4999 --shape 8192,7171 --shape 4096,65536 > $OUT/rows.txt 2>&1; echo "rc=$?" >> $OUT/rows.txt
grep -E "^(softmax|rmsnorm|layernorm)|rc=" $OUT/rows.txt | tail -16
echo "== the register kernels forced at an odd width at ${SECONDS}s"
timeout $(left 40) ./devbin4/tirx bench rows --shape 4096,4999 --shape 8192,7171 --op softmax --kernel softmax > $OUT/forced_reg.txt 2>&1; echo "rc=$?" >> $OUT/forced_reg.txt
grep -E "^==|^softmax|rc=" $OUT/forced_reg.txt | head -30
echo "== done at ${SECONDS}s"
