#!/bin/bash
# Shared by the session scripts (`source kernels/bench/device/lib.sh`): the time left of a
# call's budget, the binaries' unpacking and the CUDA library path. Set BUDGET (seconds) first.
#   left N       N, or what is left of BUDGET when that is less (at least 5): a `timeout` value
#   unpack DIR…  decompress every DIR/*.xz in place (python lzma: the device has no xz) and make
#                tirx*, gpu_tests executable
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
unpack() {
  local d f
  for d in "$@"; do
    [ -d "$d" ] || continue
    for f in "$d"/*.xz; do
      [ -f "$f" ] || continue
      python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"
    done
    chmod +x "$d"/tirx* "$d"/gpu_tests 2>/dev/null
  done
  return 0
}
