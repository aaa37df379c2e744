"""The numbers `attention-sm100-emulator.md` quotes from an `attention_sm100` timeline.

Usage: python3 timeline_stats.py timeline.json   (the JSON `tirx sim … --timeline` writes)

CTA 0 only. Warp 0 / 4 are the first warps of the two softmax warpgroups, warp 8 the
correction warpgroup's. "While the tensor core works" counts a warp's busy steps against each
`tcgen05.mma` commit group in flight, summed over the groups (overlapping groups count twice).
"""
import json
import sys


def union(spans):
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(spans):
    return sum(b - a for a, b in spans)


def inter(u, v):
    i = j = 0
    out = []
    while i < len(u) and j < len(v):
        a, b = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        if a < b:
            out.append([a, b])
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return out


def main(path):
    t = json.load(open(path))["timeline"]
    ops = [o for o in t["ops"] if o["cta"] == 0]
    mma = [[o["issue"], o["complete"]] for o in ops if o["unit"] == "tcgen05_mma"]

    def busy(w):
        return union([[s["start"], s["end"]] for s in t["warps"]
                      if s["cta"] == 0 and s["warp"] == w and s["state"] == "busy"])

    def with_mma(w):
        return sum(length(inter(busy(w), [g])) for g in mma)

    window = [[min(a for a, _ in mma), max(b for _, b in mma)]]
    corr = inter(busy(8), window)
    print("steps of the run", t["end"])
    print("tcgen05.mma groups", len(mma), "steps in flight summed", sum(b - a for a, b in mma),
          "with one in flight", length(union(mma)))
    for w in (0, 4, 8):
        print(f"warp {w} busy while the tensor core works", with_mma(w))
    print("softmax warps 0 and 4 busy together", length(inter(busy(0), busy(4))))
    print("correction warp 8 busy between the first and last MMA", length(corr),
          "of which while warp 0 or 4 is busy", length(inter(corr, union(busy(0) + busy(4)))))
    for unit in ("tmem_load", "tmem_store"):
        print(unit, "of warp 8", sum(1 for o in ops if o["unit"] == unit and o["warp"] == 8))


if __name__ == "__main__":
    main(sys.argv[1])
