"""CPU time per sample of batched evaluation and per single invoke, no profiler, for
before / after comparisons of two source trees.

    python benchmarks/cpu_per_sample.py [--models a,b] [--samples 2000] [--invokes 2000]
                                        [--target host64] [--tree DIR ...]

Per model and tree: ``Evaluator.run`` on ``--samples`` random samples (seed 0, full integer
range, default block; one warm-up run first), CPU microseconds per sample, best of 3; then
``--invokes`` single ``invoke()`` calls of a ready interpreter, CPU microseconds per invoke,
best of 5; ``--batches 1024,4096`` measures evaluation with those blocks instead, in that
order in the one process. Each ``--tree`` (a checkout of micro-runtime, e.g. ``git worktree add /tmp/base
<commit>``) is measured in its own process importing that tree; without ``--tree``, this
one. Only code present in every tree is used (Evaluator, MicroInterpreter)."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MEASURE = r'''
import json, os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
from micro_runtime import MicroInterpreter
from micro_runtime.batched import Evaluator
path, samples, invokes, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
batches = [int(b) for b in sys.argv[5].split(",")] if sys.argv[5] else [None]
ev = Evaluator(path, target=target)
rng = np.random.default_rng(0)
xs = []   # bench_eval.sample_inputs' inputs, written out: the measured tree may lack it
for spec in ev.input_specs:
    shape = (samples,) + tuple(spec.shape)
    if spec.dtype == np.float32:
        xs.append(rng.uniform(-1, 1, shape).astype(np.float32))
    else:
        info = np.iinfo(spec.dtype)
        xs.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(spec.dtype))
by_batch = {}
for batch in batches:    # in order, in this one process
    ev = Evaluator(path, target=target, batch=batch)
    ev.run(xs)
    by_batch[ev.batch] = min((lambda t: (ev.run(xs), time.process_time() - t)[1])(time.process_time())
                             for _ in range(3)) / samples * 1e6
it = MicroInterpreter(path, arena_size=1 << 22, target=target)
it.allocate_tensors()
for _ in range(50):
    it.invoke()
def timed():
    t = time.process_time()
    for _ in range(invokes):
        it.invoke()
    return time.process_time() - t
per_invoke = min(timed() for _ in range(5)) / invokes
print(json.dumps({"eval_us_per_sample": by_batch, "invoke_us": per_invoke * 1e6}))
'''


def measure(tree: str, path: str, samples: int, invokes: int, target: str,
            batches: str = "") -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", MEASURE, path, str(samples), str(invokes), target,
                          batches],
                         env=env, cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="simple_add_model,audio_preprocessor_int8,hello_world_float")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--invokes", type=int, default=2000)
    ap.add_argument("--target", default="host64")
    ap.add_argument("--tree", action="append", default=[])
    ap.add_argument("--batches", default="",
                    help="comma-separated block sizes, measured in this order in one process "
                         "(default: the automatic block)")
    args = ap.parse_args()
    trees = args.tree or [ROOT]
    print(f"{'model':<28}{'tree':<28}{'batch':>7}{'eval us/sample':>16}{'invoke us':>12}")
    for name in args.models.split(","):
        path = os.path.join(ROOT, "tests", "data", name + ".tflite")
        for tree in trees:
            row = measure(os.path.abspath(tree), path, args.samples, args.invokes, args.target,
                          args.batches)
            for batch, us in row["eval_us_per_sample"].items():
                print(f"{name:<28}{os.path.basename(os.path.abspath(tree)):<28}{batch:>7}"
                      f"{us:>16.2f}{row['invoke_us']:>12.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
