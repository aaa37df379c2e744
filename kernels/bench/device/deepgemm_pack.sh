#!/bin/bash
# Rebuilds .device/dg/deepgemm-03d0be3-cutlass-eefa171.tar.xz, the DeepGEMM peer that
# session57a_h200.sh / deepgemm_peer.py run (issue #29; the tarball of helper dgpeer, same names). Sources: the library's `fetch` of
# github:deepseek-ai/DeepGEMM and github:NVIDIA/cutlass (bare git dirs, passed as $1 and $2).
# DeepGEMM 03d0be3 (2025-07-02) is the last revision that JIT-compiles its kernels with nvcc
# from Python (later ones build a torch C++ extension); CUTLASS eefa171 (v3.8.0+1) is its
# submodule pin, of which only include/cute and include/cutlass are packed, under
# deep_gemm/include where its JIT looks. Third-party code: carried to the device, never
# committed.
#   bash kernels/bench/device/deepgemm_pack.sh /work/.mirror/deepseek-ai+DeepGEMM/repo /work/.mirror/NVIDIA+cutlass/repo
set -eu
DG=${1:?DeepGEMM git dir}; CU=${2:?CUTLASS git dir}
W=$(mktemp -d); mkdir -p $W/dg .device/dg
git --git-dir="$DG" archive 03d0be3d2d03b6eed3c99d683c0620949a13a826 deep_gemm LICENSE | tar -x -C $W/dg
git --git-dir="$CU" archive eefa171318b79cbe2e78514d4cce5cd0fe919d0c include/cute include/cutlass LICENSE.txt \
  | tar -x -C $W/dg/deep_gemm
mv $W/dg/deep_gemm/LICENSE.txt $W/dg/deep_gemm/include/CUTLASS_LICENSE.txt
printf '%s\n' "DeepGEMM 03d0be3d2d03b6eed3c99d683c0620949a13a826 (2025-07-02, last pure-Python-JIT revision)" \
  "CUTLASS eefa171318b79cbe2e78514d4cce5cd0fe919d0c (v3.8.0+1, the submodule pin of that DeepGEMM commit; include/cute, include/cutlass only)" > $W/dg/REVISION
tar -C $W -cJf .device/dg/deepgemm-03d0be3-cutlass-eefa171.tar.xz dg
rm -rf $W; ls -la .device/dg
