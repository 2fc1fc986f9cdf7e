"""Time and memory of `optimize --patches auto` on one model: wall and CPU seconds, the
process's peak resident memory, and what the search found before its time limit.

    python benchmarks/patches_limits.py MODEL [--target NAME] [--time-limit S] [--budget S]

Run it on a large model (a MobileNetV2 224x224, 3.9 MB, is in TFLM's source tree at
third_party/xtensa/examples/pytorch_to_tflite/mobilenet_v2_quantized_1x3x224x224.tflite):
the search stops at --time-limit and keeps the best rewrite found by then; writing,
planning (--budget seconds per optimizer run) and verifying it come after.
"""
import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.model import load_model  # noqa: E402
from micro_runtime.targets import DEFAULT_TARGET  # noqa: E402
from micro_runtime.tools.patches import optimize_with_patches  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--budget", type=float, default=5.0)
    args = ap.parse_args()
    model = load_model(args.model)
    wall = time.perf_counter()
    result = optimize_with_patches(model, args.target, budget_s=args.budget, time_limit_s=args.time_limit)
    wall = time.perf_counter() - wall
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{os.path.basename(args.model)} on {args.target}, --time-limit {args.time_limit:g} s, "
          f"--budget {args.budget:g} s")
    print(f"  wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, "
          f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB")
    print(f"  minimum arena: offline plan {result.offline_plan_min_arena_bytes} -> patches "
          f"{result.min_arena_bytes} bytes; {result.estimated} rewrites estimated, "
          f"{result.stages_searched} stages")
    for p in result.programs:
        print(f"  stage: {p.describe()}")
    print(f"  stopped early: {result.stopped_early or 'no'}")


if __name__ == "__main__":
    main()
