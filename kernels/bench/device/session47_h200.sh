#!/bin/bash
# Stop 47's device call (nvidia-h200 or H100), carry ["devbin"]. devbin/ (xz): tirx, gpu_tests
# (tirx-tests --features gpu) and runtime_tests (tirx-runtime --features gpu) built from main at
# stop 46's last landing: prepared-launch cache + reduce checked first (#32), programmatic
# dependent launch in split-K / decode (#32 #31), 128-row decode packing (#31), pages of 16/32 gathered into wide key blocks (#31).
#
# Carry: the tracked tree is ~61 MB (tests/snapshots ~50 MB) and the limit 64 MiB with the
# binaries, so call from a tree without the snapshots: in the checkout,
#   git switch -c devtree && git rm -rq tests/snapshots && git commit -qm "device tree"
# then `BUDGET=… bash kernels/bench/device/session47_h200.sh` with carry ["devbin"], and after it
#   git switch main && git branch -D devtree
# Binaries: cargo build --release -p tirx-kernels --bin tirx; cargo test --release -p tirx-tests
# --features gpu --no-run (newest target/release/deps/main-*); cargo test --release -p
# tirx-runtime --features gpu --no-run (newest target/release/deps/tirx_runtime-*); strip each,
# xz -9 into devbin/ as tirx.xz, gpu_tests.xz, runtime_tests.xz.
set -u
BUDGET=${BUDGET:-520}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== 1. small GEMMs, host's choice vs cuBLASLt (stop 46 on an H100: 1x4096^2 0.53, 16x4096^2 0.56, 64x64x4104 0.36; stop 44: 0.86 0.86 0.37)"
S="--shape 1,4096,4096 --shape 16,4096,4096 --shape 64,64,4104 --shape 32,128,4096 --shape 64,256,8192 --shape 1,8192,8192 --shape 128,4096,4096"
timeout $(left 60) ./devbin/tirx bench gemm $S > $OUT/small.txt 2>&1; echo "rc=$?" >> $OUT/small.txt; tail -16 $OUT/small.txt
echo "== 2. GPU tests: the launch cache and PDL, split-K, gemv, decode, paged refusals"
timeout $(left 40) ./devbin/runtime_tests > $OUT/runtime.txt 2>&1; echo "rc=$?" >> $OUT/runtime.txt; grep -E "^test |test result|panicked|rc=" $OUT/runtime.txt | tail -20
timeout $(left 150) ./devbin/gpu_tests griddep gpu_splitk gpu_gemv gpu_decode gpu_paged gpu_fp8::fp8_split > $OUT/gpu.txt 2>&1; echo "rc=$?" >> $OUT/gpu.txt; grep -E "^test |test result|FAILED|panicked|rc=" $OUT/gpu.txt | head -40
echo "== 3. decode vs cuDNN (stop 46 on an H100: geomean 1.277; b8 64/8 SQ16 unpacked 0.978)"
D="--shape 1,32,8,1,8192,128 --shape 16,32,8,1,8192,128 --shape 64,32,8,1,4096,128 --shape 4,32,8,4,32768,128 --shape 1,32,8,1,131072,128 --shape 8,64,8,16,16384,128 --shape 4,64,8,16,32768,128"
timeout $(left 45) python3 kernels/bench/attention_peers.py $D --out $OUT/dec-peers.json > $OUT/dec_peers.txt 2>&1; echo "rc=$?" >> $OUT/dec_peers.txt
timeout $(left 40) ./devbin/tirx bench attention $D --decode --peers $OUT/dec-peers.json > $OUT/dec.txt 2>&1; echo "rc=$?" >> $OUT/dec.txt; tail -11 $OUT/dec.txt
echo "== 4. why cuBLASLt refuses the block-scaled FP8 GEMM (its log)"
CUBLASLT_LOG_LEVEL=5 timeout $(left 30) ./devbin/tirx bench gemm --in e4m3 --scales blocks --shape 4096,4096,4096 > $OUT/fp8_block_log.txt 2>&1; echo "rc=$?" >> $OUT/fp8_block_log.txt; grep -i -E "error|not supported|invalid|scale" $OUT/fp8_block_log.txt | head -20
echo "== done at ${SECONDS}s"
