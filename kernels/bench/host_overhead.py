#!/usr/bin/env python3
"""Where a short `tirx` call from Python spends its host time (issue #34).

    python3 kernels/bench/host_overhead.py

Each line is the host time per call (time.perf_counter over N calls issued back to back, the
GPU left running: the kernels here take a few µs, so the host is the bound), for tirx's calls
and for the pieces a call is made of (torch's DLPack export, its current-stream lookup, an
allocation), beside torch's own op on the same tensors. Then cProfile of tirx.gemm: the
Python-level split of one call. Then the binding's own split of a call by phase (read, check, runtime,
choose, launch). Nothing here checks results (py_check.py does).
"""

import cProfile
import pstats
import time

import torch

import tirx
import tirx._tirx as _tirx

N = 2000
dev = torch.device("cuda")


def per_call(name, fn, n=N):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t) / n * 1e6
    print(f"{name:<46} host {host:7.2f} µs/call   with GPU {wall:7.2f} µs/call")


x = torch.randn(64, 4096, device=dev, dtype=torch.bfloat16)
y = torch.empty_like(x)
w = torch.randn(4096, device=dev, dtype=torch.bfloat16)
a = torch.randn(64, 1024, device=dev, dtype=torch.bfloat16)
wt = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
d = torch.empty(64, 1024, device=dev, dtype=torch.bfloat16)
s = torch.cuda.current_stream()

per_call("torch.softmax(x, -1, out=y)", lambda: torch.softmax(x, -1, out=y))
per_call("torch.mm(a, wt.t(), out=d)", lambda: torch.mm(a, wt.t(), out=d))
per_call("torch.empty(64, 1024)", lambda: torch.empty(64, 1024, device=dev, dtype=torch.bfloat16))
per_call("torch.cuda.current_stream(dev).cuda_stream", lambda: torch.cuda.current_stream(dev).cuda_stream)
per_call("x.__dlpack__(stream=-1)", lambda: x.__dlpack__(stream=-1))
per_call("x.__dlpack__()", lambda: x.__dlpack__())
per_call("x.__cuda_array_interface__", lambda: x.__cuda_array_interface__)
per_call("x.data_ptr(), shape, stride, dtype", lambda: (x.data_ptr(), x.shape, x.stride(), x.dtype))
raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
if raw is not None:
    per_call("torch._C._cuda_getCurrentRawStream(0)", lambda: raw(0))
per_call("tirx.softmax(x, out=y)", lambda: tirx.softmax(x, out=y))
per_call("tirx.softmax(x)", lambda: tirx.softmax(x))
per_call("_tirx.row(check only)", lambda: _tirx.row("softmax", x, None, explain="check", stream=s.cuda_stream, dlpack_stream=-1))
per_call("_tirx.row(out=y) launch", lambda: _tirx.row("softmax", x, y, stream=s.cuda_stream, dlpack_stream=-1))
per_call("tirx.rms_norm(x, w, out=y)", lambda: tirx.rms_norm(x, w, out=y))
torch.cuda.synchronize()
free_before = torch.cuda.mem_get_info()[0]
per_call("tirx.gemm(a, wt.t(), out=d)", lambda: tirx.gemm(a, wt.t(), out=d))
per_call("tirx.gemm(a, wt.t())", lambda: tirx.gemm(a, wt.t()))
per_call("_tirx.gemm(out=d) launch", lambda: _tirx.gemm(a, wt.t(), d, stream=s.cuda_stream, dlpack_stream=-1))
print(f"chosen: {tirx.last_choice()}")
torch.cuda.synchronize()
# A split-K choice keeps one workspace per stream; before issue #32's fix the binding's
# per-call stream wrapper made it allocate (and keep) a new one every call.
print(f"device memory taken during the GEMM calls above (torch reuses its cached blocks): "
      f"{(free_before - torch.cuda.mem_get_info()[0]) / 2**20:.1f} MiB")


def phases(name, fn, n=N):
    """The binding's own split of a call (tirx-py/src/profile.rs), mean µs per call."""
    prof = getattr(_tirx, "_host_profile", None)
    if prof is None:
        return
    for _ in range(50):
        fn()
    prof(True)
    for _ in range(n):
        fn()
    got = prof(False)
    torch.cuda.synchronize()
    parts = "  ".join(f"{p} {ns / n / 1e3:6.2f}" for p, _calls, ns in got)
    print(f"{name:<34} µs/call: {parts}")


phases("tirx.softmax(x, out=y)", lambda: tirx.softmax(x, out=y))
phases("tirx.rms_norm(x, w, out=y)", lambda: tirx.rms_norm(x, w, out=y))
phases("tirx.gemm(a, wt.t(), out=d)", lambda: tirx.gemm(a, wt.t(), out=d))
phases("tirx.gemm(a, wt.t())", lambda: tirx.gemm(a, wt.t()))

pr = cProfile.Profile()
pr.enable()
for _ in range(N):
    tirx.gemm(a, wt.t())
pr.disable()
torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(12)
