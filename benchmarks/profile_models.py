"""cProfile of batched evaluation and of single invokes, for finding the hot spots.

    python benchmarks/profile_models.py [--models a,b] [--samples 512] [--invokes 2000]
                                        [--target host64] [--top 12]

Per model: ``Evaluator.run`` on ``--samples`` random samples (seed 0, full integer range;
one untimed warm-up block first), then ``--invokes`` single ``invoke()`` calls of a
ready interpreter; each prints the ``--top`` entries by own time (tottime) and the CPU
seconds per sample / per invoke of the profiled run (cProfile's overhead included).
"""
import argparse
import cProfile
import io
import os
import pstats
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: see micro_runtime/__init__.py
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime import MicroInterpreter, load_model  # noqa: E402
from micro_runtime.batched import Evaluator  # noqa: E402
from benchmarks.bench_eval import DATA, sample_inputs  # noqa: E402


def _top(profile: cProfile.Profile, top: int) -> str:
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(top)
    lines = text.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start:start + top + 1])


def profile_model(name: str, samples: int, invokes: int, target: str, top: int) -> None:
    model = load_model(open(os.path.join(DATA, name + ".tflite"), "rb").read())
    ev = Evaluator(model, target=target, samples=samples)
    xs = sample_inputs(model, samples)
    ev.run([x[:ev.batch] for x in xs])
    profile = cProfile.Profile()
    cpu = time.process_time()
    profile.enable()
    ev.run(xs)
    profile.disable()
    cpu = time.process_time() - cpu
    print(f"== {name}: Evaluator.run, {samples} samples (batch {ev.batch}), "
          f"{cpu / samples * 1e6:.1f} us CPU per sample under the profiler")
    print(_top(profile, top))

    it = MicroInterpreter(model, arena_size=1 << 21, target=target)
    it.allocate_tensors()
    for i, x in enumerate(sample_inputs(model, 1)):
        it.set_input(x[0], i)
    for _ in range(20):
        it.invoke()
    profile = cProfile.Profile()
    cpu = time.process_time()
    profile.enable()
    for _ in range(invokes):
        it.invoke()
    profile.disable()
    cpu = time.process_time() - cpu
    print(f"== {name}: {invokes} invokes, {cpu / invokes * 1e3:.3f} ms CPU per invoke "
          f"under the profiler")
    print(_top(profile, top))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="trained_lstm_int8,keyword_scrambled_8bit")
    ap.add_argument("--samples", type=int, default=512)
    ap.add_argument("--invokes", type=int, default=2000)
    ap.add_argument("--target", default="host64")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    for name in args.models.split(","):
        profile_model(name, args.samples, args.invokes, args.target, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
