"""Patch-based rewriting on every zoo model: the minimum arena TFLM needs for the
original, with the offline plan only, and after `optimize --patches auto`.

    python benchmarks/patches_zoo.py [--target NAME ...] [--models NAME ...] [--no-check]

Targets default to every profile in micro_runtime.targets. For host64 (what the
tflite-micro package is) each rewritten model is also run in the package: outputs
bit-identical to the original on 3 seeded inputs, TFLM's binary-searched minimum arena
equal to our prediction, and TFLM's invoke time before / after (median of 200 invokes,
10 interleaved rounds of 20 after 3 warm-ups, on this host: a relative figure, not MCU
cycles). ``--save DIR`` writes each rewritten model there.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from micro_runtime.model import load_model  # noqa: E402
from micro_runtime.targets import TARGETS  # noqa: E402
from micro_runtime.tools.patches import optimize_with_patches, seeded_inputs  # noqa: E402
from tests.test_zoo import ZOO  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "tests", "data")


def check_in_tflm(oracle, original: bytes, rewritten: bytes, predicted: int):
    """(outputs identical on 3 seeds, TFLM's minimum arena, invoke ms before, after)."""
    model = load_model(original)
    identical = True
    for seed in range(3):
        inputs = seeded_inputs(model, seed)
        a = oracle.run(original, inputs, arena_size=1 << 21)
        b = oracle.run(rewritten, inputs, arena_size=1 << 21)
        if not (a.ok and b.ok) or len(a.outputs) != len(b.outputs) or any(
                x.dtype != y.dtype or x.tobytes() != y.tobytes() for x, y in zip(a.outputs, b.outputs)):
            identical = False
    zeros = [np.zeros_like(x) for x in seeded_inputs(model, 0)]
    tflm_min = oracle.min_arena(rewritten, zeros, high=predicted + 1024)
    inputs = seeded_inputs(model, 0)
    before, after = [], []
    for _ in range(10):   # interleaved, so that load on the host hits both alike
        before += oracle.time_invoke(original, inputs, 1 << 21, warmup=3, runs=20)
        after += oracle.time_invoke(rewritten, inputs, 1 << 21, warmup=3, runs=20)
    return identical, tflm_min, np.median(before) * 1e3, np.median(after) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", action="append", choices=sorted(TARGETS),
                    help="target profile (repeat; default: all)")
    ap.add_argument("--models", nargs="*", default=ZOO)
    ap.add_argument("--budget", type=float, default=5.0, help="offline-plan search seconds")
    ap.add_argument("--refine-moves", type=int, default=1000, help="estimates spent refining")
    ap.add_argument("--no-check", action="store_true", help="skip the runs in the tflite-micro package")
    ap.add_argument("--save", metavar="DIR", help="write each rewritten model to DIR")
    args = ap.parse_args()
    targets = args.target or list(TARGETS)
    oracle = None
    if not args.no_check and "host64" in targets:
        from tests import oracle as oracle_mod
        if oracle_mod.available():
            oracle = oracle_mod.Oracle(timeout=600)
    rows, notes = [], []
    for target in targets:
        for name in args.models:
            path = os.path.join(DATA, name + ".tflite")
            raw = open(path, "rb").read()
            t0 = time.perf_counter()
            r = optimize_with_patches(raw, target, budget_s=args.budget, refine_moves=args.refine_moves)
            seconds = time.perf_counter() - t0
            if args.save and r.programs:
                os.makedirs(args.save, exist_ok=True)
                with open(os.path.join(args.save, f"{name}_{target}_patches.tflite"), "wb") as f:
                    f.write(r.model)
            saved = r.original_min_arena_bytes - r.min_arena_bytes
            pct = 100.0 * saved / r.original_min_arena_bytes
            if r.programs:
                rewrite = "; ".join(p.describe() for p in r.programs)
                macs = f"+{r.extra_macs} (+{100.0 * r.extra_macs / max(r.original_macs, 1):.1f} %)"
            else:
                rewrite, macs = "none", "0"
                if r.best_rejected:
                    why = (f"{r.stages_searched} stages searched; best rewrite found does not help: "
                           f"{r.best_rejected}")
                else:
                    why = "no operator range forms a stage: " + (r.refusals[0] if r.refusals else "no operators")
                notes.append(f"- {name} ({target}): {why}")
            check = ""
            if oracle is not None and target == "host64" and r.programs:
                identical, tflm_min, before, after = check_in_tflm(oracle, raw, r.model, r.min_arena_bytes)
                check = (f"{'identical' if identical else 'DIFFERENT'}, TFLM min {tflm_min}"
                         f"{'' if tflm_min == r.min_arena_bytes else ' (MISMATCH)'} | "
                         f"{before:.2f} -> {after:.2f} ms")
            rows.append(f"| {name} | {target} | {r.original_min_arena_bytes} | {r.offline_plan_min_arena_bytes} | "
                        f"**{r.min_arena_bytes}** | {saved} ({-pct:+.1f} %) | {r.head_bytes} + {r.tail_bytes} | "
                        f"{rewrite} | {macs} | {check} | {seconds:.0f} |")
            print(rows[-1], flush=True)
    print()
    print("| model | target | TFLM min arena | offline plan | patches | saved vs TFLM | head + tail | "
          "rewrite | extra MACs | in the package (host64): outputs, min arena, invoke | search s |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---|---:|")
    print("\n".join(rows))
    print()
    print("\n".join(notes))
    if oracle is not None:
        oracle.close()


if __name__ == "__main__":
    main()
