#!/bin/bash
# Stop 48's first device call, carry ["devbin"] (tirx.xz, gpu_tests.xz from lead: the wide-N
# block FP8 GEMM back, its n160 staging tile under the 64-byte swizzle). Binaries are also
# kept in ~/devbin for the warm follow-up calls (the attention sweep with the FA4 wheels).
set -u
BUDGET=${BUDGET:-540}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
mkdir -p ~/devbin && cp devbin/* ~/devbin/
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. compute-sanitizer: every block-scaled FP8 config (incl. the wide ones) at 1024^3 and a tail shape"
timeout $(left 120) compute-sanitizer --print-limit 10 ./devbin/tirx bench gemm --in e4m3 --scales blocks --shape 1024,1024,1024 --shape 1000,1064,1040 > $OUT/sanitizer.txt 2>&1; echo "rc=$?" >> $OUT/sanitizer.txt; grep -E "ERROR SUMMARY|Out-of|Invalid|rc=" $OUT/sanitizer.txt | head; tail -12 $OUT/sanitizer.txt
echo "== 2. gpu_fp8 (every FP8 kernel incl. the wide ones vs f64)"
timeout $(left 150) ./devbin/gpu_tests gpu_fp8 > $OUT/gpu_fp8.txt 2>&1; echo "rc=$?" >> $OUT/gpu_fp8.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu_fp8.txt | head -20
echo "== 3. block FP8 vs cuBLASLt, every config (stop 47 H100: ours 745-883, cuBLASLt 1002-1300)"
timeout $(left 150) ./devbin/tirx bench gemm --in e4m3 --scales blocks --shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168 > $OUT/fp8_blocks.txt 2>&1; echo "rc=$?" >> $OUT/fp8_blocks.txt; tail -30 $OUT/fp8_blocks.txt
echo "== 4. #32: every accepted GEMM kernel at the small shapes below 0.95"
timeout $(left 120) ./devbin/tirx bench gemm --all --shape 64,64,4104 --shape 32,128,4096 --shape 64,256,8192 --shape 128,4096,4096 > $OUT/small_all.txt 2>&1; echo "rc=$?" >> $OUT/small_all.txt; tail -60 $OUT/small_all.txt
echo "== done at ${SECONDS}s"
