"""How small can a patch rewrite that cuts a model's first operator get? Estimates every
stage that starts at operator 0 (each end up to --max-end, row strips of each --rows
count, both padding policies, every slice-hoisting point) with the estimator the search
uses (micro_runtime.tools.patches.estimate: tail and live-memory head of the rewritten
model, which the written rewrites reach byte for byte) and prints the best.

    python benchmarks/patches_first_op_bound.py [MODEL] [--target host64] [--max-end 7]
                                                [--rows 2,3,4,6,8,12]

Default model: tests/data/vww_96_int8.tflite (is a 72,000-byte arena reachable?)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.model import load_model  # noqa: E402
from micro_runtime.tools import patches  # noqa: E402

DEFAULT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "vww_96_int8.tflite")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default=DEFAULT)
    ap.add_argument("--target", default="host64")
    ap.add_argument("--max-end", type=int, default=7)
    ap.add_argument("--rows", default="2,3,4,6,8,12")
    args = ap.parse_args()
    model = load_model(open(args.model, "rb").read())
    profile = patches.ModelProfile.measure(model, args.target)
    print(f"{os.path.basename(args.model)} on {args.target}: tail of the model as it is "
          f"{profile.tail_bytes} bytes")
    best, count, refused = None, 0, 0
    for end in range(args.max_end + 1):
        for rows in (int(r) for r in args.rows.split(",")):
            for policy in ("tight", "nopad"):
                try:
                    program = patches.plan_rewrite(model, (0, end), (rows, 1), policy=policy)
                except patches.PatchError:
                    refused += 1
                    continue
                for hoist in range(-1, rows - 1):
                    e = patches.estimate(patches.hoisted(program, hoist), profile)
                    count += 1
                    row = (e.min_arena_bytes, e.head_bound_bytes, e.tail_bytes, end, rows, policy, hoist)
                    best = row if best is None or row < best else best
    print(f"{count} rewrites estimated ({refused} plans refused as not exact)")
    if best is not None:
        arena, head, tail, end, rows, policy, hoist = best
        print(f"best: operators 0..{end} in {rows} row strips ({policy}, slices hoisted at patch "
              f"{hoist}): {arena} bytes = head {head} + tail {tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
