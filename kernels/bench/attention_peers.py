#!/usr/bin/env python3
"""The peers of `tirx bench attention`, measured on the GPU machine: attention forward from cuDNN
and FlashAttention-2 (both through torch SDPA) and FA4's CuTe-DSL Hopper kernel (`flash_attn.cute`,
optional: its wheels are carried, ../shared/tools/peer-wheels.sh), bf16, on the shapes the bench
measures, timed the way the bench times ours. Writes a `tirx-attention-peers/1` JSON file that
`tirx bench attention --peers PATH` reads (kernels/src/bench/attention.rs).

    python3 kernels/bench/attention_peers.py [--out PATH] [--quick | --shape B,HQ,HKV,SQ,SK,D[,causal] …]

Shapes (the bench's `sweep`): total tokens 16k, heads × head dim = 2048, sequence 512 … 16k,
head dims 64/128/256, causal and not; plus GQA: 32 query heads over 8 K/V heads, hd 128, seq 8k.
`--shape` (repeatable) measures the shapes given instead, in the form `tirx bench attention
--shape` takes: batch, query heads, K/V heads, query length SQ, key length SK, head dim, and
`causal` (or `full`, the default). Causal is bottom-right aligned in FA4 and ours (query i sees
keys j ≤ i + SK − SQ, FA2/FA3's convention); SDPA's `is_causal` is top-left, the same mask when
SQ = SK, so when they differ SDPA is given `torch.nn.attention.bias.causal_lower_right(SQ, SK)`
(a backend that refuses it is recorded as a failure). A row that sees no key (causal, SQ > SK)
is left out of the check (FA gives 0 there; SDPA's backends may give NaN).
`--varlen` adds FA4's varlen kernel (`flash_attn_varlen_func`, peer `fa4-cute-sm90-varlen`) on
each shape's B sequences packed (`[B·SQ, H, D]`, `cu_seqlens` = SQ·i and SK·i, max_seqlen SQ and
SK: FA3's benchmark's varlen form), what `tirx bench attention --varlen` compares with.
`--paged PAGE` adds FA4's varlen kernel over a paged K/V cache (peer `fa4-cute-sm90-pagedPAGE`):
queries packed as with `--varlen`, K and V laid into `[B·cdiv(SK, PAGE), PAGE, HK, D]` caches
whose pages are in a shuffled order, `page_table` `[B, cdiv(SK, PAGE)]`, `seqused_k` = SK — what
`tirx bench attention --paged PAGE` compares with. An FA4 build without paged K/V on this GPU is
recorded as a failure (the bench then shows the dense peers).

Method, per shape and peer: inputs uniform in [-1, 1) (bf16), in N sets (N the fewest ≥ 2 whose
q, k, v, o bytes exceed twice the L2); the first call (JIT) timed by the wall clock and checked;
5 untimed runs, then untimed runs until 50 ms have passed; then R timed runs (R = 30, or as many
as take about 200 ms, at most 500), each bracketed by its own pair of CUDA events, all queued
without a sync, cycling over the sets; the time is the median. TFLOP/s = 4·b·h·s²·d / t, halved
for causal (FA3's count when SQ ≠ SK: `hopper/benchmark_attn.py`'s `flops`, 4·b·h·SQ·avg·d with
avg = SK, or (max(0, SK − SQ) + SK) / 2 with the causal mask). Check: O of batch 0, heads 0 and 1, against an f32 softmax(QKᵀ/√d)V reference:
max |o − ref| must be ≤ 2e-2 (bf16 output of values of magnitude ≤ 1).

GQA in SDPA: `enable_gqa=True` where the backend takes it, else K/V repeated per query head
before timing (a copy the timed call does not include; noted in the result).

Format `tirx-attention-peers/1`:
    {"format": "tirx-attention-peers/1", "date": "…Z", "device": "NVIDIA H200",
     "versions": {"torch": "2.11.0", "flash_attn_4": "4.0.0b36"}, "method": "…",
     "results": [{"hd": 128, "seq": 8192, "seq_k": 8192, "batch": 2, "heads": 16, "kv_heads": 16,
                  "causal": false, "peer": "cudnn", "median_ms": 1.23, "tflops": 650.1,
                  "max_err": 0.003, "ok": true, "runs": 30, "first_call_s": 0.4,
                  "failure": null, "note": ""}, …]}
A peer that could not run has median_ms, tflops and max_err null, ok false and a failure.
"""

import argparse
import importlib.metadata
import json
import math
import os
import time
import traceback

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

FORMAT = "tirx-attention-peers/1"
WARMUP, WARMUP_MS, RUNS, TIMED_MS, MAX_RUNS = 5, 50.0, 30, 200.0, 500
L2_BYTES = 60 << 20
TOL = 2e-2
METHOD = (
    f"per peer: {WARMUP} untimed runs and {WARMUP_MS:g} ms of warm-up, then at least {RUNS} runs "
    f"(about {TIMED_MS:g} ms, at most {MAX_RUNS}) with CUDA events, queued without a sync, inputs "
    "rotated over sets exceeding twice the L2; median"
)


def sweep(quick):
    """(hd, sq, sk, batch, heads, kv_heads, causal) of the bench's sweep."""
    shapes = []
    seqs = (2048, 8192) if quick else (512, 1024, 2048, 4096, 8192, 16384)
    for hd in (64, 128, 256):
        for s in seqs:
            for causal in (False, True):
                shapes.append((hd, s, s, 16384 // s, 2048 // hd, 2048 // hd, causal))
    for causal in (False, True):
        shapes.append((128, 8192, 8192, 2, 32, 8, causal))
    return shapes


def parse_shape(text):
    """`B,HQ,HKV,SQ,SK,D[,causal]` as the bench's `--shape` (kernels/src/bench/attention.rs)."""
    f = [x.strip() for x in text.split(",")]
    usage = f"--shape {text!r}: expected B,HQ,HKV,SQ,SK,D[,causal], e.g. 2,32,8,512,4096,128,causal"
    if len(f) not in (6, 7):
        raise argparse.ArgumentTypeError(usage)
    try:
        b, h, hk, sq, sk, hd = (int(x) for x in f[:6])
    except ValueError:
        raise argparse.ArgumentTypeError(usage)
    if min(b, h, hk, sq, sk, hd) <= 0 or h % hk != 0 or (len(f) == 7 and f[6] not in ("causal", "full")):
        raise argparse.ArgumentTypeError(usage)
    return (hd, sq, sk, b, h, hk, len(f) == 7 and f[6] == "causal")


def flops(b, h, sq, sk, hd, causal):
    """FA3's count (hopper/benchmark_attn.py): 4·b·h·sq·avg·hd, avg the keys a query sees."""
    avg = (max(0, sk - sq) + sk) / 2 if causal else sk
    return 4 * b * h * sq * avg * hd


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def timed(fn, sets):
    """Median ms of fn(set) over R runs, after the warm-up."""
    for i in range(WARMUP):
        fn(i % sets)
    torch.cuda.synchronize()
    t0 = time.time()
    n = 0
    while (time.time() - t0) * 1e3 < WARMUP_MS:
        fn(n % sets)
        torch.cuda.synchronize()
        n += 1
    per = max((time.time() - t0) * 1e3 / max(n, 1), 1e-3)
    runs = int(min(MAX_RUNS, max(RUNS, TIMED_MS / per)))
    ev = []
    for i in range(runs):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn(i % sets)
        e.record()
        ev.append((s, e))
    torch.cuda.synchronize()
    ts = sorted(s.elapsed_time(e) for s, e in ev)
    return ts[len(ts) // 2], runs


def reference(q, k, v, causal):
    """O [SQ, 2, D] of batch 0, heads 0 and 1, in f32 (q: [B, SQ, H, D], k, v: [B, SK, HK, D]),
    causal bottom-right; rows that see no key are NaN (left out of the check)."""
    g = q.shape[2] // k.shape[2]
    qs = q[0, :, 0:2].float().transpose(0, 1)
    ks = k[0, :, [0 // g, 1 // g]].float().transpose(0, 1)
    vs = v[0, :, [0 // g, 1 // g]].float().transpose(0, 1)
    s = qs @ ks.transpose(1, 2) / math.sqrt(q.shape[3])
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        hidden = torch.ones(sq, sk, dtype=torch.bool, device=s.device).triu(sk - sq + 1)
        s = s.masked_fill(hidden, float("-inf"))
    return (torch.softmax(s, -1) @ vs).transpose(0, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "attention-peers.json"))
    ap.add_argument("--quick", action="store_true", help="seq 2k and 8k only")
    ap.add_argument("--shape", action="append", type=parse_shape, default=[],
                    help="B,HQ,HKV,SQ,SK,D[,causal] instead of the sweep (repeatable)")
    ap.add_argument("--varlen", action="store_true",
                    help="also FA4's varlen kernel on each shape's sequences packed")
    ap.add_argument("--paged", type=int, metavar="PAGE",
                    help="also FA4's varlen kernel over a paged K/V cache of PAGE-token pages")
    args = ap.parse_args()
    if args.quick and args.shape:
        ap.error("--quick picks the sweep; --shape replaces it")
    try:
        fa4 = importlib.import_module("flash_attn.cute")
    except Exception as ex:  # the wheels were not carried
        print("no FA4-cute:", type(ex).__name__, str(ex)[:200], flush=True)
        fa4 = None
    results = []
    for hd, s, sk, b, h, hk, causal in args.shape or sweep(args.quick):
        per_set = 2 * (b * s * h * hd) * 2 + 2 * (b * sk * hk * hd) * 2
        sets = max(2, math.ceil(2 * L2_BYTES / per_set) + 1)
        torch.manual_seed(hd * 100000 + s + causal)
        qs = [(torch.rand(b, s, h, hd, device="cuda") * 2 - 1).bfloat16() for _ in range(sets)]
        ks = [(torch.rand(b, sk, hk, hd, device="cuda") * 2 - 1).bfloat16() for _ in range(sets)]
        vs = [(torch.rand(b, sk, hk, hd, device="cuda") * 2 - 1).bfloat16() for _ in range(sets)]
        ref = reference(qs[0], ks[0], vs[0], causal)
        seen = ~ref.isnan().any(-1).any(-1)  # the rows that see a key
        nflops = flops(b, h, s, sk, hd, causal)
        # SDPA's causal: `is_causal` (top-left) when SQ = SK, else the lower-right bias.
        bias = None
        if causal and s != sk:
            from torch.nn.attention.bias import causal_lower_right
            bias = causal_lower_right(s, sk)
        # SDPA takes [B, H, S, D]; K/V repeated per query head when the backend refuses GQA.
        tq = [x.transpose(1, 2) for x in qs]
        tk = [x.transpose(1, 2) for x in ks]
        tv = [x.transpose(1, 2) for x in vs]
        peers = []
        for who, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
            def sdpa(i, be=be, gqa=hk != h, rep=None):
                mask = dict(is_causal=causal) if bias is None else dict(attn_mask=bias)
                with sdpa_kernel(be):
                    if rep is not None:
                        return F.scaled_dot_product_attention(tq[i], rep[0][i], rep[1][i], **mask)
                    return F.scaled_dot_product_attention(tq[i], tk[i], tv[i], enable_gqa=gqa, **mask)
            peers.append((who, sdpa, lambda o: o.transpose(1, 2)))
        if fa4 is not None:
            def f4(i):
                o = fa4.flash_attn_func(qs[i], ks[i], vs[i], causal=causal)
                return o[0] if isinstance(o, tuple) else o
            peers.append(("fa4-cute-sm90", f4, lambda o: o))
        if fa4 is not None and args.varlen:
            cu_q = torch.arange(b + 1, device="cuda", dtype=torch.int32) * s
            cu_k = torch.arange(b + 1, device="cuda", dtype=torch.int32) * sk

            def f4v(i):
                o = fa4.flash_attn_varlen_func(
                    qs[i].reshape(b * s, h, hd), ks[i].reshape(b * sk, hk, hd), vs[i].reshape(b * sk, hk, hd),
                    cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=s, max_seqlen_k=sk, causal=causal)
                return o[0] if isinstance(o, tuple) else o
            peers.append(("fa4-cute-sm90-varlen", f4v, lambda o: o.reshape(b, s, h, hd)))
        if fa4 is not None and args.paged:
            page = args.paged
            pps = -(-sk // page)  # pages per sequence
            gen = torch.Generator(device="cuda").manual_seed(0x9a6e)
            perm = torch.randperm(b * pps, device="cuda", generator=gen)
            table = perm.reshape(b, pps).to(torch.int32).contiguous()
            cu_qp = torch.arange(b + 1, device="cuda", dtype=torch.int32) * s
            used_k = torch.full((b,), sk, device="cuda", dtype=torch.int32)

            def paged_cache(x):
                # Sequence i's page j is physical page perm[i·pps + j]; the rows past SK are 0.
                dense = torch.zeros(b, pps * page, hk, hd, device="cuda", dtype=x.dtype)
                dense[:, :sk] = x
                cache = torch.empty_like(dense).reshape(b * pps, page, hk, hd)
                cache[perm] = dense.reshape(b * pps, page, hk, hd)
                return cache
            kcs = [paged_cache(x) for x in ks]
            vcs = [paged_cache(x) for x in vs]

            def f4p(i):
                o = fa4.flash_attn_varlen_func(
                    qs[i].reshape(b * s, h, hd), kcs[i], vcs[i], cu_seqlens_q=cu_qp, max_seqlen_q=s,
                    max_seqlen_k=sk, seqused_k=used_k, page_table=table, causal=causal)
                return o[0] if isinstance(o, tuple) else o
            peers.append((f"fa4-cute-sm90-paged{page}", f4p, lambda o: o.reshape(b, s, h, hd)))
        for who, fn, to_bshd in peers:
            r = dict(hd=hd, seq=s, seq_k=sk, batch=b, heads=h, kv_heads=hk, causal=causal, peer=who,
                     median_ms=None, tflops=None, max_err=None, ok=False, runs=0,
                     first_call_s=None, failure=None, note="")
            try:
                t0 = time.time()
                try:
                    o = fn(0)
                except RuntimeError as ex:
                    if hk == h or who.startswith("fa4"):
                        raise
                    g = h // hk
                    rep = ([x.repeat_interleave(g, 1) for x in tk], [x.repeat_interleave(g, 1) for x in tv])
                    base = fn
                    fn = lambda i, base=base, rep=rep: base(i, rep=rep)
                    o = fn(0)
                    r["note"] = f"K/V repeated per query head (enable_gqa refused: {str(ex)[:80]})"
                torch.cuda.synchronize()
                r["first_call_s"] = time.time() - t0
                got = to_bshd(o)[0, :, 0:2].float()
                r["max_err"] = (got[seen] - ref[seen]).abs().max().item() if seen.any() else 0.0
                r["ok"] = bool(r["max_err"] <= TOL)
                ms, runs = timed(fn, sets)
                r.update(median_ms=ms, tflops=nflops / ms / 1e9, runs=runs)
            except Exception as ex:
                r["failure"] = f"{type(ex).__name__}: {str(ex)[:300]}"
                traceback.print_exc(limit=1)
            results.append(r)
            tf = f"{r['tflops']:.1f}" if r["tflops"] else "-"
            ss = f"{s}" if s == sk else f"{s}/{sk}"
            print(f"hd{hd:<4} s{ss:<6} b{b:<3} h{h}/{hk} {'causal' if causal else 'full  '} {who:14s} {tf:>8} TFLOP/s"
                  f"  err {r['max_err']}  {r['failure'] or r['note']}", flush=True)
        del qs, ks, vs, tq, tk, tv
        kcs = vcs = None
        torch.cuda.empty_cache()
    versions = {k: v for k, v in (("torch", torch.__version__), ("flash_attn_4", version("flash-attn-4")),
                                  ("cudnn", str(torch.backends.cudnn.version()))) if v}
    doc = dict(format=FORMAT, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               device=torch.cuda.get_device_name(0), versions=versions, method=METHOD, results=results)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
