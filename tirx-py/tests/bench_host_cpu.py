#!/usr/bin/env python3
"""Host time of a checked (not launched) tirx call on the tests' stand-in torch tensors, on a
machine with neither a GPU nor torch: the binding's read + check, and the Python layer in
front of it (`explain="check"` returns before the runtime). The stand-ins' fields are Python
methods (about 0.6 µs a tensor), so this compares builds on one machine; it does not predict
the H200 (`kernels/bench/host_overhead.py` measures real tensors there). Issue #32,
docs/perf/python-host-h200.md.

    python3 tirx-py/tests/bench_host_cpu.py      # with the tirx wheel installed
"""

import os
import sys
import time
import types

# A stand-in torch before tirx is imported (by the tests' module too), so that the Python
# layer takes its torch path: torch's current stream (0) from the raw getter, no DLPack.
fake = types.ModuleType("torch")
fake.Tensor = type("Tensor", (), {})
fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda ordinal: 0)
sys.modules["torch"] = fake
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_binding as tb  # noqa: E402  (the stand-ins: FakeTorchTensor)
import tirx  # noqa: E402
import tirx._tirx as _tirx  # noqa: E402



class Tensor(tb.FakeTorchTensor):
    """The stand-in with the one field the Python layer reads besides the binding's."""

    requires_grad = False


fake.Tensor = Tensor
if hasattr(tirx, "_Tensor"):  # the class, as the layer keeps it since issue #32
    tirx._Tensor = Tensor

x = Tensor((64, 4096))
y = Tensor((64, 4096))
a = Tensor((64, 1024))
b = Tensor((1024, 1024), strides=(1, 1024))
d = Tensor((64, 1024))


def per_call(name, fn, n=20000):
    for _ in range(500):
        fn()
    best = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t) / n * 1e6)
    best.sort()
    print(f"{name:<52} {best[len(best) // 2]:6.2f} µs/call (median of 7)")


per_call("_tirx.row(softmax, x, y, check) [read 2 + check]",
         lambda: _tirx.row("softmax", x, y, stream=0, dlpack_stream=-1, explain="check"))
per_call("_tirx.gemm(a, b, d, check) [read 3 + check]",
         lambda: _tirx.gemm(a, b, d, stream=0, dlpack_stream=-1, explain="check"))
per_call("one stand-in's data_ptr, shape, stride, dtype, ...",
         lambda: (x.is_cuda, x.is_neg(), x.is_conj(), x.shape, x.stride(), x.data_ptr(),
                  x.get_device(), x.dtype))


def phases(name, fn, n=20000):
    for _ in range(500):
        fn()
    _tirx._host_profile(True)
    for _ in range(n):
        fn()
    got = _tirx._host_profile(False)
    print(f"{name:<52} " + "  ".join(f"{p} {ns / n / 1e3:5.2f}" for p, _c, ns in got if _c))


phases("phases, row", lambda: _tirx.row("softmax", x, y, stream=0, dlpack_stream=-1, explain="check"))
phases("phases, gemm", lambda: _tirx.gemm(a, b, d, stream=0, dlpack_stream=-1, explain="check"))
per_call("tirx.softmax(x, out=y, _explain=check)", lambda: tirx.softmax(x, out=y, _explain="check"))
per_call("tirx.gemm(a, b, out=d, _explain=check)", lambda: tirx.gemm(a, b, out=d, _explain="check"))
