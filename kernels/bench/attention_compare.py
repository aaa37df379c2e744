#!/usr/bin/env python3
"""Our attention output against cuDNN's on the same inputs (issue #12: "on the large shapes,
against cuDNN's output").

`tirx bench attention --dump DIR` writes, for every point with seq >= 8k, batch 0 of Q, K, V
(as uploaded) and of O (as our kernel wrote it), each [S, H, D] little-endian bf16, and a
manifest `DIR/dump.json`. This script runs cuDNN (torch SDPA, CUDNN_ATTENTION backend) on those
same Q, K, V, computes an f32 reference head by head, and reports per point

  max |ours - cuDNN|, max |ours - ref|, max |cuDNN - ref|   (over every element of batch 0)

so that our error is seen beside cuDNN's own. A point fails when ours is further from the f32
reference than TOL, or when ours and cuDNN differ by more than TOL.

    python3 kernels/bench/attention_compare.py --dump DIR --out compare.json

Run it in the same device command as the dump (the device has torch; nothing else is needed).
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

TOL = 2e-2  # the bench's own bound on |o - ref| (values of magnitude <= 1, P rounded to bf16)


def load(path, s, h, d):
    raw = np.fromfile(path, dtype=np.uint16)
    assert raw.size == s * h * d, f"{path}: {raw.size} elements, want {s}*{h}*{d}"
    return torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16).reshape(1, s, h, d).cuda()


def reference(q, k, v, scale, causal):
    """O [1, S, H, D] in f32, one head at a time (q: [1, S, H, D]; K/V heads shared by H/HK)."""
    s, h, d = q.shape[1], q.shape[2], q.shape[3]
    g = h // k.shape[2]
    out = torch.empty(1, s, h, d, device=q.device, dtype=torch.float32)
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1) if causal else None
    for i in range(h):
        qs, ks, vs = (x[0, :, j].float() for x, j in ((q, i), (k, i // g), (v, i // g)))
        sc = (qs @ ks.T) * scale
        if mask is not None:
            sc = sc.masked_fill(mask, float("-inf"))
        out[0, :, i] = torch.softmax(sc, -1) @ vs
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "attention-compare.json"))
    args = ap.parse_args()
    with open(os.path.join(args.dump, "dump.json")) as f:
        manifest = json.load(f)
    rows, ok = [], True
    for p in manifest["points"]:
        s, h, hk, d, causal = p["seq"], p["heads"], p["kv_heads"], p["hd"], p["causal"]
        files = {k: os.path.join(args.dump, v) for k, v in p["files"].items()}
        q, o = load(files["q"], s, h, d), load(files["o"], s, h, d)
        k, v = load(files["k"], s, hk, d), load(files["v"], s, hk, d)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            tq, tk, tv = (x.transpose(1, 2) for x in (q, k, v))
            if hk != h:  # cuDNN through SDPA: K/V repeated per query head (no copy in ours)
                tk, tv = (x.repeat_interleave(h // hk, 1) for x in (tk, tv))
            c = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, scale=p["scale"]).transpose(1, 2)
        ref = reference(q, k, v, p["scale"], causal)
        ours, cudnn = o.float(), c.float()
        r = dict(hd=d, seq=s, heads=h, kv_heads=hk, causal=causal,
                 ours_vs_cudnn=(ours - cudnn).abs().max().item(),
                 ours_vs_ref=(ours - ref).abs().max().item(),
                 cudnn_vs_ref=(cudnn - ref).abs().max().item(),
                 mean_ours_vs_cudnn=(ours - cudnn).abs().mean().item())
        r["ok"] = bool(r["ours_vs_ref"] <= TOL and r["ours_vs_cudnn"] <= TOL)
        ok &= r["ok"]
        rows.append(r)
        print(f"hd{d:<4} s{s:<6} h{h}/{hk} {'causal' if causal else 'full  '}  "
              f"|ours-cuDNN| {r['ours_vs_cudnn']:.2e} (mean {r['mean_ours_vs_cudnn']:.1e})  "
              f"|ours-ref| {r['ours_vs_ref']:.2e}  |cuDNN-ref| {r['cudnn_vs_ref']:.2e}  "
              f"{'ok' if r['ok'] else 'FAILED'}", flush=True)
        del q, k, v, o, c, ref, ours, cudnn
        torch.cuda.empty_cache()
    doc = dict(format="tirx-attention-compare/1", device=torch.cuda.get_device_name(0),
               torch=torch.__version__, cudnn=torch.backends.cudnn.version(), tol=TOL, points=rows)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", args.out)
    sys.exit(0 if ok and rows else 1)


if __name__ == "__main__":
    main()
