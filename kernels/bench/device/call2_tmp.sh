set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd devbin && for f in *.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f" && rm "$f"; done; chmod +x *)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== host time"; timeout 90 ./devbin/gpu_tests the_host_queues -- --nocapture 2>&1 | grep -E "host|test result|panicked" | tee $OUT/hosttime.txt
echo "== fp8 blocks + rows vs cuBLASLt"; timeout 150 ./devbin/tirx bench gemm --in e4m3 --scales blocks --shape 4096,4096,4096 --shape 8192,8192,8192 --shape 4096,7168,16384 --shape 4096,2112,7168 > $OUT/fp8_blocks.txt 2>&1; tail -12 $OUT/fp8_blocks.txt
timeout 90 ./devbin/tirx bench gemm --in e4m3 --scales rows --shape 8192,8192,8192 --shape 4096,7168,16384 > $OUT/fp8_rows.txt 2>&1; tail -8 $OUT/fp8_rows.txt
echo "== paged alone"; timeout 200 ./devbin/gpu_tests gpu_paged::paged_attention_matches -- --nocapture > $OUT/paged.txt 2>&1; echo rc=$? >> $OUT/paged.txt; wc -l $OUT/paged.txt; tail -5 $OUT/paged.txt
