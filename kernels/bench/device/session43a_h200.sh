#!/bin/bash
# One device call (nvidia-h200), carry ["devbin"], 2026-12-05 (stop 43), three questions:
#  1. tirx-candle's GPU tests (#34; never ran before): devbin/candle_tests is the stripped
#     `cargo test --features gpu --no-run` binary of tirx-candle (built as `cargo xtask
#     test-candle` builds, with --features gpu); candle links cuBLAS 13 and cuRAND 10, taken
#     from the lib dirs of torch's nvidia wheels.
#  2. #32: where the one-CTA long row kernels overtake the c10k..c16k register kernels the
#     capacity rule picks (last stop: at 8192x16384 the long ones won by 20-40 %): rows
#     {1024, 4096, 8192} x cols {10240, 12288, 14336, 16384}, the host's choice and each kernel
#     forced, torch (and Liger when carried) beside.
#  3. #29: ncu of the row-wise FP8 GEMM at 8192^3 beside torch._scaled_mm's (fp8_profile_h200.sh).
set -u
BUDGET=${BUDGET:-540}
left() { local l=$((BUDGET - SECONDS)); [ $l -lt $1 ] && echo $((l > 5 ? l : 5)) || echo $1; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && ls *.gz >/dev/null 2>&1 && gunzip -f *.gz; chmod +x *)
date -u > $OUT/date.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >> $OUT/date.txt 2>&1
cat $OUT/date.txt
echo "== 1. tirx-candle GPU tests"
NV=$(python3 - <<'PY'
import glob, os, site
dirs = []
for sp in site.getsitepackages():
    dirs += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib")))
    dirs += sorted(glob.glob(os.path.join(sp, "nvidia", "cu13", "lib")))
print(":".join(dict.fromkeys(dirs)))
PY
)
echo "nvidia lib dirs: $NV" | cut -c1-400
ls $(echo $NV | tr ':' ' ') 2>/dev/null | grep -E "libcublas.so|libcurand.so" | head
if [ -x devbin/candle_tests ]; then
  LD_LIBRARY_PATH=$NV:$LD_LIBRARY_PATH timeout $(left 120) ./devbin/candle_tests > $OUT/candle.txt 2>&1
  echo "rc=$?" >> $OUT/candle.txt; grep -E "^test |test result|FAILED|panicked|error|rc=" $OUT/candle.txt | head -40
fi
# Liger (Triton, one small wheel) when carried as .peers/liger (../shared/tools/peer-wheels.sh pins 0.8.5).
PEER="--peer torch"
if ls .peers/liger/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .peers/liger/*.whl && export PYTHONPATH=/tmp/site && PEER="--peer torch --peer liger"
fi
echo "== 2. rows: register kernels vs long kernels, 10k..16k columns"
S=""
for r in 1024 4096 8192; do for c in 10240 12288 14336 16384; do S="$S --shape $r,$c"; done; done
timeout $(left 80) python3 kernels/bench/rows_peers.py $S $PEER --out $OUT/rows-peers.json > $OUT/peers.txt 2>&1
echo "rc=$?" >> $OUT/peers.txt; tail -2 $OUT/peers.txt
timeout $(left 60) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $S --json $OUT/host.json > $OUT/host.txt 2>&1
echo "rc=$?" >> $OUT/host.txt; grep -E "^==|x[0-9]+ |geometric|rc=" $OUT/host.txt | head -60
timeout $(left 200) ./devbin/tirx bench rows --peers $OUT/rows-peers.json $S --kernel softmax_long --kernel rmsnorm_long --kernel layernorm_long --kernel softmax --kernel rmsnorm --kernel layernorm --json $OUT/forced.json > $OUT/forced.txt 2>&1
echo "rc=$?" >> $OUT/forced.txt; grep -E "^==|x[0-9]+ |rc=" $OUT/forced.txt | grep -v minimum | head -150
echo "== 3. ncu row-wise FP8 8192^3, ours and torch._scaled_mm"
if [ $(left 400) -gt 120 ]; then BUDGET_NCU=1 bash kernels/bench/device/fp8_profile_h200.sh 2>&1 | tail -170; fi
