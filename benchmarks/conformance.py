"""Conformance sweep: every .tflite under the given paths, run by micro-runtime and by
TFLM (the tflite-micro package, in a subprocess) on seeded random inputs.

    python benchmarks/conformance.py PATH [PATH ...] [--seeds 2] [--min-arena] [--json]

Per model: both must accept or both reject it; when both run, outputs must be bit-identical,
print_allocations() lines identical, and (``--min-arena``) our minimum arena must equal
TFLM's binary-searched one. Exit status 1 when any model differs.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.conformance_check import MISMATCHES, check  # noqa: E402
from tests.oracle import Oracle  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--min-arena", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".tflite")]
        else:
            files.append(p)
    oracle = Oracle()
    rows = []
    for f in sorted(files):
        t = time.perf_counter()
        row = check(f, oracle, args.seeds, args.min_arena)
        row["seconds"] = round(time.perf_counter() - t, 2)
        rows.append(row)
        if not args.json:
            print(f"{row['status']:<22} {os.path.relpath(f)}  {row['detail']}", flush=True)
    oracle.close()
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    if args.json:
        print(json.dumps({"models": rows, "counts": counts}, indent=1))
    else:
        print()
        for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
            print(f"{k:<24}{v:>5}")
    return 1 if any(r["status"] in MISMATCHES for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
