#!/bin/bash
# Stop 57 (#29) — NOT YET RUN on the device (no machine was lent after call 2); carry [".device/dg"]: DeepGEMM (deep_gemm.gemm_fp8_fp8_bf16_nt) and
# torch._scaled_mm in its blockwise (1x128 / 128x128) form as peers for the block-scaled FP8 GEMM
# (`tirx bench gemm --in e4m3 --out bf16 --scales blocks`). No build step: the DeepGEMM revision
# in .device/dg (03d0be3, 2025-07) is pure Python and JIT-compiles its kernels with the image's
# nvcc; the CUTLASS headers (eefa171, v3.8.0+1, include/ only) ride in the same tarball.
#   BUDGET=300 bash kernels/bench/device/session57a_h200.sh
# Extra shapes: SHAPES="M,N,K M,N,K" (default: the peer script's five).
set -u
BUDGET=${BUDGET:-300}
source kernels/bench/device/lib.sh
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
/usr/local/cuda/bin/nvcc --version | tail -2
echo "== unpack at ${SECONDS}s"
rm -rf ~/dg
python3 - <<'EOF' || { echo "unpack FAILED"; exit 1; }
import glob, os, tarfile
home = os.path.expanduser("~")
tars = sorted(glob.glob(".device/dg/*.tar.xz"))
assert tars, "no .device/dg/*.tar.xz: carry .device/dg"
for p in tars:
    with tarfile.open(p, "r:xz") as t:        # python lzma: the device has no xz binary
        try:
            t.extractall(home, filter="data")
        except TypeError:                      # python without extraction filters
            t.extractall(home)
    print("unpacked", p)
print(open(os.path.join(home, "dg", "REVISION")).read().strip())
EOF
args=()
for s in ${SHAPES:-}; do args+=(--shape "$s"); done
echo "== deepgemm_peer at ${SECONDS}s"
PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/dg_jit_cache CUDA_HOME=/usr/local/cuda \
  timeout $(left 200) python3 kernels/bench/device/deepgemm_peer.py --src ~/dg ${args[@]+"${args[@]}"} \
  > $OUT/deepgemm.txt 2>&1
echo "rc=$?"
cat $OUT/deepgemm.txt
echo "== done at ${SECONDS}s"
