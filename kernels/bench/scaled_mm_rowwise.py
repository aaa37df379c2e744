#!/usr/bin/env python3
"""torch._scaled_mm with row-wise scales (E4M3 in, BF16 out, fast accumulation) on the shapes
`tirx bench gemm --in e4m3 --scales rows` sweeps: the peer for tirx's row-wise FP8 GEMM on sm_90,
where cuBLASLt has no row-wise algorithm (issue #29). Run in the same device command as the
tirx bench (kernels/bench/device/final_h200.sh).

    python3 kernels/bench/scaled_mm_rowwise.py

Per shape: the median of 30 CUDA-event-timed calls after warm-up, the inputs rotated over
enough copies to exceed the L2 cache, and the result checked against an f32 reference of the
same scaled product on one copy (relative Frobenius error).
"""

import torch

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 28672, 4096), (8192, 4096, 14336),
          (128, 8192, 8192)]
dev = "cuda"
fp8 = torch.float8_e4m3fn
for m, n, k in SHAPES:
    copies = max(2, int(200e6 // (m * k + n * k)) + 1)
    a = [(torch.randn(m, k, device=dev) * 0.5).to(fp8) for _ in range(copies)]
    b = [(torch.randn(n, k, device=dev) * 0.5).to(fp8) for _ in range(copies)]
    sa = torch.rand(m, 1, device=dev) + 0.5
    sb = torch.rand(1, n, device=dev) + 0.5

    def call(i):
        return torch._scaled_mm(a[i % copies], b[i % copies].t(), scale_a=sa, scale_b=sb,
                                out_dtype=torch.bfloat16, use_fast_accum=True)

    ref = (a[0].float() @ b[0].float().t()) * sa * sb
    got = call(0).float()
    err = ((got - ref).norm() / ref.norm()).item()
    for i in range(5):
        call(i)
    times = []
    for i in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call(i)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    ms = times[len(times) // 2]
    print(f"torch._scaled_mm rowwise {m}x{n}x{k}: {ms * 1e3:9.1f} µs  "
          f"{2 * m * n * k / ms / 1e9:7.1f} TFLOP/s  err {err:.2e}")
