"""Wall-clock time of each operator, in batched evaluation and in single invokes, through
the interpreter's profiler hook (``MicroInterpreter.profiler``: called with the node and
its seconds after each operator).

    python benchmarks/op_times.py MODEL [--samples 4096] [--invokes 300] [--batch N]
                                        [--target host64]

``MODEL``: a zoo name (tests/data/NAME.tflite) or a path. Prints, per operator, microseconds
per sample of ``Evaluator.run`` on ``--samples`` random samples (seed 0, full integer range;
one untimed run first, then three timed) and microseconds per ``invoke()`` of a ready
single-sample interpreter (``--invokes`` calls after 20 untimed). The operators' times
inside the whole model include what the earlier operators leave in the caches, which
timing one operator alone does not.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: see micro_runtime/__init__.py
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime import MicroInterpreter, load_model  # noqa: E402
from micro_runtime.batched import Evaluator  # noqa: E402
from benchmarks.bench_eval import DATA, sample_inputs  # noqa: E402


def _timed(interpreter, run, repeats: int):
    """Seconds per operator (in node order) over ``repeats`` calls of ``run``."""
    seconds = {}
    order = []

    def hook(node, elapsed):
        if id(node) not in seconds:
            seconds[id(node)] = 0.0
            order.append(node)
        seconds[id(node)] += elapsed

    interpreter.profiler = hook
    try:
        for _ in range(repeats):
            run()
    finally:
        interpreter.profiler = None
    return [(node, seconds[id(node)]) for node in order]


def _label(node) -> str:
    op = getattr(node.registration, "op", None) or type(node.registration).__name__
    shapes = [tuple(a.shape) for a in node.output_arrays if a is not None]
    return f"{op} -> {shapes[0] if shapes else ()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--samples", type=int, default=4096)
    ap.add_argument("--invokes", type=int, default=300)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--target", default="host64")
    args = ap.parse_args()
    path = args.model if os.path.exists(args.model) else os.path.join(DATA, args.model + ".tflite")
    model = load_model(open(path, "rb").read())

    ev = Evaluator(model, target=args.target, batch=args.batch)
    xs = sample_inputs(model, args.samples)
    ev.run(xs)
    block = ev._block
    batched = _timed(block, lambda: ev.run(xs), 3) if block is not None else []

    it = MicroInterpreter(model, arena_size=1 << 22, target=args.target)
    it.allocate_tensors()
    for i, x in enumerate(sample_inputs(model, 1)):
        it.set_input(x[0], i)
    for _ in range(20):
        it.invoke()
    start = time.perf_counter()
    for _ in range(args.invokes):
        it.invoke()
    whole = (time.perf_counter() - start) / args.invokes
    single = _timed(it, it.invoke, args.invokes)

    print(f"{os.path.basename(path)} on {args.target}: eval blocks of {ev.batch} "
          f"({'per-sample: ' + ev.sequential_reason if block is None else 'on blocks'}), "
          f"invoke {whole * 1e6:.0f} us")
    print(f"{'#':>3}  {'operator':<48}{'eval us/sample':>15}{'invoke us':>11}")
    rows = max(len(batched), len(single))
    for k in range(rows):
        label = _label(single[k][0]) if k < len(single) else _label(batched[k][0])
        per_sample = (f"{batched[k][1] / 3 / args.samples * 1e6:.3f}" if k < len(batched) else "-")
        per_invoke = f"{single[k][1] / args.invokes * 1e6:.1f}" if k < len(single) else "-"
        print(f"{k:>3}  {label:<48}{per_sample:>15}{per_invoke:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
