#!/bin/bash
# One device call (nvidia-h200 or H100), carry ["devbin"]: tirx-candle on a GPU — its GPU tests
# (tirx-candle/src/gpu_tests.rs: every op against candle's own ops in f32) and the transformer
# block example (tirx-candle/examples/transformer_block.rs: tirx's block against candle's, the
# time per token). The device has no Rust and no network: both binaries are built here.
#
# Build (from the repository root, on the build machine; `cargo xtask test-candle` once first,
# for the CUDA 13.0 kit in target/tirx-tools/cuda/ — nvcc for candle's kernels, link stubs):
#   K=$PWD/target/tirx-tools/cuda/py/nvidia/cu13
#   export CUDA_PATH=$K PATH=$K/bin:$PATH CUDA_COMPUTE_CAP=90 CARGO_TARGET_DIR=$PWD/target/candle
#   cargo test --release --locked --manifest-path tirx-candle/Cargo.toml --features gpu --no-run
#     -> target/candle/release/deps/tirx_candle-<hash> (the newest executable of that name;
#        cargo prints its path as "Executable unittests src/lib.rs (...)")
#   cargo build --release --locked --manifest-path tirx-candle/Cargo.toml --example transformer_block
#     -> target/candle/release/examples/transformer_block
# Package (strip, then xz; the script decompresses with python's lzma, the device has no xz):
#   mkdir -p devbin
#   strip -o devbin/candle_gpu_tests target/candle/release/deps/tirx_candle-<hash>
#   strip -o devbin/transformer_block target/candle/release/examples/transformer_block
#   xz -9 -f devbin/candle_gpu_tests devbin/transformer_block
#   -> devbin/candle_gpu_tests.xz, devbin/transformer_block.xz (devbin/ is git-ignored)
#
# Libraries (`ldd`, built 2026-12-06): NEEDED libcuda.so.1 (the driver's), libcurand.so.10,
# libcublas.so.13 (which itself needs libcublasLt.so.13), libgcc_s, libm, libc (GLIBC_2.34 at
# most). cudarc also asks for libnvrtc and libcublasLt; they are not NEEDED (the linker's
# --as-needed: no symbol of theirs is referenced). No libcudart. CUDA 13's are in
# /usr/local/cuda/lib64 on the device (torch 2.11+cu130, cuBLASLt 13.1); torch's own CUDA 13
# wheels (site-packages/nvidia/*/lib) are appended as a fallback. Nothing else is carried
# (libcurand alone is ~100 MB: a device without CUDA 13's cuRAND cannot run candle's CUDA
# backend at all). $OUT/ldd.txt records what resolved.
#
# Sizes: stripped 69.1 MB (tests) and 68.5 MB (example), mostly PTX text (tirx's catalogue and
# candle's kernels); xz -9: 3.05 MB and 2.90 MB. The tracked tree is 62.2 MB, so tree + devbin/
# (5.96 MB) is past the 64 MiB carry: call from a tree without tests/snapshots (53 MB), as
# session47_h200.sh's header says:
#   git switch -c devtree && git rm -rq tests/snapshots && git commit -qm "device tree"
# then this script with carry ["devbin"], and after it: git switch candle && git branch -D devtree
set -u
BUDGET=${BUDGET:-520}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
# CUDA 13's libraries: the toolkit's, then torch's wheels (only where the toolkit lacks one).
TORCH_LIBS=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print(':'.join(sorted(glob.glob(d + '/nvidia/*/lib'))))" 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${TORCH_LIBS:+:$TORCH_LIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
(cd devbin && for f in *.xz; do [ -e "$f" ] && python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" > $OUT/ldd.txt
for b in candle_gpu_tests transformer_block; do echo "== $b" >> $OUT/ldd.txt; ldd devbin/$b >> $OUT/ldd.txt 2>&1; done
grep -E "not found|==" $OUT/ldd.txt
echo "== 1. tirx-candle's tests on the GPU (the argument checks too; the device-mismatch one takes its GPU branch here)"
timeout $(left 240) ./devbin/candle_gpu_tests --test-threads=1 > $OUT/gpu_tests.txt 2>&1; echo "rc=$?" >> $OUT/gpu_tests.txt
grep -E "^test |test result|panicked|FAILED|rc=" $OUT/gpu_tests.txt | head -40
echo "== 2. the transformer block, 2048 tokens (py_check.py's block on torch, H200: tirx 0.551 µs/token, torch 0.541)"
timeout $(left 180) ./devbin/transformer_block --tokens 2048 --runs 20 > $OUT/block.txt 2>&1; echo "rc=$?" >> $OUT/block.txt
cat $OUT/block.txt
echo "== 3. the block on ragged shapes (1000 tokens: a tail in every M tile and attention block)"
timeout $(left 90) ./devbin/transformer_block --tokens 1000 --runs 5 > $OUT/block_1000.txt 2>&1; echo "rc=$?" >> $OUT/block_1000.txt
cat $OUT/block_1000.txt
echo "== done at ${SECONDS}s"
