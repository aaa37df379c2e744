"""Every timed config of a `tirx bench gemm --all --json` file, fastest first, a line a shape
(the text table shows only the fastest): `python3 all_table.py FILE [N]` (N configs, default 8)."""
import json
import sys

n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
for r in json.load(open(sys.argv[1]))["rows"]:
    c = sorted((x for x in r["candidates"] if x["ms"]), key=lambda x: x["ms"])
    print(r["m"], r["n"], r["k"], "cuBLASLt %.1f us" % (1e3 * r["cublas_ms"]),
          " ".join("%s/%s %.1f" % (x["kernel"][5:], x["config"], 1e3 * x["ms"]) for x in c[:n]))
