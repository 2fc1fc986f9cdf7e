"""Long fuzz run over the zoo: mutate models, load + allocate + invoke, tally outcomes.

    python benchmarks/fuzz_models.py --runs 10000 --seed 1

Prints the count of outcomes by exception class, runs over the time limit, the slowest
run, and the process's peak resident memory. Exits non-zero on any finding (an exception
outside the MicroRuntimeError family, or a run over the limit).
"""
import argparse
import collections
import glob
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.fuzzing import mutate, run_one  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=float, default=2.0, help="seconds allowed per run")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data"))
    args = ap.parse_args()
    models = [(os.path.basename(p), open(p, "rb").read())
              for p in sorted(glob.glob(os.path.join(args.models, "*.tflite")))]
    rng = np.random.default_rng(args.seed)
    tally = collections.Counter()
    by_kind = collections.Counter()
    slow, findings = [], []
    slowest = (0.0, None)
    start = time.time()
    for i in range(args.runs):
        name, raw = models[i % len(models)]
        kind, data = mutate(raw, rng)
        out = run_one(data, kind)
        tally[out.result] += 1
        by_kind[(kind, out.result)] += 1
        if out.seconds > slowest[0]:
            slowest = (out.seconds, f"{name} {kind}")
        if out.seconds > args.limit:
            slow.append((name, kind, out.seconds))
        if out.result.startswith("other:"):
            findings.append((name, kind, out.message))
            with open(f"/tmp/fuzz_finding_{len(findings)}.tflite", "wb") as f:
                f.write(data)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.runs} mutated models from {len(models)} zoo models, seed {args.seed}, "
          f"{time.time() - start:.0f} s")
    print(f"{'outcome':<28}{'count':>8}")
    for result, count in tally.most_common():
        print(f"{result:<28}{count:>8}")
    print(f"runs over {args.limit} s: {len(slow)}; slowest {slowest[0]:.3f} s ({slowest[1]})")
    print(f"peak resident memory: {peak_mb:.0f} MiB")
    for f in findings[:20]:
        print("FINDING", f)
    return 1 if (findings or slow) else 0


if __name__ == "__main__":
    sys.exit(main())
