"""torch's FP8 quantisation beside `tirx bench quant` (issue #29), on the same shapes.

Row-wise: `s = x.abs().amax(-1, keepdim=True).float() / 448` (floored at 2^-126 as the tirx
kernels are), `q = (x.float() / s).to(torch.float8_e4m3fn)`; 1x128 blocks: the same on
`x.view(M, N // 128, 128)` (N a multiple of 128 here); MXFP8: `e = ceil(log2(amax / 448))` per 32,
the E8M0 byte `e + 127` (a plain [M, N/32] matrix, not the GEMM's image), `q = e4m3(x · 2^−e)`. Eager, and under torch.compile where it
compiles (its fused Triton kernel is the stronger peer). Rates count the bytes a quantiser must
move — 2·M·N read, M·N + 4·(scales) written — as tirx's bench does, and beside them the
device copy (`y.copy_(x)` of the bf16 input: 4·M·N bytes), in TB/s.
"""

import argparse
import json

import torch


def timed(fn, runs=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def rowwise(x):
    s = (x.abs().amax(-1, keepdim=True).float() / 448.0).clamp_min(2.0**-126)
    return (x.float() / s).to(torch.float8_e4m3fn), s


def block(x):
    m, n = x.shape
    v = x.view(m, n // 128, 128)
    s = (v.abs().amax(-1, keepdim=True).float() / 448.0).clamp_min(2.0**-126)
    return (v.float() / s).to(torch.float8_e4m3fn).view(m, n), s


def mxfp8(x):
    m, n = x.shape
    v = x.view(m, n // 32, 32)
    a = v.abs().amax(-1, keepdim=True).float()
    e = torch.ceil(torch.log2(a / 448.0)).clamp(-127, 127)
    sf = (e + 127).to(torch.uint8)
    return (v.float() * torch.exp2(-e)).to(torch.float8_e4m3fn).view(m, n), sf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--out")
    args = ap.parse_args()
    shapes = args.shape or ["8192,7168", "16384,4096", "4096,16384"]
    rows = []
    for sh in shapes:
        m, n = map(int, sh.split(","))
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        copy = timed(lambda: y.copy_(x))
        rows.append(("device copy (y.copy_(x))", m, n, copy, 4 * m * n))
        for name, fn, sb in [
            ("rowwise", rowwise, 4 * m),
            ("block", block, 4 * m * (n // 128)),
            ("mxfp8", mxfp8, m * (n // 32)),
        ]:
            moved = 3 * m * n + sb
            rows.append((f"torch eager {name}", m, n, timed(lambda: fn(x)), moved))
            try:
                c = torch.compile(fn)
                c(x)
                rows.append((f"torch.compile {name}", m, n, timed(lambda: c(x)), moved))
            except Exception as e:  # noqa: BLE001 - a peer that does not compile is reported
                print(f"torch.compile {name} {m}x{n}: {e}")
    out = []
    for what, m, n, ms, moved in rows:
        tb = moved / (ms * 1e-3) / 1e12
        print(f"{what:<32} {m}x{n:<8} {ms:9.4f} ms {tb:6.2f} TB/s")
        out.append({"what": what, "m": m, "n": n, "ms": ms, "tbs": tb})
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
