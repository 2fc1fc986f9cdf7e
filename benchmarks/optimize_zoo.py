"""The arena optimizer on every zoo model: TFLM's head vs the optimized head.

    python benchmarks/optimize_zoo.py [--target host64] [--budget 5] [--reorder]

Heads and minimum arenas are micro-runtime's predictions; tests/test_optimizer.py checks
each of them against TFLM (the tflite-micro package) running the optimized model.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.tools.optimizer import optimize_model  # noqa: E402
from tests.test_zoo import ZOO  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "tests", "data")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="host64")
    ap.add_argument("--budget", type=float, default=5.0)
    ap.add_argument("--reorder", action="store_true")
    args = ap.parse_args()
    print(f"target {args.target}{', reorder' if args.reorder else ''}")
    print("| model | TFLM head | optimized head | lower bound | head saved | TFLM min arena | optimized min arena | saved | s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in ZOO:
        r = optimize_model(os.path.join(DATA, name + ".tflite"), target=args.target,
                           reorder=args.reorder, budget_s=args.budget)
        saved = r.original_min_arena_bytes - r.optimized_min_arena_bytes
        pct = 100.0 * saved / r.original_min_arena_bytes
        print(f"| {name} | {r.original_head_bytes} | {r.optimized_head_bytes} | {r.lower_bound_bytes} | "
              f"{r.saved_bytes} | {r.original_min_arena_bytes} | {r.optimized_min_arena_bytes} | "
              f"{saved} ({pct:.1f} %) | {r.seconds:.1f} |")


if __name__ == "__main__":
    main()
