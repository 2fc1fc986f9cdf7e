"""Quantization scales swept against TFLM with exhaustive inputs (tests/test_scale_sweep.py),
many scale sets per op.

    python benchmarks/scale_sweep.py [--sets 300] [--ops SUBSTRING,...] [--extremes]

Every kernel that derives a requantisation multiplier from tensor scales (or checks
them) has a case: the element-wise ops on every input value (all int8 pairs for the
binary int8 ones), QUANTIZE / DEQUANTIZE between every type pair TFLM supports, the
comparisons, CUMSUM, MEAN / SUM, pooling, the convolutions, FULLY_CONNECTED,
BATCH_MATMUL, SVDF and the integer LSTM (the module docstring of
tests/test_scale_sweep.py lists them). Per op: scale sets compared (both ran), sets
both rejected (or on which TFLM reads memory it never set and ours refuses, saying so),
output values compared, and the first differences. ``--extremes``: scales over the whole float32 range (1e-45, a
denormal, to 3.4e38; tests/test_scale_sweep.py ExtremeDraw) instead of the usual ones.
Exit status 1 on any difference (or one side refusing what the other runs).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.oracle import Oracle  # noqa: E402
from tests.test_scale_sweep import CASES, Draw, ExtremeDraw, sweep  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", default="")
    ap.add_argument("--extremes", action="store_true", help="scales from 1e-45 to 3.4e38")
    args = ap.parse_args(argv)
    names = sorted(CASES)
    if args.ops:
        names = [n for n in names if any(k in n for k in args.ops.split(","))]
    oracle = Oracle(timeout=600)
    bad = 0
    totals = [0, 0, 0]
    draw = ExtremeDraw if args.extremes else Draw
    print(f"{'op':<40}{'sets':>6}{'rejected':>10}{'values':>14}  differences")
    for name in names:
        t = time.perf_counter()
        compared, rejected, values, problems = sweep(oracle, name, args.sets, args.seed, draw)
        bad += bool(problems)
        totals[0] += compared
        totals[1] += rejected
        totals[2] += values
        print(f"{name:<40}{compared:>6}{rejected:>10}{values:>14,d}  {'; '.join(problems) or 'none'}"
              f"  ({time.perf_counter() - t:.0f} s)", flush=True)
    oracle.close()
    print(f"{len(names)} ops: {totals[0]} scale sets identical to TFLM ({totals[2]:,d} output "
          f"values), {totals[1]} refused by both, {bad} ops with differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
