"""``micro-runtime bench``: TFLite's benchmark_model, for the emulator.

Times model loading, interpreter construction, ``allocate_tensors()``, applying a
delegate (``--delegate float32|float16``), the first invoke, ``warmup_runs`` invokes,
then ``num_runs`` timed invokes (min / mean / median / max / std), with a per-operator
profile (through :attr:`MicroInterpreter.profiler`) and a summary by op type, and the
arena figures of the benchmarked graph on the chosen target.

The times are the emulator's on this host (numpy kernels in Python): they tell where
the emulator spends its time and compare graphs (with / without a delegate) on the same
machine; they are not MCU cycle counts. The arena figures are exact for the target.
Inputs are seeded random tensors (see :func:`micro_runtime.tools.drift.random_inputs`).
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np

from ..errors import InputError
from ..model import load_model
from ..targets import DEFAULT_TARGET

DELEGATES = ("none", "float32", "float16")
#: ``--json`` keys of ``bench`` (stable).
BENCH_KEYS = ("model", "model_bytes", "target", "interpreter", "delegate", "load_ms", "init_ms", "allocate_ms",
              "delegate_ms", "first_invoke_ms", "warmup_runs", "warmup_mean_ms", "num_runs",
              "invoke_ms", "operators", "op_types", "arena")


@dataclass
class BenchReport:
    model: str
    model_bytes: int
    target: str
    interpreter: str                          #: "recording" or "micro"
    delegate: str
    load_ms: float
    init_ms: float
    allocate_ms: float
    delegate_ms: Optional[float]
    first_invoke_ms: float
    warmup_runs: int
    warmup_mean_ms: Optional[float]
    num_runs: int
    invoke_ms: Dict[str, float]               #: min, mean, median, max, std
    operators: List[dict] = field(default_factory=list)   #: node, op, name, mean_ms, percent, cdf_percent
    op_types: List[dict] = field(default_factory=list)    #: op, count, mean_ms, percent
    #: min_arena_bytes = head_bytes + tail_bytes + temporaries_gap_bytes + alignment_gap_bytes
    arena: Dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _ms(seconds: float) -> float:
    return seconds * 1e3


def run_benchmark(model_path: str, warmup_runs: int = 1, num_runs: int = 50, delegate: str = "none",
                  target: str = DEFAULT_TARGET, seed: int = 0, interpreter: str = "recording",
                  on_progress: Optional[Callable[[int, int], None]] = None,
                  max_loop_iterations: Optional[int] = None) -> BenchReport:
    """Benchmark ``model_path`` (see the module doc) with a RecordingMicroInterpreter
    (``interpreter="recording"``) or a MicroInterpreter (``"micro"``: its arena figures);
    ``on_progress(done, total)`` after each warm-up and timed invoke. ``seed``: 0 to
    2^32 - 1. ``max_loop_iterations``: see :class:`MicroInterpreter`."""
    from arena.arena import PROBE_ARENA_BYTES, replay
    from ..api import count_resource_variables
    from .drift import random_inputs
    from ..interpreter import MicroInterpreter
    from ..targets import get_target
    from ..limits import check_int_option
    check_int_option(warmup_runs, "warmup_runs", 0, 1000000)
    check_int_option(num_runs, "num_runs", 1, 1000000)
    check_int_option(seed, "seed", 0, (1 << 32) - 1)
    if interpreter not in ("recording", "micro"):
        raise InputError(f"interpreter must be 'recording' or 'micro', not {interpreter!r}")
    if delegate not in DELEGATES:
        raise InputError(f"delegate must be one of {', '.join(DELEGATES)}, not {delegate!r}")
    target_name = get_target(target).name
    import kernels  # noqa: F401 - imported before the clock starts: Python imports are not init time

    start = time.perf_counter()
    model = load_model(model_path)
    load_s = time.perf_counter() - start

    # a nominal arena of 2^40 bytes: host memory is taken only for the bytes used
    start = time.perf_counter()
    it = MicroInterpreter(model, arena_size=PROBE_ARENA_BYTES, target=target_name,
                          recording=interpreter == "recording",
                          num_resource_variables=count_resource_variables(model),
                          error_reporter=lambda m: None, max_loop_iterations=max_loop_iterations)
    init_s = time.perf_counter() - start
    start = time.perf_counter()
    it.allocate_tensors()
    allocate_s = time.perf_counter() - start
    delegate_s = None
    if delegate != "none":
        from ..delegates.float_delegate import FloatDelegate
        start = time.perf_counter()
        it.modify_graph_with_delegate(FloatDelegate(delegate))
        delegate_s = time.perf_counter() - start

    sg = model.main
    for i, x in enumerate(random_inputs([sg.tensors[t] for t in sg.inputs], seed)):
        it.set_input(x, i)
    start = time.perf_counter()
    it.invoke()
    first_s = time.perf_counter() - start

    total_runs = int(warmup_runs) + int(num_runs)
    warm = []
    for r in range(int(warmup_runs)):
        start = time.perf_counter()
        it.invoke()
        warm.append(time.perf_counter() - start)
        if on_progress is not None:
            on_progress(r + 1, total_runs)

    nodes = it.subgraphs[0].nodes
    per_node = np.zeros(len(nodes))
    index_of = {id(node): k for k, node in enumerate(nodes)}

    def profiler(node, seconds):
        k = index_of.get(id(node))
        if k is not None:
            per_node[k] += seconds

    runs = np.zeros(int(num_runs))
    it.profiler = profiler
    try:
        for r in range(int(num_runs)):
            start = time.perf_counter()
            it.invoke()
            runs[r] = time.perf_counter() - start
            if on_progress is not None:
                on_progress(int(warmup_runs) + r + 1, total_runs)
    finally:
        it.profiler = None

    mean_node_ms = per_node * 1e3 / num_runs
    total = float(mean_node_ms.sum()) or 1.0
    operators, cdf = [], 0.0
    main_tensors = it.model.main.tensors
    for k, node in enumerate(nodes):
        pct = 100.0 * mean_node_ms[k] / total
        cdf += pct
        out_name = main_tensors[node.outputs[0]].name if node.outputs and node.outputs[0] >= 0 else ""
        operators.append({"node": node.index, "op": node.name, "name": out_name,
                          "mean_ms": round(float(mean_node_ms[k]), 4), "percent": round(pct, 2),
                          "cdf_percent": round(cdf, 2)})
    by_type: Dict[str, List[float]] = {}
    for k, node in enumerate(nodes):
        by_type.setdefault(node.name, []).append(float(mean_node_ms[k]))
    op_types = sorted(({"op": op, "count": len(v), "mean_ms": round(sum(v), 4),
                        "percent": round(100.0 * sum(v) / total, 2)} for op, v in by_type.items()),
                      key=lambda d: -d["mean_ms"])

    from .sizing import interpreter_terms
    minimum, terms = interpreter_terms(it)
    values = dict(terms)
    arena = {"min_arena_bytes": int(minimum), "head_bytes": int(values["head"]),
             "tail_bytes": int(values["tail"]),
             "temporaries_gap_bytes": int(values.get("temporaries gap", 0)),
             "alignment_gap_bytes": int(values.get("alignment gap", 0))}
    runs_ms = runs * 1e3
    return BenchReport(
        model=os.path.basename(model_path), model_bytes=len(model.raw), target=target_name,
        interpreter=interpreter, delegate=delegate, load_ms=round(_ms(load_s), 3), init_ms=round(_ms(init_s), 3),
        allocate_ms=round(_ms(allocate_s), 3),
        delegate_ms=None if delegate_s is None else round(_ms(delegate_s), 3),
        first_invoke_ms=round(_ms(first_s), 3), warmup_runs=int(warmup_runs),
        warmup_mean_ms=round(_ms(float(np.mean(warm))), 3) if warm else None,
        num_runs=int(num_runs),
        invoke_ms={"min": round(float(runs_ms.min()), 3), "mean": round(float(runs_ms.mean()), 3),
                   "median": round(float(np.median(runs_ms)), 3), "max": round(float(runs_ms.max()), 3),
                   "std": round(float(runs_ms.std()), 3)},
        operators=operators, op_types=op_types, arena=arena)


def format_bench(r: BenchReport) -> List[str]:
    """The text report of ``micro-runtime bench`` (benchmark_model's layout)."""
    t = r.invoke_ms
    lines = [
        f"Graph: [{r.model}] ({r.model_bytes} bytes)   target: {r.target}   "
        f"interpreter: {r.interpreter}   delegate: {r.delegate}",
        f"Num runs: [{r.num_runs}]   Warmup runs: [{r.warmup_runs}]",
        f"Loaded model in {r.load_ms:.3f} ms",
        f"Initialized interpreter in {r.init_ms:.3f} ms",
        f"Allocated tensors in {r.allocate_ms:.3f} ms",
    ]
    if r.delegate_ms is not None:
        lines.append(f"Applied the {r.delegate} delegate (re-plans the arena) in {r.delegate_ms:.3f} ms")
    lines.append(f"First inference: {r.first_invoke_ms:.3f} ms")
    if r.warmup_runs:
        lines.append(f"Warmup: count={r.warmup_runs} avg={r.warmup_mean_ms:.3f} ms")
    lines.append(f"Inference timings in ms: count={r.num_runs} min={t['min']:.3f} avg={t['mean']:.3f} "
                 f"median={t['median']:.3f} max={t['max']:.3f} std={t['std']:.3f}")
    from .sizing import format_sum, minimum_terms
    a = r.arena
    terms = minimum_terms(a["min_arena_bytes"], a["head_bytes"], a["tail_bytes"],
                          a["min_arena_bytes"] - a["alignment_gap_bytes"])
    lines.append(f"Arena ({r.target}): " + format_sum("minimum", a["min_arena_bytes"], terms))
    lines += ["", f"Operator-wise profile (mean of {r.num_runs} runs; host time of the emulator):",
              f"{'node':>5}  {'op type':<24}{'avg ms':>10}{'%':>8}{'cdf%':>8}  name"]
    for o in r.operators:
        lines.append(f"{o['node']:>5}  {o['op']:<24}{o['mean_ms']:>10.3f}{o['percent']:>7.2f}%"
                     f"{o['cdf_percent']:>7.2f}%  {o['name']}")
    lines += ["", "Summary by op type:", f"{'op type':<24}{'count':>6}{'avg ms':>10}{'%':>8}"]
    for o in r.op_types:
        lines.append(f"{o['op']:<24}{o['count']:>6}{o['mean_ms']:>10.3f}{o['percent']:>7.2f}%")
    return lines


__all__ = ["run_benchmark", "format_bench", "BenchReport", "BENCH_KEYS", "DELEGATES"]
