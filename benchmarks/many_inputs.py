"""Many-input differential run: every zoo model (tests/data/*.tflite) and every
tests/data/tflm_examples model (recursively), N seeded random full-range inputs per model,
the tflite-micro package (TFLM) against micro-runtime -- one interpreter each, per sample:
set the inputs, invoke, read the outputs (no reset between samples).

    python benchmarks/many_inputs.py [--samples 64] [--seed 7] [--models SUBSTRING,...] [--json]

Prints ``exact/total`` per model (samples whose outputs are all bit-identical), then a
summary table. Exit status 1 unless every model is N/N exact. Inputs: integers uniform over
their type (int32/int64 clipped to int16's range), floats uniform in [-1, 1]; sample i of
a model uses the seed (seed, i) (tests/conformance_check.py many_input_samples).
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tests.conformance_check import all_models, many_inputs  # noqa: E402
from tests.oracle import Oracle  # noqa: E402

DATA = os.path.join(os.path.dirname(HERE), "tests", "data")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--models", default="", help="comma-separated substrings of the model paths to keep")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    models = all_models()
    if args.models:
        keep = args.models.split(",")
        models = [m for m in models if any(k in m for k in keep)]
    oracle = Oracle(timeout=1200)
    rows = []
    t_all = time.perf_counter()
    for path in models:
        t = time.perf_counter()
        row = many_inputs(path, oracle, args.samples, args.seed)
        row["model"] = os.path.relpath(path, DATA)
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        if not args.json:
            print(f"{row['exact']:>4}/{row['total']:<4} {row['status']:<10} {row['model']}  "
                  f"{row['detail']}  ({row['seconds']} s)", flush=True)
    oracle.close()
    bad = [r for r in rows if r["exact"] != r["total"]]
    if args.json:
        print(json.dumps({"samples": args.samples, "seed": args.seed, "rows": rows}, indent=1))
    else:
        exact_samples = sum(r["exact"] for r in rows)
        total_samples = sum(r["total"] for r in rows)
        print(f"\n{len(rows) - len(bad)} of {len(rows)} models N/N exact; {exact_samples} of "
              f"{total_samples} samples exact; N = {args.samples}, seed {args.seed}; "
              f"{time.perf_counter() - t_all:.0f} s")
        for r in bad:
            print(f"  NOT EXACT: {r['model']}: {r['exact']}/{r['total']} {r['status']} {r['detail']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
