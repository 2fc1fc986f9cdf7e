"""Long fuzz run over the zoo: mutate models, load + allocate + invoke, tally outcomes.

    python benchmarks/fuzz_models.py --runs 10000 --seed 1 [--kinds all|bytes|structured|K1,K2]

Mutations (tests/fuzzing.py): byte-level (bit flips, truncation, splices, offsets, huge
int32 words, zero runs) and structure-aware (the model parsed, one field changed -- tensor
dims including a zero dimension beside huge ones, tensor types, buffer indices, operator
tensor / opcode indices, quantization arrays, builtin and custom options, graph inputs and
outputs -- and written again). Each run goes through one public surface in turn:
MicroInterpreter (three runs in seven), Interpreter.from_bytes, ``micro-runtime info`` and
``micro-runtime size`` on a file, and batched evaluation (``Evaluator`` with its automatic
arena sizes on cortex-m4+cmsis-nn, 5 samples in blocks of 3). The hand-made hostile corpus (tests/fuzzing.py
hostile_corpus: zero dimensions beside huge ones, overflowing products) runs first,
through every surface.

Prints the count of outcomes by exception class (overall, per mutation family and per
surface), runs over the time limit, the slowest run, and the process's peak resident
memory. Exits non-zero on any finding (an exception outside the MicroRuntimeError family,
or a run over the limit).
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

from tests.fuzzing import (BYTE_MUTATIONS, MUTATIONS, STRUCTURED_MUTATIONS, SURFACES,  # noqa: E402
                           hostile_corpus, mutate, run_one)

#: public surface of run i: MicroInterpreter three times, then the API, the CLI, batched eval
SURFACE_CYCLE = ("micro", "api", "micro", "cli_info", "micro", "cli_size", "eval")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=float, default=2.0, help="seconds allowed per run")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data"))
    ap.add_argument("--kinds", default="all", help="all, bytes, structured, or a comma-separated list")
    args = ap.parse_args()
    kinds = {"all": MUTATIONS, "bytes": BYTE_MUTATIONS, "structured": STRUCTURED_MUTATIONS}.get(
        args.kinds, tuple(args.kinds.split(",")))
    models = [(os.path.basename(p), open(p, "rb").read())
              for p in sorted(glob.glob(os.path.join(args.models, "*.tflite")))]
    rng = np.random.default_rng(args.seed)
    tally = collections.Counter()
    by_kind = collections.Counter()
    by_family = collections.Counter()
    by_surface = collections.Counter()
    slow, findings = [], []
    slowest = (0.0, None)
    start = time.time()
    # the hand-made hostile corpus first, through every surface (not counted in --runs)
    corpus = collections.Counter()
    for name, raw in hostile_corpus():
        for surface in SURFACES:
            out = run_one(raw, name, surface)
            corpus[out.result] += 1
            if out.result.startswith("other:"):
                findings.append((f"corpus: {name}", surface, out.message))
    for i in range(args.runs):
        name, raw = models[i % len(models)]
        kind, data = mutate(raw, rng, kinds[int(rng.integers(len(kinds)))])
        surface = SURFACE_CYCLE[i % len(SURFACE_CYCLE)]
        out = run_one(data, kind, surface)
        tally[out.result] += 1
        by_kind[(kind, out.result)] += 1
        by_family[("structured" if kind in STRUCTURED_MUTATIONS else "bytes", out.result)] += 1
        by_surface[(surface, out.result)] += 1
        if out.seconds > slowest[0]:
            slowest = (out.seconds, f"{name} {kind}")
        if out.seconds > args.limit:
            slow.append((name, kind, out.seconds))
        if out.result.startswith("other:"):
            findings.append((name, f"{kind}/{surface}", out.message))
            with open(f"/tmp/fuzz_finding_{os.getpid()}_{len(findings)}.tflite", "wb") as f:
                f.write(data)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.runs} mutated models from {len(models)} zoo models, seed {args.seed}, "
          f"{time.time() - start:.0f} s")
    print("hostile corpus (x every surface): " + ", ".join(f"{k} {v}" for k, v in corpus.most_common()))
    print(f"{'outcome':<28}{'count':>8}")
    for result, count in tally.most_common():
        print(f"{result:<28}{count:>8}")
    for title, table in (("per mutation family", by_family), ("per surface", by_surface)):
        print(f"\n{title}:")
        for (group, result), count in sorted(table.items()):
            print(f"  {group:<12}{result:<28}{count:>8}")
    print(f"runs over {args.limit} s: {len(slow)}; slowest {slowest[0]:.3f} s ({slowest[1]})")
    print(f"peak resident memory: {peak_mb:.0f} MiB")
    for f in findings[:20]:
        print("FINDING", f)
    return 1 if (findings or slow) else 0


if __name__ == "__main__":
    sys.exit(main())
