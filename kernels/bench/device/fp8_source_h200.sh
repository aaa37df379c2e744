set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd devbin && gunzip -f *.gz 2>/dev/null; chmod +x * && cd ..
timeout 300 ncu --section SourceCounters --section WarpStateStats --import-source no -k regex:gemm_sm90_fp8 -c 1 --launch-skip 3 -o $OUT/ours ./devbin/tirx bench gemm --in e4m3 --out bf16 --scales rows --shape 8192,8192,8192 > $OUT/log.txt 2>&1
ncu --import $OUT/ours.ncu-rep --page source --csv --print-source sass > $OUT/sass.csv 2>&1
head -3 $OUT/sass.csv | cut -c1-600
wc -l $OUT/sass.csv
