#!/usr/bin/env python3
"""The peers of `tirx bench rows`, measured on the GPU machine: softmax, RMSNorm and LayerNorm
from torch, Liger (Triton) and QuACK (CuTe DSL), bf16, on the shapes the bench measures, timed
the way the bench times ours, each output checked. Writes a `tirx-rows-peers/1` JSON file that
`tirx bench rows --peers PATH` reads (kernels/src/bench/rows/peers.rs is the reader).

Run (torch on the machine; Liger and QuACK optional, each import guarded):

    python3 kernels/bench/rows_peers.py [--shape R,C]... [--op softmax|rmsnorm|layernorm]...
        [--peer torch|liger|quack]... [--eps 1e-6] [--out PATH]

PATH defaults to $OUT/rows-peers.json ($OUT: the device machine's output folder), else
./rows-peers.json. QuACK and Liger come as wheels: ../shared/tools/peer-wheels.sh says how to
carry them and to set PYTHONPATH.

Method, per shape:
- x uniform in [-1, 1), w in [0.5, 1.5), b in [-0.5, 0.5) (bf16), the bench's distributions;
  x copied into N buffer sets, N the fewest (2 to 256) whose x and y bytes exceed twice the
  L2 (60 MiB, or the device's if larger), within 40 GiB. Each participant keeps its last
  output per set, so outputs rotate as well.
- Per op: every peer's first call (JIT and autotuning, timed by the wall clock), checked
  against an f32 torch reference; then WARMUP untimed runs each; then untimed interleaved
  rounds until 50 ms have passed (clocks up; it also times a round); then R timed rounds,
  R = 50 or as many as take about 200 ms (at most 1000); each round runs every peer once in a
  rotated order (round r starts with peer r mod P), each run bracketed by its own pair of
  CUDA events, all queued without a sync. A peer's time is the median of its R runs. One
  rotation over the sets is shared by all peers: each run takes the next set.
- The copy roof, once per shape: torch's `y.copy_(x)` of the same bytes, timed alone the same
  way (op "copy", peer "torch").
- GB/s = 2·rows·cols·2 / median (x read, y written; w and b not counted), as in ours.
- Check: err = max |y − ref| / (|ref| + 2⁻³·rms(ref row)) over every element (non-finite y:
  infinite); ok when err ≤ 2⁻⁷: the formula and tolerance of kernels/src/rows/reference.rs.

Format `tirx-rows-peers/1`:

    {"format": "tirx-rows-peers/1", "date": "2026-12-01T12:00:00Z", "device": "NVIDIA H200",
     "versions": {"torch": "2.11.0", "quack": "0.6.5", "liger_kernel": "0.8.5"},
     "method": "...", "eps": 1e-06, "l2_bytes": 62914560,
     "results": [{"op": "softmax", "rows": 16384, "cols": 4096, "peer": "quack",
                  "median_ms": 0.0833, "gbps": 3222.5, "max_err": 0.0036, "ok": true,
                  "runs": 50, "sets": 2, "first_call_s": 4.2, "failure": null}, ...]}

`op` is softmax, rmsnorm, layernorm or copy. A peer that could not run has median_ms, gbps and
max_err null, ok false and a failure. Non-finite numbers are written as null.
"""

import argparse
import importlib
import importlib.metadata
import json
import math
import os
import time
import traceback

import torch
import torch.nn.functional as F

FORMAT = "tirx-rows-peers/1"
OPS = ("softmax", "rmsnorm", "layernorm")
PEERS = ("torch", "liger", "quack")
DEFAULT_SHAPES = [(16384, 4096), (32768, 8192), (8192, 32768)]
# The bench's constants (kernels/src/bench/mod.rs, sweep.rs).
RUNS, MAX_RUNS, WARMUP, WARMUP_MS, TIMED_MS = 50, 1000, 5, 50.0, 200.0
L2_BYTES, MEMORY_CAP = 60 << 20, 40 << 30
# The checker's (kernels/src/rows/reference.rs).
RTOL, FLOOR = 2.0**-7, 2.0**-3
METHOD = (
    "interleaved rounds of the peers per op, CUDA events per run, median of at least "
    f"{RUNS} rounds after at least {WARMUP_MS:g} ms of warm-up, inputs and outputs rotated past "
    "twice the L2; copy roof timed alone the same way"
)


def log(*a):
    print(*a, flush=True)


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def load_peers(wanted):
    """{peer: {op: fn(x, w, b, eps) -> y}} for the peers that import, and their versions.
    A peer's op that is missing maps to a string saying why."""
    peers, versions = {}, {"torch": str(torch.__version__)}
    if "torch" in wanted:
        peers["torch"] = {
            "softmax": lambda x, w, b, eps: torch.softmax(x, -1),
            "rmsnorm": lambda x, w, b, eps: F.rms_norm(x, (x.shape[-1],), w, eps),
            "layernorm": lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps),
        }
    if "liger" in wanted:
        try:
            lf = importlib.import_module("liger_kernel.transformers.functional")
            versions["liger_kernel"] = version("liger-kernel") or "?"
            peers["liger"] = {
                "softmax": lambda x, w, b, eps: lf.liger_softmax(x),
                "rmsnorm": lambda x, w, b, eps: lf.liger_rms_norm(x, w, eps, in_place=False),
                "layernorm": lambda x, w, b, eps: lf.liger_layer_norm(x, w, b, eps),
            }
        except Exception as ex:  # a missing wheel or a broken Triton: the peer is left out
            log("could not import liger:", type(ex).__name__, str(ex)[:300])
    if "quack" in wanted:
        try:
            quack = importlib.import_module("quack")
            versions["quack"] = getattr(quack, "__version__", None) or version("quack-kernels") or "?"
            # `quack.rmsnorm` is the function; the module holds LayerNorm's entry (0.6.x:
            # `layernorm_fwd`, the RMSNorm kernel with is_layernorm, weight and bias in f32).
            module = importlib.import_module("quack.rmsnorm")
            ln = getattr(module, "layernorm_fwd", None)
            peers["quack"] = {
                "softmax": lambda x, w, b, eps: quack.softmax(x),
                "rmsnorm": lambda x, w, b, eps: quack.rmsnorm(x, w, eps=eps),
                "layernorm": (
                    (lambda x, w, b, eps: ln(x, w.float(), b.float(), eps=eps))
                    if ln is not None
                    else f"quack {versions['quack']} has no LayerNorm (quack.rmsnorm.layernorm_fwd)"
                ),
            }
        except Exception as ex:
            log("could not import quack:", type(ex).__name__, str(ex)[:300])
            if not isinstance(ex, ModuleNotFoundError):  # a broken install: show where
                traceback.print_exc(limit=2)
    return peers, versions


def reference(op, x, w, b, eps):
    xf = x.float()
    if op == "softmax":
        return torch.softmax(xf, -1)
    if op == "rmsnorm":
        return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()
    mean = xf.mean(-1, keepdim=True)
    var = (xf - mean).pow(2).mean(-1, keepdim=True)
    return (xf - mean) * torch.rsqrt(var + eps) * w.float() + b.float()


def error(y, ref):
    """The checker's measure (see the docstring); infinite for a non-finite y or a wrong shape."""
    if y.shape != ref.shape:
        return math.inf
    yf = y.float()
    rms = ref.pow(2).mean(-1, keepdim=True).sqrt()
    err = (yf - ref).abs() / (ref.abs() + FLOOR * rms + 1e-38)
    err = torch.where(torch.isfinite(yf), err, torch.full_like(err, math.inf))
    return err.max().item()


def rotation(set_bytes, l2):
    sets = min(max(2 * l2 // max(set_bytes, 1) + 1, 2), 256)
    return max(min(sets, MEMORY_CAP // max(set_bytes, 1)), 1)


def interleaved(runs, sets):
    """Times `runs` (name -> fn(set)) in interleaved rounds (see the docstring). Returns
    {name: (median_ms, rounds)} and {name: failure} for those that failed during warm-up."""
    names, failed, turn = list(runs), {}, [0]

    def go(name):
        runs[name](turn[0] % sets)
        turn[0] += 1

    for name in names:
        try:
            for _ in range(WARMUP):
                go(name)
            torch.cuda.synchronize()
        except Exception as ex:
            failed[name] = f"FAILED in warm-up: {type(ex).__name__}: {str(ex)[:200]}"
    alive = [n for n in names if n not in failed]
    if not alive:
        return {}, failed
    started, warm = time.perf_counter(), 0
    while (time.perf_counter() - started) * 1e3 < WARMUP_MS:
        for k in range(len(alive)):
            go(alive[(warm + k) % len(alive)])
        torch.cuda.synchronize()
        warm += 1
    round_ms = (time.perf_counter() - started) * 1e3 / warm
    rounds = min(max(math.ceil(TIMED_MS / round_ms), RUNS), MAX_RUNS)
    events = {n: [] for n in alive}
    for r in range(rounds):
        for k in range(len(alive)):
            name = alive[(r + k) % len(alive)]
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            go(name)
            end.record()
            events[name].append((start, end))
    torch.cuda.synchronize()
    out = {}
    for name, pairs in events.items():
        ts = sorted(s.elapsed_time(e) for s, e in pairs)
        out[name] = (ts[len(ts) // 2], rounds)
    return out, failed


def result(op, rows, cols, peer, ms=None, err=None, ok=False, runs=None, sets=None, first=None, failure=None):
    finite = lambda v: v if v is not None and math.isfinite(v) else None
    ms, err = finite(ms), finite(err)
    gbps = 2 * rows * cols * 2 / (ms * 1e-3) / 1e9 if ms else None
    r = dict(op=op, rows=rows, cols=cols, peer=peer, median_ms=ms, gbps=gbps, max_err=err,
             ok=bool(ok and ms), runs=runs, sets=sets, first_call_s=finite(first), failure=failure)
    v = f"{gbps:8.1f} GB/s" if gbps else "       - GB/s"
    log(f"{op:9s} {rows}x{cols:<7d} {peer:6s} {v}  err={err}  {failure or ''}")
    return r


def measure_shape(rows, cols, ops, peers, eps, l2):
    out = []
    g = torch.Generator(device="cuda").manual_seed(11)
    uniform = lambda *shape: torch.rand(*shape, device="cuda", generator=g) * 2 - 1
    x0 = uniform(rows, cols).to(torch.bfloat16)
    w = (1 + 0.5 * uniform(cols)).to(torch.bfloat16)
    b = (0.5 * uniform(cols)).to(torch.bfloat16)
    sets = rotation(2 * rows * cols * 2, l2)
    xs = [x0.clone() for _ in range(sets)]

    ys = [torch.empty_like(x0) for _ in range(sets)]
    timed, failed = interleaved({"torch": lambda s: ys[s].copy_(xs[s])}, sets)
    ok = torch.equal(ys[0], xs[0])
    if "torch" in timed:
        out.append(result("copy", rows, cols, "torch", timed["torch"][0], 0.0 if ok else math.inf,
                          ok, timed["torch"][1], sets, failure=None if ok else "the copy differs"))
    else:
        out.append(result("copy", rows, cols, "torch", sets=sets, failure=failed.get("torch")))
    del ys

    for op in ops:
        ref = reference(op, x0, w, b, eps)
        runs, checked = {}, {}
        for peer, fns in peers.items():
            fn = fns[op]
            if isinstance(fn, str):
                out.append(result(op, rows, cols, peer, sets=sets, failure=fn))
                continue
            try:
                t0 = time.perf_counter()
                y = fn(x0, w, b, eps)
                torch.cuda.synchronize()
                first = time.perf_counter() - t0
                err = error(y, ref)
                del y
            except Exception as ex:
                out.append(result(op, rows, cols, peer, sets=sets,
                                  failure=f"FAILED {type(ex).__name__}: {str(ex)[:200]}"))
                continue
            keep = [None] * sets

            def run(s, fn=fn, keep=keep):
                keep[s] = fn(xs[s], w, b, eps)

            runs[peer], checked[peer] = run, (err, first)
        try:
            timed, failed = interleaved(runs, sets)
        except Exception as ex:
            timed, failed = {}, {p: f"FAILED in rounds: {type(ex).__name__}: {str(ex)[:200]}" for p in runs}
        for peer, (err, first) in checked.items():
            ok = err <= RTOL
            wrong = None if ok else f"WRONG: error {err:.3e} over {RTOL:.3e}"
            if peer in timed:
                ms, n = timed[peer]
                out.append(result(op, rows, cols, peer, ms, err, ok, n, sets, first, wrong))
            else:
                out.append(result(op, rows, cols, peer, err=err, sets=sets, first=first,
                                  failure=failed.get(peer, wrong)))
        del ref, runs
        torch.cuda.empty_cache()
    return out


def parse_shape(s):
    r, c = (int(v) for v in s.split(","))
    if r < 1 or c < 1:
        raise argparse.ArgumentTypeError(f"bad shape {s}: rows and columns must be at least 1")
    return r, c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", action="append", type=parse_shape, help="ROWS,COLS (repeatable)")
    ap.add_argument("--op", action="append", choices=OPS, help="repeatable; default all")
    ap.add_argument("--peer", action="append", choices=PEERS, help="repeatable; default all")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "rows-peers.json"))
    args = ap.parse_args()
    shapes = args.shape or DEFAULT_SHAPES
    ops = list(dict.fromkeys(args.op or OPS))
    peers, versions = load_peers(args.peer or PEERS)
    dev = torch.cuda.get_device_properties(0)
    l2 = max(L2_BYTES, getattr(dev, "L2_cache_size", 0) or 0)
    log(f"{dev.name}, {dev.multi_processor_count} SMs; peers {', '.join(peers)}; {versions}")
    results = []
    for rows, cols in shapes:
        results += measure_shape(rows, cols, ops, peers, args.eps, l2)
        torch.cuda.empty_cache()
    doc = dict(format=FORMAT, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               device=dev.name, versions=versions, method=METHOD, eps=args.eps, l2_bytes=l2,
               results=results)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    log("wrote", args.out)


if __name__ == "__main__":
    main()
