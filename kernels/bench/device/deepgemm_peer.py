#!/usr/bin/env python3
"""DeepGEMM (`deep_gemm.gemm_fp8_fp8_bf16_nt`) and torch._scaled_mm in its blockwise form as peers
for `tirx bench gemm --in e4m3 --out bf16 --scales blocks` (issue #29).

The recipe (DeepSeek-V3): A e4m3 [M,K] with f32 scales per 1x128 block, sa [M, K/128]; B e4m3
[N,K] with f32 scales per 128x128 block, sb [ceil(N/128), K/128];
D bf16 = sum_kb (A_kb . B_kb^T) * sa[m,kb] * sb[n/128,kb].

DeepGEMM's source is not ours and is not in the repo: the device script unpacks a tarball of it
(a pure-Python JIT revision, whose kernels nvcc compiles at run time) and passes its folder with
--src. This file only drives it.

    python3 kernels/bench/device/deepgemm_peer.py --src ~/dg [--shape M,N,K ...]

Per shape: random inputs quantised per the recipe (amax-based E4M3 scales per block); one call
checked against a float64 torch reference on the dequantised inputs (relative Frobenius error,
a failure above 1e-2); then timing: CUDA events around each call, >= 50 timed calls after
warm-up, median reported, inputs rotated over enough copies to exceed 2x the L2. Each timed call
is queued behind a GPU sleep longer than the host's enqueue time, so the events measure the
kernel and not the Python launch path (DeepGEMM's host side builds TMA descriptors and hashes
its kernel source on every call; its host microseconds per call are printed separately).
The JIT compile (first call of a shape) is never timed with the kernel; its time is printed.

Output, one line per shape and peer:
    deepgemm M,N,K  <median us>  <TFLOP/s>  err=<..>
    scaled_mm-block M,N,K  <median us>  <TFLOP/s>  err=<..>     (or `... unsupported: <reason>`)
Any exception prints a clear line and the next shape runs.
"""

import argparse
import os
import statistics
import sys
import time
import traceback

DEFAULT_SHAPES = ["4096,4096,4096", "8192,8192,8192", "4096,2112,7168", "4096,7168,16384",
                  "128,7168,2048"]
L2_BYTES = 60e6          # H100 50 MB, H200 60 MB: rotate over > 2x this
E4M3_MAX = 448.0
ERR_LIMIT = 1e-2


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--src", default=os.environ.get("DG_SRC", os.path.expanduser("~/dg")),
                   help="folder holding the deep_gemm package (unpacked tarball)")
    p.add_argument("--shape", action="append", default=None, help="M,N,K (repeatable)")
    p.add_argument("--iters", type=int, default=60, help="timed calls per shape (>= 50)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--no-scaled-mm", action="store_true", help="skip the torch._scaled_mm peer")
    p.add_argument("--no-deepgemm", action="store_true", help="skip DeepGEMM")
    a = p.parse_args()
    a.shape = a.shape or DEFAULT_SHAPES
    a.iters = max(a.iters, 50)
    return a


def setup_env(src):
    """Environment the JIT needs, set before deep_gemm (and torch's cpp_extension) is imported."""
    cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    os.environ["CUDA_HOME"] = cuda_home
    os.environ["PATH"] = os.path.join(cuda_home, "bin") + os.pathsep + os.environ.get("PATH", "")
    nvcc = os.path.join(cuda_home, "bin", "nvcc")
    if os.path.exists(nvcc):
        os.environ.setdefault("DG_JIT_NVCC_COMPILER", nvcc)
    os.environ.setdefault("DG_JIT_CACHE_DIR", "/tmp/dg_jit_cache")
    os.environ.setdefault("DG_PRINT_CONFIGS", "1")   # one line per compiled kernel: its blocks
    os.makedirs(os.environ["DG_JIT_CACHE_DIR"], exist_ok=True)
    if src not in sys.path:
        sys.path.insert(0, src)


# ---------------------------------------------------------------- quantisation and reference

def ceil_div(a, b):
    return (a + b - 1) // b


def quant_1x128(x):
    """x f32 [M,K], K % 128 == 0 -> (e4m3 [M,K], f32 scales [M,K/128]) with x ~= q * s."""
    import torch
    m, k = x.shape
    xb = x.view(m, k // 128, 128)
    amax = xb.abs().amax(dim=2).clamp(min=1e-4)
    s = amax / E4M3_MAX
    q = (xb / s.unsqueeze(2)).to(torch.float8_e4m3fn).view(m, k)
    return q, s.float().contiguous()


def quant_128x128(y):
    """y f32 [N,K], K % 128 == 0 -> (e4m3 [N,K], f32 scales [ceil(N/128), K/128])."""
    import torch
    n, k = y.shape
    nb = ceil_div(n, 128)
    yp = torch.zeros(nb * 128, k, device=y.device, dtype=y.dtype)
    yp[:n] = y
    yb = yp.view(nb, 128, k // 128, 128)
    amax = yb.abs().amax(dim=(1, 3)).clamp(min=1e-4)
    s = amax / E4M3_MAX
    q = (yb / s.view(nb, 1, k // 128, 1)).to(torch.float8_e4m3fn).view(nb * 128, k)[:n]
    return q.contiguous(), s.float().contiguous()


def dequant_f64(q, s, rows_per_scale):
    """q e4m3 [R,K], s [ceil(R/rows_per_scale), K/128] -> float64 [R,K]."""
    import torch
    r, k = q.shape
    full = s.double().repeat_interleave(rows_per_scale, dim=0)[:r]
    full = full.repeat_interleave(128, dim=1)
    return q.double() * full


def col_major_tma_aligned(sa):
    """sa [M, KB] in the layout DeepGEMM wants: column-major, M padded to 16 bytes (4 floats)."""
    import torch
    m, kb = sa.shape
    am = ceil_div(m, 4) * 4
    t = torch.empty(kb, am, device=sa.device, dtype=torch.float32).t()[:m]
    t.copy_(sa)
    return t


def rel_err(got, ref):
    import torch
    d = got.double() - ref
    return (torch.linalg.norm(d) / torch.linalg.norm(ref)).item()


# ---------------------------------------------------------------- timing

class Timer:
    """Median of per-call CUDA-event times; each call queued behind a GPU sleep that covers the
    host's enqueue time, so the host's launch path is not in the measurement."""

    def __init__(self):
        import torch
        self.torch = torch
        # cycles per microsecond of the sleep kernel: calibrate once
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        s.record()
        torch.cuda._sleep(2_000_000)
        e.record()
        e.synchronize()
        us = s.elapsed_time(e) * 1e3
        self.cycles_per_us = 2_000_000 / max(us, 1.0)

    def host_us(self, fn, n=10):
        """Host time to enqueue one call (GPU kept busy so the queue never blocks)."""
        torch = self.torch
        torch.cuda.synchronize()
        torch.cuda._sleep(int(self.cycles_per_us * 200_000))  # 200 ms of cover
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        t = (time.perf_counter() - t0) / n * 1e6
        torch.cuda.synchronize()
        return t

    def run(self, fn, iters, warmup, host_us):
        torch = self.torch
        for i in range(warmup):
            fn(i)
        torch.cuda.synchronize()
        sleep_us = max(50.0, 3.0 * host_us + 50.0)
        cycles = int(self.cycles_per_us * sleep_us)
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(iters)]
        for i, (s, e) in enumerate(events):
            torch.cuda._sleep(cycles)
            s.record()
            fn(warmup + i)
            e.record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) * 1e3 for s, e in events]  # us
        return statistics.median(times), min(times), sleep_us


# ---------------------------------------------------------------- peers

def make_inputs(m, n, k, dev):
    """Quantised copies enough to exceed 2x L2; the float64 reference for copy 0."""
    import torch
    per_copy = m * k + n * k + m * n * 2 + 4 * (m * k // 128 + ceil_div(n, 128) * k // 128)
    copies = max(2, ceil_div(int(2 * L2_BYTES), per_copy))
    gen = torch.Generator(device=dev)
    gen.manual_seed(m * 1_000_003 + n * 1009 + k)
    cs = []
    for c in range(copies):
        x = torch.randn(m, k, device=dev, generator=gen)
        y = torch.randn(n, k, device=dev, generator=gen)
        qa, sa = quant_1x128(x)
        qb, sb = quant_128x128(y)
        del x, y
        cs.append(dict(qa=qa, sa=sa, qb=qb, sb=sb,
                       out=torch.empty(m, n, device=dev, dtype=torch.bfloat16)))
    ref = dequant_f64(cs[0]["qa"], cs[0]["sa"], 1) @ dequant_f64(cs[0]["qb"], cs[0]["sb"], 128).t()
    return cs, ref, copies, per_copy


def install_deepgemm_guards(dg):
    """Make a failed launch raise (DeepGEMM's gemm entry drops the CUresult), and fall back to
    the driver's kernel enumeration if its cuobjdump-based kernel lookup fails under CUDA 13."""
    import cuda.bindings.driver as cbd
    from deep_gemm.jit_kernels import runtime as jr
    from deep_gemm.jit import runtime as jrt

    orig_launch = jr.FP8GemmRuntime.launch

    def checked_launch(kernel, kwargs):
        res = orig_launch(kernel, kwargs)
        code = res[0] if isinstance(res, tuple) else res   # cuda-bindings returns (CUresult,)
        if code != cbd.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"DeepGEMM kernel launch failed: {code}")
        return res

    jr.FP8GemmRuntime.launch = staticmethod(checked_launch)

    orig_call = jrt.Runtime.__call__

    def call(self, **kwargs):
        if self.kernel is None:
            try:
                return orig_call(self, **kwargs)
            except (AssertionError, OSError) as e:
                if self.lib is None:
                    raise
                err, count = cbd.cuLibraryGetKernelCount(self.lib)
                if err != cbd.CUresult.CUDA_SUCCESS or count != 1:
                    raise RuntimeError(f"kernel lookup failed ({e}); driver count {err} {count}")
                err, kernels = cbd.cuLibraryEnumerateKernels(count, self.lib)
                if err != cbd.CUresult.CUDA_SUCCESS:
                    raise RuntimeError(f"cuLibraryEnumerateKernels: {err}")
                self.kernel = kernels[0]
                print(f"  note: kernel found by cuLibraryEnumerateKernels ({e})", flush=True)
        return self.launch(self.kernel, kwargs)

    jrt.Runtime.__call__ = call


def deepgemm_shape(dg, timer, args, m, n, k, cs, ref, copies):
    import torch
    ncs = len(cs)
    sa_tma = [col_major_tma_aligned(c["sa"]) for c in cs]
    # DeepGEMM must take the scales as given (no re-layout kernel inside the timed call)
    assert dg.get_col_major_tma_aligned_tensor(sa_tma[0]) is sa_tma[0], "sa layout not accepted"

    def call(i):
        c = cs[i % ncs]
        dg.gemm_fp8_fp8_bf16_nt((c["qa"], sa_tma[i % ncs]), (c["qb"], c["sb"]), c["out"])

    # first call: JIT compile (or cache hit) + load + run; timed alone, never with the kernel
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    call(0)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    err = rel_err(cs[0]["out"], ref)
    print(f"  deepgemm {m},{n},{k}: first call (JIT compile + load + run) {first_s:.2f} s",
          flush=True)
    host = timer.host_us(call)
    med, mn, sleep_us = timer.run(call, args.iters, args.warmup, host)
    tflops = 2.0 * m * n * k / (med * 1e-6) / 1e12
    print(f"deepgemm {m},{n},{k}  {med:.1f}  {tflops:.1f}  err={err:.2e}"
          f"   (min {mn:.1f} us, host {host:.0f} us/call, copies {copies}, sleep {sleep_us:.0f} us)",
          flush=True)
    if not err < ERR_LIMIT:
        raise RuntimeError(f"FAIL: deepgemm {m},{n},{k} err {err:.3e} > {ERR_LIMIT}")


def scaled_mm_shape(timer, args, m, n, k, cs, ref, copies):
    import torch
    ncs = len(cs)
    # torch's blockwise checks: scale_a (M, K/128) with strides (1, M) ("outer-dim-major");
    # scale_b such that scale_b.t() is (ceil(N/128), K/128) contiguous, i.e. scale_b = sb.t()
    sa_cm = [c["sa"].t().contiguous().t() for c in cs]
    tried = []

    def via_scaled_mm(c, sa):
        return torch._scaled_mm(c["qa"], c["qb"].t(), scale_a=sa, scale_b=c["sb"].t(),
                                out_dtype=torch.bfloat16)

    def via_functional(c, sa):
        F = torch.nn.functional
        ST = F.ScalingType
        return F.scaled_mm(c["qa"], c["qb"].t(), sa, ST.BlockWise1x128, c["sb"].t(),
                           ST.BlockWise128x128, output_dtype=torch.bfloat16)

    fn = None
    for name, f in (("torch._scaled_mm", via_scaled_mm), ("F.scaled_mm", via_functional)):
        try:
            out = f(cs[0], sa_cm[0])
            torch.cuda.synchronize()
            fn, api = f, name
            break
        except Exception as e:  # noqa: BLE001
            tried.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    if fn is None:
        print(f"scaled_mm-block {m},{n},{k}  unsupported: {' | '.join(tried)}", flush=True)
        return
    err = rel_err(out, ref)

    def call(i):
        fn(cs[i % ncs], sa_cm[i % ncs])

    host = timer.host_us(call)
    med, mn, sleep_us = timer.run(call, args.iters, args.warmup, host)
    tflops = 2.0 * m * n * k / (med * 1e-6) / 1e12
    print(f"scaled_mm-block {m},{n},{k}  {med:.1f}  {tflops:.1f}  err={err:.2e}"
          f"   ({api}, min {mn:.1f} us, host {host:.0f} us/call, copies {copies})", flush=True)
    if not err < ERR_LIMIT:
        print(f"FAIL: scaled_mm-block {m},{n},{k} err {err:.3e} > {ERR_LIMIT}", flush=True)


def main():
    args = parse_args()
    setup_env(args.src)
    import torch
    print(f"torch {torch.__version__} cuda {torch.version.cuda} "
          f"device {torch.cuda.get_device_name(0)} sms "
          f"{torch.cuda.get_device_properties(0).multi_processor_count}", flush=True)
    try:
        import cuda.bindings
        print(f"cuda-bindings {cuda.bindings.__version__}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"cuda-bindings missing: {e}", flush=True)

    dg = None
    if not args.no_deepgemm:
        try:
            t0 = time.perf_counter()
            import deep_gemm as dg
            from deep_gemm.jit.compiler import get_nvcc_compiler
            install_deepgemm_guards(dg)
            rev = ""
            rf = os.path.join(args.src, "REVISION")
            if os.path.exists(rf):
                rev = open(rf).read().strip().replace("\n", "; ")
            print(f"deep_gemm from {os.path.dirname(dg.__file__)} ({rev}); nvcc "
                  f"{get_nvcc_compiler()}; import {time.perf_counter() - t0:.2f} s; "
                  f"cache {os.environ['DG_JIT_CACHE_DIR']}", flush=True)
        except Exception as e:  # noqa: BLE001
            dg = None
            print(f"deepgemm import FAILED: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc()

    timer = Timer()
    dev = "cuda"
    for spec in args.shape:
        try:
            m, n, k = (int(v) for v in spec.split(","))
            assert k % 128 == 0, "K must be a multiple of 128"
        except Exception as e:  # noqa: BLE001
            print(f"bad shape {spec!r}: {e}", flush=True)
            continue
        print(f"== {m},{n},{k}", flush=True)
        try:
            cs, ref, copies, per_copy = make_inputs(m, n, k, dev)
        except Exception as e:  # noqa: BLE001
            print(f"inputs {m},{n},{k} FAILED: {type(e).__name__}: {e}", flush=True)
            torch.cuda.empty_cache()
            continue
        if dg is not None:
            try:
                deepgemm_shape(dg, timer, args, m, n, k, cs, ref, copies)
            except Exception as e:  # noqa: BLE001
                print(f"deepgemm {m},{n},{k} FAILED: {type(e).__name__}: {e}", flush=True)
                traceback.print_exc(limit=6)
        elif not args.no_deepgemm:
            print(f"deepgemm {m},{n},{k} skipped: import failed", flush=True)
        if not args.no_scaled_mm:
            try:
                scaled_mm_shape(timer, args, m, n, k, cs, ref, copies)
            except Exception as e:  # noqa: BLE001
                print(f"scaled_mm-block {m},{n},{k} FAILED: {type(e).__name__}: {e}", flush=True)
        del cs, ref
        torch.cuda.empty_cache()
    print("done", flush=True)


if __name__ == "__main__":
    main()
