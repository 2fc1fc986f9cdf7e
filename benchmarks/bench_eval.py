"""Data-set throughput: micro_runtime.evaluate against TFLM's per-sample loop.

    python benchmarks/bench_eval.py [--models a,b,...] [--rounds 3] [--seconds 1.0]
                                    [--batch N] [--target T] [--jobs N]
                                    [--max-samples N] [--json]

For every zoo model: random inputs (seed 0); the sample count S is what TFLM's loop runs
in about ``--seconds`` (at least one block). Each round times TFLM's loop in the oracle
worker process -- the tflite-micro package's Interpreter with reset(), set_input(),
invoke() and get_output() per sample -- then ours, Evaluator.run() on the same inputs
in this process (both set-ups untimed). Rounds alternate so both see the same machine
load; the figures are medians over rounds. "ratio" is ours / TFLM's samples per second
(wall clock, what the goal is about); "cpu ratio" compares the CPU time each process
spent, which other jobs on a shared machine disturb less. The first round's outputs of both are
compared bit for bit: the samples whose outputs differ from TFLM's are counted (batched
evaluation equals our single-sample interpreter by construction and by tests; a
difference from TFLM is one of the single-sample kernels). Goal: ours >= 10x TFLM's
samples per second on every model; the exit status is 1 when one is missed. ``--jobs N``
runs ours in N worker processes (``Evaluator.run(jobs=N)``), each on a share of the
samples; TFLM's loop stays in one process, so that ratio also counts the extra cores.

``--target T`` (default host64, the build the tflite-micro package is) runs ours for
another target profile, e.g. ``cortex-m4+cmsis-nn`` (the CLI's default: CMSIS-NN kernel
variants). TFLM's side stays the package's host64 loop, the speed reference; its outputs
are not expected to equal a Cortex-M / CMSIS-NN target's (other kernels and maths), so
for a target other than host64 the first round's batched outputs are compared with our
own single-sample interpreter on that target instead (reset() then invoke() per sample,
the first ``CHECKED_SAMPLES`` samples), and the "differ" note counts samples that differ
from it.
"""
import argparse
import glob
import json
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: see micro_runtime/__init__.py
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime import MicroRuntimeError, load_model  # noqa: E402
from micro_runtime.batched import Evaluator  # noqa: E402
from tests.oracle import Oracle  # noqa: E402

GOAL = 10.0
#: samples checked against our single-sample interpreter for a target other than host64
CHECKED_SAMPLES = 256
ARENA = 1 << 21
#: the samples of one model, inputs and outputs together, stay below this many bytes (each
#: is held several times: our inputs and outputs, the copies sent to and returned by the
#: oracle worker); --max-samples 1000000 on simple_add would otherwise take 30 GB
SAMPLE_BYTES_BUDGET = 1 << 30
DATA = os.path.join(os.path.dirname(__file__), "..", "tests", "data")
#: every zoo model (tests/data/*.tflite), the large ones first
FIRST = ["vww_96_int8", "person_detect", "pretrainedResnet_quant", "kws_ref_model"]
ZOO = FIRST + sorted(os.path.basename(p)[:-7] for p in glob.glob(os.path.join(DATA, "*.tflite"))
                     if os.path.basename(p)[:-7] not in FIRST)


def sample_inputs(model, count: int, seed: int = 0):
    """``count`` random samples per model input (full range of integer types)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in model.main.inputs:
        spec = model.main.tensors[t]
        shape = (count,) + tuple(spec.shape)
        if spec.dtype == np.float32:
            out.append(rng.uniform(-1, 1, shape).astype(np.float32))
        else:
            info = np.iinfo(spec.dtype)
            out.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(spec.dtype))
    return out


def cpu_seconds() -> float:
    """CPU time of this process (high resolution) and of its finished worker processes
    (os.times: clock ticks)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def bench_model(oracle, name: str, rounds: int, seconds: float, batch, target: str = "host64",
                jobs: int = 1, max_samples: int = 1 << 15):
    raw = open(os.path.join(DATA, name + ".tflite"), "rb").read()
    model = load_model(raw)
    ev = Evaluator(model, batch=batch, target=target)
    probe = sample_inputs(model, 8, seed=1)
    (per_sample, _), _ = oracle.time_loop(raw, probe, len(model.main.outputs), ARENA)
    per_sample /= 8
    sample_bytes = sum(int(np.prod(model.main.tensors[t].shape)) * model.main.tensors[t].dtype.itemsize
                       for t in list(model.main.inputs) + list(model.main.outputs))
    count = int(min(max_samples, max(ev.batch, 32, seconds / max(per_sample, 1e-7)),
                    max(ev.batch, SAMPLE_BYTES_BUDGET // max(1, sample_bytes))))
    if jobs > 1 and batch is None:                    # each worker's share sets the block
        ev = Evaluator(model, samples=-(-count // jobs), target=target)
    count = -(-count // (ev.batch * jobs)) * ev.batch * jobs   # whole blocks per worker
    xs = sample_inputs(model, count)
    ev.run([x[:min(count, ev.batch)] for x in xs])     # warm-up: first-call buffers
    theirs, ours, theirs_cpu, ours_cpu = [], [], [], []
    for r in range(rounds):
        (wall, cpu), tflm_out = oracle.time_loop(raw, xs, len(model.main.outputs), ARENA,
                                                 keep=(r == 0))
        start, start_cpu = time.perf_counter(), cpu_seconds()
        our_out = ev.run(xs, jobs=jobs)
        ours.append(time.perf_counter() - start)
        ours_cpu.append(cpu_seconds() - start_cpu)
        theirs.append(wall)
        theirs_cpu.append(cpu)
        if r == 0 and target != "host64":
            # the reference on this target: our single-sample interpreter
            checked = min(count, CHECKED_SAMPLES)
            single = Evaluator(model, batch=1, target=target).run([x[:checked] for x in xs])
            our_out = [o[:checked] for o in our_out]
            differ = np.zeros(checked, bool)
            for a, b in zip(our_out, single):
                differ |= (a.reshape(checked, -1) != b.reshape(checked, -1)).any(axis=1)
        elif r == 0:
            differ = np.zeros(count, bool)
            for a, b in zip(our_out, tflm_out):
                b = np.asarray(b).reshape(a.shape)
                if a.dtype != b.dtype:
                    raise SystemExit(f"{name}: output dtype {a.dtype} differs from TFLM's {b.dtype}")
                differ |= (a.reshape(count, -1) != b.reshape(count, -1)).any(axis=1)
    tflm_rate = count / statistics.median(theirs)
    our_rate = count / statistics.median(ours)
    cpu_ratio = statistics.median(theirs_cpu) / statistics.median(ours_cpu)
    per_sample_ops = sum(p.mode == "per-sample" for p in ev.plan)
    return {"model": name, "target": target, "samples": count, "batch": ev.batch,
            "jobs": ev.jobs_used,
            "tflm_per_s": tflm_rate,
            "ours_per_s": our_rate, "ratio": our_rate / tflm_rate, "cpu_ratio": cpu_ratio,
            "ops": len(ev.plan), "per_sample_ops": per_sample_ops,
            "whole_model_per_sample": ev.sequential_reason,
            "compared_with": ("TFLM" if target == "host64"
                              else f"our single-sample interpreter ({target})"),
            "samples_compared": int(differ.size),
            "samples_differing_from_tflm" if target == "host64" else "samples_differing": int(differ.sum())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="about how long TFLM's loop runs per round (sets the sample count)")
    ap.add_argument("--batch", type=int, default=None, help="samples per block (default: automatic)")
    ap.add_argument("--target", default="host64",
                    help="our target profile (default host64; TFLM's side is always the "
                         "package's host64 loop)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="our worker processes (TFLM's loop runs in one); 'cpu ratio' then "
                         "compares TFLM's CPU time with all our workers' together")
    ap.add_argument("--max-samples", type=int, default=1 << 15,
                    help="at most this many samples per model (default 32768)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    oracle = Oracle(timeout=600)
    rows = []
    if not args.json:
        if args.target != "host64":
            print(f"ours: target {args.target}; TFLM: the package's host64 loop; outputs "
                  f"checked against our single-sample interpreter on {args.target}")
        print(f"{'model':<26}{'samples':>8}{'batch':>7}{'TFLM/s':>11}{'ours/s':>11}{'ratio':>8}"
              f"{'goal':>8}{'cpu ratio':>10}  per-sample ops")
    if not args.json and args.jobs > 1:
        print(f"(ours: {args.jobs} worker processes; TFLM's loop: one process)")
    ok = True
    try:
        for name in args.models.split(","):
            try:
                row = bench_model(oracle, name, args.rounds, args.seconds, args.batch, args.target,
                                  args.jobs, args.max_samples)
            except MicroRuntimeError as e:
                # e.g. a _lut_metadata model on a target built without USE_TFLM_COMPRESSION
                if not args.json:
                    print(f"{name:<26} skipped: {type(e).__name__}: {str(e)[:90]}", flush=True)
                continue
            rows.append(row)
            met = row["ratio"] >= GOAL
            ok &= met
            if not args.json:
                note = (f"whole model: {row['whole_model_per_sample']}" if row["whole_model_per_sample"]
                        else f"{row['per_sample_ops']}/{row['ops']}")
                if row.get("samples_differing_from_tflm"):
                    note += f"  ({row['samples_differing_from_tflm']} samples differ from TFLM)"
                if row.get("samples_differing"):
                    note += (f"  ({row['samples_differing']} of {row['samples_compared']} samples "
                             f"differ from {row['compared_with']})")
                print(f"{name:<26}{row['samples']:>8}{row['batch']:>7}{row['tflm_per_s']:>11.0f}"
                      f"{row['ours_per_s']:>11.0f}{row['ratio']:>8.1f}"
                      f"{'>=' + format(GOAL, 'g') + ('' if met else ' MISS'):>8}"
                      f"{row['cpu_ratio']:>10.1f}  {note}", flush=True)
    finally:
        oracle.close()
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
