"""The ``micro-runtime`` command (also ``python -m micro_runtime``).

Subcommands: ``size``, ``audit``, ``plan``, ``run``, ``optimize``, ``drift``, ``bench``,
``ops`` (see ``--help`` of each). Every one takes ``--target`` (default ``mcu32``) and
``--json``; every output names its target.
Errors are one line on stderr and a non-zero exit status: 1 for a bad model, input or
arena, 2 for bad command-line usage.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

import numpy as np

from .errors import MicroRuntimeError
from .targets import DEFAULT_TARGET, TARGETS

#: ``--json`` keys of ``size`` (stable): see :class:`micro_runtime.sizing.ArenaSize`.
SIZE_KEYS = ("model", "target", "allocator", "min_arena_bytes", "head_bytes", "tail_bytes",
             "temp_peak_bytes", "timeline_peak_bytes", "tflm_reported_total_bytes",
             "plain_min_arena_bytes")


BUNDLED_PREFIX = "bundled:"


def resolve_model_path(path: str) -> str:
    """``bundled:NAME`` names a model shipped with the package (``bundled:person_detect``)."""
    if path.startswith(BUNDLED_PREFIX):
        name = path[len(BUNDLED_PREFIX):]
        name = name if name.endswith(".tflite") else name + ".tflite"
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", name)
    return path


def _load(path: str):
    from .model import load_model
    return load_model(resolve_model_path(path))


def _interpreter(model, target: str, arena_size: Optional[int] = None, recording: bool = True,
                 invoke: bool = True):
    from .api import count_resource_variables
    from .interpreter import MicroInterpreter
    from .sizing import measure_arena
    if arena_size is None:
        arena_size = measure_arena(model, target).min_arena_bytes
    it = MicroInterpreter(model, arena_size=arena_size, target=target, recording=recording,
                          num_resource_variables=count_resource_variables(model),
                          error_reporter=lambda m: None)
    it.allocate_tensors()
    if invoke:
        it.invoke()
    return it


def _emit(args, data: dict, text: List[str]) -> None:
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=False))
    else:
        print("\n".join(text))


# ---------------------------------------------------------------------- size
def cmd_size(args) -> int:
    from .sizing import measure_arena
    model = _load(args.model)
    result = measure_arena(model, args.target, recording=not args.plain)
    data = {"model": os.path.basename(args.model), **result.as_dict()}
    text = [
        f"{data['model']} on target {result.target} ({'RecordingMicroAllocator' if not args.plain else 'MicroAllocator'})",
        f"  minimum arena          {result.min_arena_bytes:>10} bytes",
        f"  head (planned tensors) {result.head_bytes:>10} bytes",
        f"  tail (persistent)      {result.tail_bytes:>10} bytes",
        f"  temporaries peak       {result.temp_peak_bytes:>10} bytes (from the arena start)",
        f"  TFLM's reported total  {result.tflm_reported_total_bytes:>10} bytes"
        + ("  <- under-reports the minimum" if result.tflm_reported_total_bytes < result.min_arena_bytes else ""),
    ]
    if not args.plain:
        text.append(f"  with the default MicroAllocator (no recording): {result.plain_min_arena_bytes} bytes")
    _emit(args, data, text)
    return 0


# --------------------------------------------------------------------- audit
def cmd_audit(args) -> int:
    from recording import CATEGORIES, allocation_report
    model = _load(args.model)
    it = _interpreter(model, args.target, args.arena_size)
    lines = allocation_report(it.allocator)
    stats = it.arena.stats
    cats = []
    for key, name, word in CATEGORIES:
        rec = it.allocator.recorded[key]
        if rec.used_bytes or rec.requested_bytes:
            cats.append({"category": name, "used_bytes": rec.used_bytes,
                         "requested_bytes": rec.requested_bytes, "count": rec.count})
    scratch = {}
    for req in it.allocator.scratch_requests:
        scratch[(req.subgraph_idx, req.node_idx)] = scratch.get((req.subgraph_idx, req.node_idx), 0) + req.bytes
    ops = []
    for sg in it.subgraphs:
        for node in sg.nodes:
            ops.append({"subgraph": node.subgraph_index, "index": node.index, "op": node.name,
                        "options_bytes": node.tail_bytes["builtin_data"],
                        "persistent_bytes": node.tail_bytes["persistent"],
                        "scratch_bytes": scratch.get((node.subgraph_index, node.index), 0)})
    data = {"model": os.path.basename(args.model), "target": it.target.name,
            "arena_bytes": it.arena_size, "tflm_report": lines, "categories": cats,
            "operators": ops, "head_bytes": it.arena.head_bytes,
            "temp_peak_bytes": stats.temp_peak, "tail_bytes": it.arena.persistent_used_bytes}
    text = [f"{data['model']} on target {it.target.name}, arena {it.arena_size} bytes", ""] + lines + [""]
    text.append(f"{'category':<44}{'used':>10}{'requested':>11}{'count':>7}")
    for c in cats:
        text.append(f"{c['category']:<44}{c['used_bytes']:>10}{c['requested_bytes']:>11}{c['count']:>7}")
    text.append("")
    text.append(f"{'#':>4}  {'operator':<32}{'options':>9}{'persistent':>12}{'scratch':>10}")
    for o in ops:
        prefix = f"{o['subgraph']}:" if o["subgraph"] else ""
        text.append(f"{prefix + str(o['index']):>4}  {o['op']:<32}{o['options_bytes']:>9}"
                    f"{o['persistent_bytes']:>12}{o['scratch_bytes']:>10}")
    text.append("")
    text.append(f"head {data['head_bytes']} bytes | temporaries peak {data['temp_peak_bytes']} bytes "
                f"| tail {data['tail_bytes']} bytes")
    _emit(args, data, text)
    return 0


# ---------------------------------------------------------------------- plan
def cmd_plan(args) -> int:
    from .plan_view import ascii_chart, plan_entries, svg_timeline
    model = _load(args.model)
    it = _interpreter(model, args.target, args.arena_size, invoke=False)
    entries = plan_entries(it)
    head = it.arena.head_bytes
    if args.svg:
        title = f"{os.path.basename(args.model)}: memory plan on {it.target.name}"
        with open(args.svg, "w") as f:
            f.write(svg_timeline(entries, title, head))
    data = {"model": os.path.basename(args.model), "target": it.target.name, "head_bytes": head,
            "buffers": entries, "svg": args.svg}
    text = [f"{data['model']} on target {it.target.name}: head {head} bytes, "
            f"{len(entries)} planned buffers"]
    text += ascii_chart(entries, args.width)
    if args.svg:
        text.append(f"SVG written to {args.svg}")
    _emit(args, data, text)
    return 0


# ----------------------------------------------------------------------- run
def cmd_run(args) -> int:
    from .errors import InputError
    model = _load(args.model)
    it = _interpreter(model, args.target, args.arena_size, recording=False, invoke=False)
    if len(args.input) != it.inputs_size:
        raise InputError(f"the model has {it.inputs_size} input(s); got {len(args.input)} --input file(s)")
    for i, path in enumerate(args.input):
        try:
            value = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise InputError(f"cannot read input {i} from {path}: {e}") from None
        it.set_input(value, i)
    it.invoke()
    outputs = [np.array(it.output(i)) for i in range(it.outputs_size)]
    paths = list(args.output or [])
    if paths and len(paths) not in (1, len(outputs)):
        raise InputError(f"the model has {len(outputs)} output(s); give one --output per output")
    if len(paths) == 1 and len(outputs) > 1:
        stem = paths[0][:-4] if paths[0].endswith(".npy") else paths[0]
        paths = [f"{stem}_{k}.npy" for k in range(len(outputs))]
    for path, value in zip(paths, outputs):
        np.save(path, value)
    data = {"model": os.path.basename(args.model), "target": it.target.name,
            "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype), "path": p,
                         "values": o.reshape(-1)[:16].tolist()} for o, p in
                        zip(outputs, paths + [None] * len(outputs))]}
    text = [f"{data['model']} on target {it.target.name}"]
    for k, o in enumerate(outputs):
        text.append(f"output {k}: {o.dtype}{list(o.shape)} {np.array2string(o.reshape(-1)[:16], separator=' ')}"
                    + (" ..." if o.size > 16 else "") + (f" -> {paths[k]}" if k < len(paths) else ""))
    _emit(args, data, text)
    return 0


# ------------------------------------------------------------------ optimize
def cmd_optimize(args) -> int:
    from .optimizer import optimize_model
    model = _load(args.model)
    result = optimize_model(model, args.target, reorder=args.reorder, budget_s=args.budget)
    with open(args.output, "wb") as f:
        f.write(result.model)
    data = {"model": os.path.basename(args.model), "target": args.target, "output": args.output,
            **result.as_dict()}
    text = [f"{data['model']} on target {args.target} -> {args.output}",
            f"  head: TFLM {result.original_head_bytes} bytes -> optimized {result.optimized_head_bytes} "
            f"bytes (lower bound {result.lower_bound_bytes}; saved {result.saved_bytes})",
            f"  minimum arena: {result.original_min_arena_bytes} -> {result.optimized_min_arena_bytes} bytes",
            f"  method: {result.method}{', operators reordered' if result.reordered else ''}; "
            f"{result.seconds:.2f} s"]
    _emit(args, data, text)
    return 0


# --------------------------------------------------------------------- drift
def cmd_drift(args) -> int:
    from .drift import format_drift, measure_drift
    from .errors import InputError
    if args.seeds < 1:
        raise InputError(f"--seeds must be >= 1, not {args.seeds}")
    model = _load(args.model)
    report = measure_drift(model, args.precision, inputs=args.input or None, seeds=args.seeds,
                           target=args.target, clamp=args.clamp)
    data = report.as_dict()
    data["model"] = os.path.basename(resolve_model_path(args.model))
    report.model = data["model"]
    _emit(args, data, format_drift(report))
    return 0


# --------------------------------------------------------------------- bench
# ----------------------------------------------------------------------- ops
def cmd_ops(args) -> int:
    """The operators micro-runtime runs; with a model, each of its operators (count of
    uses) and whether a kernel exists."""
    from .op_resolver import default_op_resolver
    from .schema import op_name
    resolver = default_op_resolver()
    if args.model is None:
        data = {"builtin": resolver.builtin_names, "custom": resolver.custom_names}
        text = [f"{len(data['builtin'])} builtin operators:", "  " + ", ".join(data["builtin"]),
                f"{len(data['custom'])} custom operators:", "  " + ", ".join(data["custom"])]
        _emit(args, data, text)
        return 0
    model = _load(args.model)
    uses: dict = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            name = op_name(op.builtin_code, op.custom_code)
            entry = uses.setdefault(name, {"op": name, "count": 0, "supported":
                                           resolver.find(op.builtin_code, op.custom_code) is not None})
            entry["count"] += 1
    ops = list(uses.values())
    missing = [o["op"] for o in ops if not o["supported"]]
    data = {"model": os.path.basename(args.model), "operators": ops, "missing": missing}
    text = [f"{data['model']}: {sum(o['count'] for o in ops)} operators, {len(ops)} kinds"]
    text += [f"  {o['op']:<40}{o['count']:>5}  {'ok' if o['supported'] else 'NOT SUPPORTED'}"
             for o in ops]
    text.append("all supported" if not missing else f"missing: {', '.join(missing)}")
    _emit(args, data, text)
    return 0 if not missing else 1


def cmd_bench(args) -> int:
    from .bench import format_bench, run_benchmark
    from .model import load_model
    path = resolve_model_path(args.model)
    load_model(path)          # a bad model fails here, before anything is timed
    report = run_benchmark(path, warmup_runs=args.warmup_runs, num_runs=args.num_runs,
                           delegate=args.delegate, target=args.target, seed=args.seed)
    _emit(args, report.as_dict(), format_bench(report))
    return 0


# ---------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="micro-runtime",
        description="TFLM emulator: exact arena size, allocation audit, memory plan, inference.")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p, arena=True):
        p.add_argument("model", help="path of a .tflite model, or bundled:person_detect")
        p.add_argument("--target", default=DEFAULT_TARGET, choices=sorted(TARGETS),
                       help=f"TFLM build whose struct sizes to use (default {DEFAULT_TARGET})")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        if arena:
            p.add_argument("--arena-size", type=int, default=None,
                           help="arena bytes (default: the model's exact minimum)")

    p = sub.add_parser("size", help="the true minimum arena, with head / tail / temporaries")
    common(p, arena=False)
    p.add_argument("--plain", action="store_true",
                   help="size for TFLM's default MicroAllocator instead of the RecordingMicroAllocator "
                        "the tflite-micro package uses")
    p.set_defaults(func=cmd_size)

    p = sub.add_parser("audit", help="TFLM's allocation report plus per-category and per-operator tables")
    common(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("plan", help="the memory plan as an ASCII chart (and --svg picture)")
    common(p)
    p.add_argument("--svg", metavar="FILE", help="write a timeline picture of the plan")
    p.add_argument("--width", type=int, default=80, help="chart width in characters")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="one inference on .npy inputs")
    common(p)
    p.add_argument("--input", action="append", default=[], metavar="X.npy",
                   help="input array (repeat per input, in order)")
    p.add_argument("--output", action="append", metavar="Y.npy", help="where to save outputs")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("optimize", help="write a smaller memory plan into a copy of the model "
                                        "(OfflineMemoryAllocation metadata, used by stock TFLM)")
    common(p, arena=False)
    p.add_argument("-o", "--output", required=True, metavar="OUT.tflite")
    p.add_argument("--reorder", action="store_true",
                   help="also choose an operator order with a lower peak of live memory")
    p.add_argument("--budget", type=float, default=5.0, help="seconds of search (default 5)")
    p.set_defaults(func=cmd_optimize)

    p = sub.add_parser("drift", help="how far outputs move when the model runs on a float "
                                     "accelerator (float delegate vs the integer kernels)")
    common(p, arena=False)
    p.add_argument("--precision", default="fp32", choices=("fp32", "fp16"),
                   help="float32, or float16 storage (default fp32)")
    p.add_argument("--input", action="append", default=[], metavar="X.npy",
                   help="input samples, one file per model input: the input's shape (one sample) "
                        "or (k, *shape) (k samples); default: seeded random inputs")
    p.add_argument("--seeds", type=int, default=8,
                   help="number of seeded random input samples (seeds 0..N-1; default 8)")
    p.add_argument("--clamp", action="store_true",
                   help="diagnostic: clamp every float op's output to the range of its quantized "
                        "tensor, to tell saturation from precision")
    p.set_defaults(func=cmd_drift)

    p = sub.add_parser("bench", help="benchmark in the manner of TFLite's benchmark_model: "
                                     "timings, per-operator profile, arena figures")
    common(p, arena=False)
    p.add_argument("--warmup_runs", "--warmup-runs", dest="warmup_runs", type=int, default=1,
                   help="untimed invokes after the first (default 1)")
    p.add_argument("--num_runs", "--num-runs", dest="num_runs", type=int, default=50,
                   help="timed invokes (default 50)")
    p.add_argument("--delegate", default="none", choices=("none", "float32", "float16"),
                   help="run with the float delegate (default none)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("ops", help="the operators micro-runtime supports, or those a model uses "
                                   "and whether each is supported")
    p.add_argument("model", nargs="?", help="a .tflite model (optional)")
    p.add_argument("--target", default=DEFAULT_TARGET, choices=sorted(TARGETS),
                   help="accepted for uniformity: operator support does not depend on it")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_ops)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except MicroRuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
