"""The ``micro-runtime`` command (also ``python -m micro_runtime``).

Subcommands: ``size``, ``audit``, ``plan``, ``run``, ``eval``, ``info``, ``optimize``,
``drift``, ``bench``, ``ops`` (see ``--help`` of each). Every one takes ``--target`` (a
profile of :mod:`micro_runtime.targets` or a core alias; default ``cortex-m4+cmsis-nn``),
``--interpreter recording|micro`` (the TFLM interpreter class
whose arena is meant: RecordingMicroInterpreter, the default, as the tflite-micro package
and TFLM's tests use; MicroInterpreter, as firmware links) and ``--json``; every output
names its target.

Errors are one line on stderr. Exit status 1 for a bad model, input, option value (an
unknown ``--target``, ``--budget -1`` ...) or a too-small arena; 2 for a command line
that cannot be parsed (unknown option, missing argument).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import List, Optional

import numpy as np

from ..errors import InputError, MicroRuntimeError
from ..targets import DEFAULT_TARGET, TARGET_ALIASES, get_target, targets_help
from .sizing import INTERPRETERS, SIZE_KEYS

BUNDLED_PREFIX = "bundled:"
#: the class name each ``--interpreter`` value stands for
CLASS_NAMES = {"recording": "RecordingMicroInterpreter", "micro": "MicroInterpreter"}


def bundled_dir() -> str:
    """Where the models shipped with the package live."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def bundled_names() -> List[str]:
    """Names usable as ``bundled:NAME``."""
    return sorted(f[:-len(".tflite")] for f in os.listdir(bundled_dir()) if f.endswith(".tflite"))


def resolve_model_path(path: str) -> str:
    """``bundled:NAME`` names a model shipped with the package (``bundled:person_detect``);
    an unknown name is an InputError listing the bundled names."""
    if path.startswith(BUNDLED_PREFIX):
        name = path[len(BUNDLED_PREFIX):]
        name = name[:-len(".tflite")] if name.endswith(".tflite") else name
        names = bundled_names()
        if name not in names:
            raise InputError(f"no bundled model {name!r}; bundled models: "
                             + ", ".join(f"bundled:{n}" for n in names))
        return os.path.join(bundled_dir(), name + ".tflite")
    return path


def _load(path: str):
    from ..model import load_model
    return load_model(resolve_model_path(path))


def _model_name(path: str) -> str:
    return os.path.basename(resolve_model_path(path))


def _make_interpreter(model, args, arena_size: Optional[int] = None, invoke: bool = True):
    """The ``--interpreter`` class over ``model`` with ``arena_size`` bytes (default: the
    exact minimum for that class), allocated, and invoked once when ``invoke`` (the
    seed's pattern: Invoke() allocates, then the figures are complete)."""
    from recording import RecordingMicroInterpreter
    from ..api import count_resource_variables
    from ..interpreter import MicroInterpreter
    from .sizing import measure_arena
    recording = args.interpreter == "recording"
    if arena_size is None:
        arena_size = measure_arena(model, args.target, recording=recording).min_arena_bytes
    cls = RecordingMicroInterpreter if recording else MicroInterpreter
    # figures come from an allocation and one invoke: co-processor operators (ethos-u)
    # invoke as the stub the figures were measured with; a run invokes them for real
    it = cls(model, arena_size=arena_size, target=args.target,
             num_resource_variables=count_resource_variables(model), error_reporter=lambda m: None,
             npu_stub=invoke)
    if invoke:
        it.invoke()
    else:
        it.allocate_tensors()
    return it


def _emit(args, data, text: List[str]) -> None:
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=False))
    else:
        print("\n".join(text))


def _progress(args, label: str):
    """A progress bar on stderr when it is a terminal and the output is not JSON."""
    from .progress import Progress
    return Progress(0, label, enabled=None if not getattr(args, "json", False) else False)


# ---------------------------------------------------------------------- size
def _size_text(record: dict) -> List[str]:
    """The text report of one model's ``size`` record."""
    ours = record["interpreter"]
    other = "micro" if ours == "recording" else "recording"
    allocator = "RecordingMicroAllocator" if ours == "recording" else "default MicroAllocator"
    total = record["tflm_reported_total_bytes"]
    temporaries, alignment = record["temporaries_gap_bytes"], record["alignment_gap_bytes"]
    if temporaries > 0:
        note = (f"  <- under-reports the minimum by {temporaries + alignment}: {temporaries} bytes "
                "of temporaries freed before TFLM prints its total"
                + (f", {alignment} of 16-byte alignment" if alignment else ""))
    elif alignment > 0:
        note = (f"  (+{alignment} bytes of 16-byte alignment where head and tail meet = the "
                "minimum; not an under-report)")
    else:
        note = ""
    npu = record.get("npu_scratch_bytes")
    vela = [] if npu is None else [
        f"    of which Vela's plan {npu:>10} bytes (the ethos-u operators' scratch tensors, with "
        f"the tensors Vela placed in them); TFLM's own: {record['arena_bytes'] - npu} bytes"]
    return [
        f"{record['model']} on target {record['target']}, {CLASS_NAMES[ours]} ({allocator})",
        f"  minimum arena          {record['arena_bytes']:>10} bytes",
        *vela,
        f"  head (planned tensors) {record['head_bytes']:>10} bytes",
        f"  tail (persistent)      {record['tail_bytes']:>10} bytes",
        f"  temporaries peak       {record['temp_peak_bytes']:>10} bytes (from the arena start)",
        f"  TFLM's reported total  {total:>10} bytes{note}",
        f"  {CLASS_NAMES[other]} (--interpreter {other}): "
        f"{record['min_arena_bytes' if other == 'recording' else 'plain_min_arena_bytes']} bytes",
    ]


def _write_csv(rows: List[dict]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    columns = ("path",) + SIZE_KEYS + ("error",)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])


def cmd_size(args) -> int:
    from .sizing import c_snippet, measure_arena, model_files, size_many, size_record
    interpreter = "micro" if args.plain else args.interpreter
    formats = [name for name, on in (("--json", args.json), ("--csv", args.csv), ("--c", args.c)) if on]
    if len(formats) > 1:
        raise InputError(f"{' and '.join(formats)}: choose one output format")
    if args.jobs < 1:
        raise InputError(f"--jobs must be at least 1, not {args.jobs}")
    paths = [resolve_model_path(p) for p in args.models]
    if len(paths) == 1 and not os.path.isdir(paths[0]):
        from ..model import load_model
        result = measure_arena(load_model(paths[0]), args.target, recording=interpreter == "recording",
                               alt_decompression_memory_size=args.alt_decompression_memory)
        name = os.path.basename(paths[0])
        if args.c:
            print(c_snippet(name, result))
            return 0
        record = size_record(name, result)
        if args.csv:
            _write_csv([{**record, "path": paths[0], "error": None}])
            return 0
        _emit(args, record, _size_text(record))
        return 0

    if args.c:
        raise InputError("--c takes one model (the snippet declares one kTensorArenaSize)")
    if args.alt_decompression_memory:
        raise InputError("--alt-decompression-memory takes one model")
    files = model_files(paths)
    if not files:
        raise InputError(f"no .tflite files in {', '.join(args.models)}")
    with _progress(args, "size") as bar:
        bar.update(0, len(files))
        rows = size_many(files, args.target, interpreter, args.jobs,
                         on_done=lambda row: bar.advance(note=row["model"]))
    errors = [r for r in rows if r["error"]]
    if args.csv:
        _write_csv(rows)
    elif args.json:
        print(json.dumps(rows, indent=2))
    else:
        width = max(len(r["path"]) for r in rows)
        text = [f"{len(rows)} models on target {get_target(args.target).name}; minimum arena in bytes "
                f"for RecordingMicroInterpreter (\"recording\") and MicroInterpreter (\"micro\")",
                f"{'model':<{width}}  {'recording':>10}  {'micro':>10}  {'head':>10}  {'tail':>10}"]
        for r in rows:
            if r["error"]:
                text.append(f"{r['path']:<{width}}  error: {r['error']}")
            else:
                text.append(f"{r['path']:<{width}}  {r['min_arena_bytes']:>10}  {r['plain_min_arena_bytes']:>10}"
                            f"  {r['head_bytes']:>10}  {r['tail_bytes']:>10}")
        text.append(f"{len(errors)} of {len(rows)} models failed" if errors else f"all {len(rows)} models sized")
        print("\n".join(text))
    return 1 if errors else 0


# --------------------------------------------------------------------- audit
def cmd_audit(args) -> int:
    from recording import CATEGORIES, allocation_report
    model = _load(args.model)
    it = _make_interpreter(model, args, args.arena_size)
    recording = args.interpreter == "recording"
    lines = allocation_report(it.allocator) if recording else []
    stats = it.arena.stats
    cats = []
    if recording:
        for kind in (c[3] for c in CATEGORIES):
            rec = it.get_recorded_allocation(kind)
            if rec.used_bytes or rec.requested_bytes:
                name = next(c[1] for c in CATEGORIES if c[3] == kind)
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
    data = {"model": _model_name(args.model), "target": it.target.name, "interpreter": args.interpreter,
            "arena_bytes": it.arena_size, "tflm_report": lines, "categories": cats,
            "operators": ops, "head_bytes": it.arena.head_bytes,
            "temp_peak_bytes": stats.temp_peak, "tail_bytes": it.arena.persistent_used_bytes}
    text = [f"{data['model']} on target {it.target.name}, {CLASS_NAMES[args.interpreter]}, "
            f"arena {it.arena_size} bytes", ""]
    if recording:
        text += lines + ["", f"{'category':<44}{'used':>10}{'requested':>11}{'count':>7}"]
        for c in cats:
            text.append(f"{c['category']:<44}{c['used_bytes']:>10}{c['requested_bytes']:>11}{c['count']:>7}")
    else:
        text.append("(MicroInterpreter records no allocation categories; TFLM prints its report from "
                    "RecordingMicroInterpreter: --interpreter recording)")
    text.append("")
    text.append(f"{'#':>4}  {'operator':<32}{'options':>9}{'persistent':>12}{'scratch':>10}")
    for o in ops:
        prefix = f"{o['subgraph']}:" if o["subgraph"] else ""
        text.append(f"{prefix + str(o['index']):>4}  {o['op']:<32}{o['options_bytes']:>9}"
                    f"{o['persistent_bytes']:>12}{o['scratch_bytes']:>10}")
    text.append("")
    text.append(f"head {data['head_bytes']} bytes | temporaries peak {data['temp_peak_bytes']} bytes "
                f"| tail {data['tail_bytes']} bytes")
    data["npu_scratch_bytes"] = _vela_line(model, data["head_bytes"], text)
    _emit(args, data, text)
    return 0


def _vela_line(model, head: int, text: List[str]) -> Optional[int]:
    """For a Vela-compiled model: append how much of the head Vela planned; its bytes."""
    from .sizing import npu_scratch_bytes
    npu = npu_scratch_bytes(model)
    if npu is not None:
        text.append(f"of the head, {npu} bytes are Vela's plan (the ethos-u operators' scratch "
                    f"tensors, with the tensors Vela placed in them) and {head - npu} TFLM's own")
    return npu


# ---------------------------------------------------------------------- plan
def cmd_plan(args) -> int:
    from .plan_view import ascii_chart, plan_entries, svg_timeline
    if args.width < 10:
        raise InputError(f"--width must be at least 10 characters, not {args.width}")
    svg_path = None
    if args.svg:
        svg_path = os.path.abspath(args.svg)
        if os.path.isdir(svg_path):
            raise InputError(f"--svg {args.svg} is a directory; give a file name such as "
                             f"{os.path.join(args.svg, 'plan.svg')}")
    model = _load(args.model)
    it = _make_interpreter(model, args, args.arena_size, invoke=False)
    entries = plan_entries(it)
    head = it.arena.head_bytes
    name = _model_name(args.model)
    if svg_path:
        title = f"{name}: memory plan on {it.target.name}"
        with open(svg_path, "w") as f:
            f.write(svg_timeline(entries, title, head))
    data = {"model": name, "target": it.target.name, "interpreter": args.interpreter,
            "head_bytes": head, "buffers": entries, "svg": args.svg}
    text = [f"{name} on target {it.target.name}: head {head} bytes, {len(entries)} planned buffers"]
    data["npu_scratch_bytes"] = _vela_line(model, head, text)
    text += ascii_chart(entries, args.width)
    if args.svg:
        text.append(f"SVG written to {args.svg}")
    _emit(args, data, text)
    return 0


# ----------------------------------------------------------------------- run
def _output_paths(given: List[str], count: int) -> List[str]:
    """Where ``run`` writes each output: numpy's rule (``.npy`` appended when missing),
    ``STEM_k.npy`` when one path is given for several outputs; a directory is refused."""
    if given and len(given) not in (1, count):
        raise InputError(f"the model has {count} output(s); give one --output, or one per output")
    for p in given:
        if os.path.isdir(p) or p.endswith(("/", os.sep)):
            raise InputError(f"--output {p} is a directory; give a file name such as "
                             f"{os.path.join(p, 'y.npy')}")
    if len(given) == 1 and count > 1:
        stem = given[0][:-4] if given[0].endswith(".npy") else given[0]
        paths = [f"{stem}_{k}.npy" for k in range(count)]
    else:
        paths = [p if p.endswith(".npy") else p + ".npy" for p in given]
    for p in paths:
        parent = os.path.dirname(os.path.abspath(p))
        if not os.path.isdir(parent):
            raise InputError(f"cannot write {p}: directory {parent} does not exist")
        if os.path.isdir(p):
            raise InputError(f"cannot write {p}: it is a directory")
    return paths


def cmd_run(args) -> int:
    from .arrays import dequantize_output, load_npy, quantize_input
    model = _load(args.model)
    main = model.main
    if len(args.input) != len(main.inputs):
        raise InputError(f"the model has {len(main.inputs)} input(s); got {len(args.input)} --input file(s)")
    paths = _output_paths(list(args.output or []), len(main.outputs))
    it = _make_interpreter(model, args, args.arena_size, invoke=False)
    for i, path in enumerate(args.input):
        value = load_npy(path, f"input {i}")
        if args.quantize:
            value = quantize_input(value, main.tensors[main.inputs[i]], f"input {i}")
        it.set_input(value, i)
    it.invoke()
    outputs = [np.array(it.output(i)) for i in range(it.outputs_size)]
    if args.dequantize:
        outputs = [dequantize_output(o, main.tensors[t]) for o, t in zip(outputs, main.outputs)]
    for path, value in zip(paths, outputs):
        np.save(path, value)
    data = {"model": _model_name(args.model), "target": it.target.name, "interpreter": args.interpreter,
            "arena_bytes": it.arena_size,
            "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype), "path": p,
                         "dequantized": bool(args.dequantize and o.dtype != it.output(k).dtype),
                         "values": o.reshape(-1)[:16].tolist()}
                        for k, (o, p) in enumerate(zip(outputs, paths + [None] * len(outputs)))]}
    text = [f"{data['model']} on target {it.target.name}, {CLASS_NAMES[args.interpreter]}, "
            f"arena {it.arena_size} bytes"]
    for k, o in enumerate(outputs):
        text.append(f"output {k}: {o.dtype}{list(o.shape)} {np.array2string(o.reshape(-1)[:16], separator=' ')}"
                    + (" ..." if o.size > 16 else "") + (f" -> {paths[k]}" if k < len(paths) else ""))
    _emit(args, data, text)
    return 0


# ---------------------------------------------------------------------- info
# ---------------------------------------------------------------------- eval
def cmd_eval(args) -> int:
    from .evaluation import format_summary, run_evaluation
    if not args.inputs:
        raise InputError("give the samples with --inputs X.npy (one file per model input)")
    if args.batch is not None and args.batch < 1:
        raise InputError(f"--batch must be a positive number of samples, not {args.batch}")
    if args.jobs < 0:
        raise InputError(f"--jobs must be a number of processes (0: every processor), not {args.jobs}")
    model = _load(args.model)
    with _progress(args, "eval") as bar:
        result = run_evaluation(model, args.inputs, target=args.target, batch=args.batch,
                                stream=args.stream, labels_path=args.labels,
                                output_index=args.output_index, progress=bar.update,
                                jobs=args.jobs)
    arrays = result.pop("arrays")
    paths = list(args.output or [])
    if paths and len(paths) not in (1, len(arrays)):
        raise InputError(f"the model has {len(arrays)} output(s); give one --output per output")
    if len(paths) == 1 and len(arrays) > 1:
        stem = paths[0][:-4] if paths[0].endswith(".npy") else paths[0]
        paths = [f"{stem}_{k}.npy" for k in range(len(arrays))]
    for path, value, entry in zip(paths, arrays, result["outputs"]):
        np.save(path, value)
        entry["path"] = path
    data = {"model": os.path.basename(args.model), "target": args.target, **result}
    per_sample = [o for o in result["operators"] if o["mode"] == "per-sample"]
    text = [f"{data['model']} on target {args.target}: {result['samples']} samples in "
            f"{result['seconds']:.2f} s ({result['samples_per_s'] or 0:,.0f} samples/s), "
            f"batch {result['batch']}" + (f", {result['jobs']} processes" if result["jobs"] > 1 else "")
            + (", one stream" if args.stream else "")]
    if result["whole_model_per_sample"]:
        text.append(f"  every sample runs alone: {result['whole_model_per_sample']}")
    else:
        text.append(f"  operators: {len(result['operators']) - len(per_sample)} of "
                    f"{len(result['operators'])} on sample blocks"
                    + (", per sample: " + ", ".join(f"#{o['index']} {o['op']}" for o in per_sample)
                       if per_sample else ""))
    for entry in result["outputs"]:
        text.append(f"output {entry['index']}: {entry['dtype']}{entry['shape']}"
                    + (f" -> {entry['path']}" if "path" in entry else ""))
    if result["labels"] is not None:
        text.extend(format_summary(result["labels"], result["labels"]["output_index"]))
    _emit(args, data, text)
    return 0


def cmd_info(args) -> int:
    from .info import format_info, model_info
    from .sizing import measure_arena
    model = _load(args.model)
    arena, arena_error = None, None
    try:
        size = measure_arena(model, args.target, recording=args.interpreter == "recording")
        arena = {"target": size.target, "min_arena_bytes": size.recording_min_arena_bytes,
                 "plain_min_arena_bytes": size.plain_min_arena_bytes}
    except MicroRuntimeError as e:
        arena_error = str(e)
    info = model_info(model, arena, arena_error)
    info["model"] = _model_name(args.model)
    _emit(args, info, format_info(info))
    return 0


# ------------------------------------------------------------------ optimize
def cmd_optimize(args) -> int:
    if args.patches is not None or args.stage_end is not None:
        return _optimize_patches(args)
    from .optimizer import optimize_model
    if not args.budget > 0:
        raise InputError(f"--budget must be a positive number of seconds, not {args.budget}")
    if os.path.isdir(args.output):
        raise InputError(f"-o {args.output} is a directory; give a file name such as "
                         f"{os.path.join(args.output, 'optimized.tflite')}")
    model = _load(args.model)
    result = optimize_model(model, args.target, reorder=args.reorder, budget_s=args.budget,
                            recording=args.interpreter == "recording")
    with open(args.output, "wb") as f:
        f.write(result.model)
    data = {"model": _model_name(args.model), "target": args.target, "interpreter": args.interpreter,
            "output": args.output, **result.as_dict()}
    text = [f"{data['model']} on target {args.target} -> {args.output}",
            f"  head: TFLM {result.original_head_bytes} bytes -> optimized {result.optimized_head_bytes} "
            f"bytes (lower bound {result.lower_bound_bytes}; saved {result.saved_bytes})",
            f"  minimum arena ({CLASS_NAMES[args.interpreter]}): {result.original_min_arena_bytes} -> "
            f"{result.optimized_min_arena_bytes} bytes",
            f"  method: {result.method}{', operators reordered' if result.reordered else ''}; "
            f"{result.seconds:.2f} s"]
    _emit(args, data, text)
    return 0


def _optimize_patches(args) -> int:
    from .patches import optimize_with_patches
    if args.reorder:
        raise InputError("--reorder and --patches cannot be combined")
    model = _load(args.model)
    if not args.budget > 0 or not args.time_limit > 0:
        raise InputError("--budget and --time-limit must be positive numbers of seconds")
    if args.refine_moves < 0:
        raise InputError(f"--refine-moves must be >= 0, not {args.refine_moves}")
    if args.max_stages < 1:
        raise InputError(f"--max-stages must be at least 1, not {args.max_stages}")
    if os.path.isdir(args.output):
        raise InputError(f"-o {args.output} is a directory; give a file name such as "
                         f"{os.path.join(args.output, 'optimized.tflite')}")
    result = optimize_with_patches(model, args.target, grid=args.patches or "auto",
                                   stage_end=args.stage_end, budget_s=args.budget,
                                   max_stages=args.max_stages, refine_moves=args.refine_moves,
                                   time_limit_s=args.time_limit,
                                   recording=args.interpreter == "recording")
    with open(args.output, "wb") as f:
        f.write(result.model)
    name = _model_name(args.model)
    data = {"model": name, "interpreter": args.interpreter, "output": args.output, **result.as_dict()}
    pct = 100.0 * result.saved_bytes / result.original_min_arena_bytes if result.original_min_arena_bytes else 0.0
    text = [f"{name} on target {result.target} -> {args.output}",
            f"  minimum arena ({CLASS_NAMES[args.interpreter]}): TFLM {result.original_min_arena_bytes} -> offline plan "
            f"{result.offline_plan_min_arena_bytes} -> patches {result.min_arena_bytes} bytes "
            f"(saved {result.saved_bytes}, {-pct:+.1f} %)",
            f"  head {result.head_bytes} + tail {result.tail_bytes} bytes"]
    if not result.programs:
        text.append("  no patch rewrite lowers the minimum arena; written with the offline plan only"
                    + (f" (best rewrite found: {result.best_rejected})" if result.best_rejected else ""))
    for k, p in enumerate(result.programs, start=1):
        d = data["stages"][k - 1]
        text.append(f"  stage {k}: {p.describe()}")
        text.append(f"           input '{d['input']}', exit '{d['exit']}'; +{d['new_operators']} operators "
                    f"({d['pads']} PAD, {d['slices']} SLICE); extra MACs {p.extra_macs} "
                    f"(+{100.0 * p.extra_macs / max(p.stage_macs, 1):.1f} % of the stage's)")
    if result.programs:
        text.append(f"  MACs {result.original_macs} -> {result.macs} "
                    f"(+{100.0 * result.extra_macs / max(result.original_macs, 1):.1f} %); operators "
                    f"{result.original_operators} -> {result.operators}")
        text.append(f"  invoke in the emulator: {result.original_invoke_s * 1e3:.2f} -> "
                    f"{result.invoke_s * 1e3:.2f} ms (median of 5); outputs bit-identical on "
                    f"{result.verified_inputs} seeded inputs")
    text.append(f"  searched {result.estimated} rewrites in {result.seconds:.1f} s")
    _emit(args, data, text)
    return 0


# --------------------------------------------------------------------- drift
def cmd_drift(args) -> int:
    from .drift import format_drift, measure_drift
    if args.seeds < 1:
        raise InputError(f"--seeds must be >= 1, not {args.seeds}")
    model = _load(args.model)
    with _progress(args, "drift") as bar:
        report = measure_drift(model, args.precision, inputs=args.input or None, seeds=args.seeds,
                               target=args.target, clamp=args.clamp, interpreter=args.interpreter,
                               on_progress=bar.update)
    data = report.as_dict()
    data["model"] = _model_name(args.model)
    report.model = data["model"]
    _emit(args, data, format_drift(report))
    return 0


# --------------------------------------------------------------------- bench
def cmd_bench(args) -> int:
    from .bench import format_bench, run_benchmark
    from ..model import load_model
    path = resolve_model_path(args.model)
    load_model(path)          # a bad model fails here, before anything is timed
    with _progress(args, "bench") as bar:
        report = run_benchmark(path, warmup_runs=args.warmup_runs, num_runs=args.num_runs,
                               delegate=args.delegate, target=args.target, seed=args.seed,
                               interpreter=args.interpreter, on_progress=bar.update)
    _emit(args, report.as_dict(), format_bench(report))
    return 0


# ----------------------------------------------------------------------- ops
def describe_types(kernel) -> str:
    """A kernel's ``supported_types`` as one line: ``float32, int8, int16``; an op whose
    output type varies lists ``inputs -> outputs`` groups between semicolons
    (``float32, int32 -> int8, int16; uint8 -> int8``); ``*`` is spelled ``any``."""
    combos = kernel.type_combos() if hasattr(kernel, "type_combos") else ()
    if not combos:
        return "(no typed tensors)"
    if all(c.output is None for c in combos):
        return ", ".join(str(c) for c in combos).replace("*", "any")
    outputs: dict = {}            # source (input and weights) -> its output types, in order
    for c in combos:
        outputs.setdefault(c.key.split("->")[0], []).append(
            c.output + (f" ({c.note})" if c.note else ""))
    groups, merged = [], set()
    for source, outs in outputs.items():
        if source not in merged:
            sources = [k for k, v in outputs.items() if v == outs]
            merged.update(sources)
            groups.append(f"{', '.join(sources)} -> {', '.join(outs)}")
    return "; ".join(groups).replace("*", "any")


def _op_kernels(resolver) -> List[tuple]:
    """(name, kernel, custom) of every operator the resolver runs: builtin ones first."""
    from ..schema import BUILTIN_OP_CODES
    return ([(n, resolver.find(BUILTIN_OP_CODES[n]), False) for n in resolver.builtin_names]
            + [(n, resolver.find(BUILTIN_OP_CODES["CUSTOM"], n), True) for n in resolver.custom_names])


def operator_types(kernel, graph, op):
    """(the combination of tensor types ``op`` of ``graph`` uses (a TypeCombo, or None
    for an op without typed tensors), whether ``kernel`` runs it)."""
    from kernels.base import Kernel
    from ..schema import tensor_type_name

    def name(i):
        return None if i < 0 else tensor_type_name(graph.tensors[i].type).lower()
    cls = kernel if kernel is not None and hasattr(kernel, "types_used") else Kernel
    used = cls.types_used([name(i) for i in op.inputs], [name(i) for i in op.outputs])
    if kernel is None:
        return used, False
    if not getattr(kernel, "supported_types", ()):
        return used, True           # no declaration: nothing to check
    return used, used is not None and kernel.supports_types(used)


def cmd_ops(args) -> int:
    """The operators micro-runtime runs on ``--target``, each with the tensor types it
    supports and the kernel library it comes from (``reference``, or ``cmsis-nn`` where a
    CMSIS-NN build replaces TFLM's reference kernel); with a model, each of its operators
    (count of uses), the types it uses, which kernel runs it and whether it runs them."""
    from ..op_resolver import default_op_resolver
    from ..schema import op_name
    target = get_target(args.target)
    resolver = default_op_resolver(target)
    if args.model is None:
        kernels = _op_kernels(resolver)
        data = {"target": target.name, "kernel_library": target.kernel_library,
                "builtin": resolver.builtin_names, "custom": resolver.custom_names,
                "operators": [{"op": n, "custom": custom, "types": list(k.supported_types),
                               "library": k.library} for n, k, custom in kernels]}
        width = max(len(n) for n, _, _ in kernels) + 2

        def line(n, k):
            mark = f"  [{k.library} kernel]" if k.library != "reference" else ""
            return f"  {n:<{width}}{describe_types(k)}{mark}"
        variants = [n for n, k, _ in kernels if k.library != "reference"]
        text = [f"on target {target.name}: " + (
            f"{len(variants)} operators run {target.kernel_library} kernels ({', '.join(variants)}), "
            "the others TFLM's reference kernels" if variants else "TFLM's reference kernels")]
        text.append(f"{len(data['builtin'])} builtin operators:")
        text += [line(n, k) for n, k, custom in kernels if not custom]
        text.append(f"{len(data['custom'])} custom operators:")
        text += [line(n, k) for n, k, custom in kernels if custom]
        _emit(args, data, text)
        return 0
    model = _load(args.model)
    uses: dict = {}               # (op, types) -> its entry
    kernels: dict = {}            # op -> kernel (None: no kernel)
    for sg in model.subgraphs:
        for op in sg.operators:
            name = op_name(op.builtin_code, op.custom_code)
            kernel = kernels.setdefault(name, resolver.find(op.builtin_code, op.custom_code))
            used, types_ok = operator_types(kernel, sg, op)
            key = (name, used.key if used is not None else "")
            entry = uses.setdefault(key, {"op": name, "types": key[1], "count": 0,
                                          "supported": kernel is not None and types_ok,
                                          "kernel": kernel is not None,
                                          "library": None if kernel is None else kernel.library})
            entry["count"] += 1
    ops = list(uses.values())
    missing = [n for n, k in kernels.items() if k is None]
    unsupported = [f"{o['op']} {o['types']}" for o in ops if o["kernel"] and not o["supported"]]
    data = {"model": _model_name(args.model), "target": target.name, "operators": ops,
            "missing": missing, "unsupported_types": unsupported}
    text = [f"{data['model']} on target {target.name}: {sum(o['count'] for o in ops)} operators, "
            f"{len(kernels)} kinds"]
    for o in ops:
        status = ("ok" if o["supported"] else "NOT SUPPORTED: no kernel" if not o["kernel"] else
                  f"NOT SUPPORTED: {o['op']} runs {describe_types(kernels[o['op']])}")
        text.append(f"  {o['op']:<36}{o['types'] or '-':<18}{o['count']:>5}  "
                    f"{o['library'] or '-':<10} {status}")
    problems = missing + unsupported
    text.append("all supported" if not problems else
                "; ".join(filter(None, [missing and f"missing: {', '.join(missing)}",
                                        unsupported and f"types not supported: {', '.join(unsupported)}"])))
    _emit(args, data, text)
    return 0 if not problems else 1


# ---------------------------------------------------------------------- main
class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (status 2) instead of the usage text."""

    def error(self, message):
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _add_common(p, arena: bool = True, model: Optional[str] = "one") -> None:
    """--target, --interpreter, --json (and the model, --arena-size) for a subcommand."""
    if model == "one":
        p.add_argument("model", help="path of a .tflite model, or bundled:NAME (bundled:person_detect)")
    p.add_argument("--target", default=DEFAULT_TARGET, metavar="T", help=TARGET_HELP)
    p.add_argument("--interpreter", default="recording", metavar="{recording,micro}",
                   help="recording: TFLM's RecordingMicroInterpreter (RecordingMicroAllocator; what the "
                        "tflite-micro package and TFLM's tests use; default); micro: MicroInterpreter "
                        "with the default MicroAllocator (what firmware links, a little smaller)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    if arena:
        p.add_argument("--arena-size", type=int, default=None,
                       help="arena bytes (default: the model's exact minimum for --interpreter)")


#: ``--target`` help of every subcommand: the names, what they model, the aliases
TARGET_HELP = (
    f"the TFLM build to emulate (struct sizes, kernel library; default {DEFAULT_TARGET}): "
    "host64 (the tflite-micro PyPI package), mcu32 (a generic 32-bit build with 4-byte enums "
    "and compression on, not a Cortex-M firmware), cortex-m0, cortex-m3, cortex-m4, cortex-m7, "
    "cortex-m33, cortex-m55 (TFLM's Makefile build for that core, reference kernels), each also "
    "+cmsis-nn (CMSIS-NN kernels: no DSP on m0/m3, DSP on m4/m7/m33, MVE on m55). Other cores: "
    + ", ".join(f"{a} = {c}" for a, c in TARGET_ALIASES.items())
    + " (see micro-runtime --help)")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    parser = _Parser(
        prog="micro-runtime",
        description="TFLM emulator: exact arena size, allocation audit, memory plan, inference.",
        epilog="targets (--target, default " + DEFAULT_TARGET + "):\n"
               + "\n".join("  " + line for line in targets_help().splitlines()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"micro-runtime {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("size", help="the true minimum arena, with head / tail / temporaries; "
                                    "many models at once (a directory, or several paths)")
    p.add_argument("models", nargs="+", metavar="MODEL_OR_DIR",
                   help=".tflite files, bundled:NAME, or directories searched for *.tflite")
    _add_common(p, arena=False, model=None)
    p.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)  # = --interpreter micro
    p.add_argument("--c", action="store_true",
                   help="print a C/C++ snippet: kTensorArenaSize and an alignas(16) arena (one model)")
    p.add_argument("--csv", action="store_true", help="print CSV rows (one per model)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for many models (default 1)")
    p.add_argument("--alt-decompression-memory", type=int, default=0, metavar="BYTES",
                   help="memory outside the arena for decompressed tensors (TFLM's "
                        "SetDecompressionMemory): DECODE outputs that fit go there")
    p.set_defaults(func=cmd_size)

    p = sub.add_parser("audit", help="TFLM's allocation report plus per-category and per-operator tables")
    _add_common(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("plan", help="the memory plan as an ASCII chart (and --svg picture)")
    _add_common(p)
    p.add_argument("--svg", metavar="FILE", help="write a timeline picture of the plan")
    p.add_argument("--width", type=int, default=80, help="chart width in characters (>= 10)")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="one inference on .npy inputs")
    _add_common(p)
    p.add_argument("--input", action="append", default=[], metavar="X.npy",
                   help="input array (repeat per input, in order)")
    p.add_argument("--output", action="append", metavar="Y.npy",
                   help="where to save outputs (.npy is appended when missing, as numpy does)")
    p.add_argument("--quantize", action="store_true",
                   help="the inputs are real values: quantize each with its input tensor's scale and "
                        "zero point (TFLM's QUANTIZE arithmetic)")
    p.add_argument("--dequantize", action="store_true",
                   help="write and print quantized outputs as real values (scale x (q - zero point))")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("eval", help="a data set through the model, bit-exact as per-sample "
                                    "invokes, many samples per pass; accuracy with --labels")
    _add_common(p, arena=False)
    p.add_argument("--inputs", action="append", default=[], metavar="X.npy",
                   help="samples of one model input, first axis = samples (repeat per input)")
    p.add_argument("--labels", metavar="Y.npy",
                   help="class ids (samples,) or one-hot rows: top-1 accuracy and confusion")
    p.add_argument("--output-index", type=int, default=0,
                   help="the output scored against the labels (default 0)")
    p.add_argument("--batch", type=int, default=None,
                   help="samples per pass (default: automatic, up to 1024)")
    p.add_argument("--stream", action="store_true",
                   help="the samples are one sequence: state carries from each to the next "
                        "(default: each sample starts from the reset state)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="worker processes, each running a share of the samples (0: one per "
                        "processor; default 1); the outputs do not depend on it")
    p.add_argument("--output", action="append", metavar="Y.npy",
                   help="save the outputs (first axis = samples)")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("info", help="inputs, outputs, flash and weight bytes, MACs per operator, "
                                    "op list and arena of a model")
    _add_common(p, arena=False)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("optimize", help="write a smaller memory plan into a copy of the model "
                                        "(OfflineMemoryAllocation metadata, used by stock TFLM)")
    _add_common(p, arena=False)
    p.add_argument("-o", "--output", required=True, metavar="OUT.tflite")
    p.add_argument("--reorder", action="store_true",
                   help="also choose an operator order with a lower peak of live memory")
    p.add_argument("--budget", type=float, default=5.0,
                   help="seconds of offline-plan search (> 0, default 5)")
    p.add_argument("--patches", nargs="?", const="auto", default=None, metavar="auto|RxC",
                   help="rewrite the high-resolution stage to run in spatial patches (exact in stock "
                        "TFLM): 'auto' (default) searches stages, grids and cuts; RxC fixes the grid")
    p.add_argument("--stage-end", type=int, default=None, metavar="OP",
                   help="with --patches: index of the last operator of the stage")
    p.add_argument("--max-stages", type=int, default=3,
                   help="with --patches auto: how many disjoint stages may be rewritten (default 3)")
    p.add_argument("--refine-moves", type=int, default=1000,
                   help="with --patches: estimates spent refining the best rewrites (default 1000)")
    p.add_argument("--time-limit", type=float, default=300.0,
                   help="with --patches: seconds after which the search stops early (default 300)")
    p.set_defaults(func=cmd_optimize)

    p = sub.add_parser("drift", help="how far outputs move when the model runs on a float "
                                     "accelerator (float delegate vs the integer kernels)")
    _add_common(p, arena=False)
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
    _add_common(p, arena=False)
    p.add_argument("--warmup_runs", "--warmup-runs", dest="warmup_runs", type=int, default=1,
                   help="untimed invokes after the first (default 1)")
    p.add_argument("--num_runs", "--num-runs", dest="num_runs", type=int, default=50,
                   help="timed invokes (default 50)")
    p.add_argument("--delegate", default="none", choices=("none", "float32", "float16"),
                   help="run with the float delegate (default none)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("ops", help="the operators micro-runtime supports and the tensor types "
                                   "of each, or those a model uses (with their types) and "
                                   "whether each is supported")
    p.add_argument("model", nargs="?", help="a .tflite model (optional)")
    _add_common(p, arena=False, model=None)   # --target / --interpreter: accepted for uniformity
    p.set_defaults(func=cmd_ops)
    return parser


def _check_options(args) -> None:
    """Option values argparse cannot judge: InputErrors (status 1, one line). A core
    alias (``cortex-m0plus``) becomes its profile's name, which every output shows."""
    args.target = get_target(args.target).name
    if args.interpreter not in INTERPRETERS:
        raise InputError(f"unknown interpreter {args.interpreter!r}; one of: {', '.join(INTERPRETERS)}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_options(args)
        return args.func(args)
    except MicroRuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, as command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
