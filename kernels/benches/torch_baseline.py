"""Baselines measured the same way as `tirx bench`, for the same device command:
cuBLAS bf16 GEMM through torch.matmul (D = A @ B^T, A MxK, B NxK) and a plain device copy.
CUDA events around each run, warm-up first, the median of 50 timed runs, inputs rotated over
enough sets to exceed twice the 60 MB L2. Prints one line per measurement."""
import sys
import torch

RUNS, WARMUP, L2 = 50, 5, 60 << 20


def sets_for(nbytes):
    return max(2, min(16, -(-2 * L2 // nbytes)))


def median_ms(fn, sets):
    for i in range(WARMUP):
        fn(i % sets)
    times = []
    for i in range(RUNS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(i % sets)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def gemm(m, n, k):
    sets = sets_for(2 * (m * k + n * k + m * n))
    a = [torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1 for _ in range(sets)]
    b = [torch.rand(n, k, device="cuda", dtype=torch.bfloat16) * 2 - 1 for _ in range(sets)]
    d = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    ms = median_ms(lambda i: torch.matmul(a[i], b[i].t(), out=d[i]), sets)
    print(f"cublas (torch.matmul) {m}x{n}x{k:<14} {ms:10.4f} {2 * m * n * k / ms / 1e9:8.1f} TFLOP/s")


def copy(m, n):
    sets = sets_for(4 * m * n)
    src = [torch.rand(m, n, device="cuda").to(torch.bfloat16) for _ in range(sets)]
    dst = [torch.empty_like(x) for x in src]
    ms = median_ms(lambda i: dst[i].copy_(src[i]), sets)
    print(f"torch copy_ {m}x{n:<25} {ms:10.4f} {4 * m * n / ms / 1e9:8.2f} TB/s")


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for arg in sys.argv[1:]:
        dims = [int(x) for x in arg.split(",")]
        gemm(*dims) if len(dims) == 3 else copy(*dims)
