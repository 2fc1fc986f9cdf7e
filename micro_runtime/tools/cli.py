"""The ``micro-runtime`` command (also ``python -m micro_runtime``).

Subcommands: ``size``, ``audit``, ``plan``, ``run``, ``eval``, ``info``, ``optimize``,
``drift``, ``bench``, ``ops``, ``fit``, ``boards`` (see ``--help`` of each). Every one takes ``--target`` (a
profile of :mod:`micro_runtime.targets` or a core alias; default ``cortex-m4+cmsis-nn``),
``--interpreter recording|micro`` (the TFLM interpreter class
whose arena is meant: RecordingMicroInterpreter, the default, as the tflite-micro package
and TFLM's tests use; MicroInterpreter, as firmware links) and ``--json``; every output
names its target.

Errors are one line on stderr, naming options as typed. Exit status 1 for a bad model,
input, option value (an unknown ``--target``, ``--budget -1`` ...) or a too-small arena;
2 for a command line that cannot be parsed (unknown option, missing argument, an option
given twice); 0 when the reader of the output goes away (``| head``). Files written,
input shapes and ``--jobs`` follow one rule each for every command (docs/cli_rules.md:
:mod:`.output_paths`, :mod:`micro_runtime.samples`, :mod:`micro_runtime.workers`).
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
from .model_paths import (BUNDLED_PREFIX, bundled_dir, bundled_names,  # noqa: F401 - re-exported
                          load_model_arg as _load, model_name as _model_name, resolve_model_path)
from .output_paths import check_output_path, output_files, reads_of, write_file

# the interpreter classes a figure can be for (as micro_runtime.tools.sizing.INTERPRETERS;
# the kernels are imported only when a command runs, so Ctrl-C is handled from the start)
INTERPRETERS = ("recording", "micro")


def __getattr__(name):
    if name == "SIZE_KEYS":       # re-exported from .sizing, loaded on first use
        from .sizing import SIZE_KEYS
        return SIZE_KEYS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: the most samples one ``run`` takes (one invoke each; ``eval`` runs data sets)
MAX_RUN_SAMPLES = 10000
#: the class name each ``--interpreter`` value stands for
CLASS_NAMES = {"recording": "RecordingMicroInterpreter", "micro": "MicroInterpreter"}


def _make_interpreter(model, args, arena_size: Optional[int] = None, invoke: bool = True):
    """The ``--interpreter`` class over ``model`` with ``arena_size`` bytes (default: the
    exact minimum for that class), allocated, and invoked once when ``invoke`` (the
    seed's pattern: Invoke() allocates, then the figures are complete)."""
    from recording import RecordingMicroInterpreter
    from ..api import count_resource_variables
    from ..interpreter import MicroInterpreter
    from .sizing import measure_arena
    recording = args.interpreter == "recording"
    resolver = getattr(args, "resolver", None)
    if arena_size is None:
        arena_size = measure_arena(model, args.target, op_resolver=resolver, recording=recording,
                                   max_loop_iterations=_sizing_loops(args)).min_arena_bytes
    cls = RecordingMicroInterpreter if recording else MicroInterpreter
    # ``run`` invokes as TFLM (no loop bound unless given); audit / plan are sizing passes.
    # Figures come from an allocation and one invoke: co-processor operators (ethos-u)
    # invoke as the stub the figures were measured with; a run invokes them for real
    loops = args.max_loop_iterations if args.command == "run" else _sizing_loops(args)
    it = cls(model, resolver, arena_size=arena_size, target=args.target,
             num_resource_variables=count_resource_variables(model), error_reporter=lambda m: None,
             max_loop_iterations=loops, npu_stub=invoke)
    # audit / plan show figures, not outputs: the arithmetic that cannot change the arena
    # is not done (MicroInterpreter.skip_computing)
    it.skip_computing = args.command != "run"
    if invoke:
        it.invoke()
    else:
        it.allocate_tensors()
    return it


def _sizing_loops(args) -> int:
    """The loop bound of a sizing pass: ``--max-loop-iterations``, else the default."""
    from ..limits import SIZING_LOOP_ITERATIONS
    value = getattr(args, "max_loop_iterations", None)
    return SIZING_LOOP_ITERATIONS if value is None else value


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
    """The text report of one model's ``size`` record on one target."""
    from .plan_view import format_peak
    from .sizing import format_sum, minimum_terms
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
    terms = minimum_terms(record["arena_bytes"], record["head_bytes"], record["tail_bytes"],
                          record["timeline_peak_bytes"])
    npu = record.get("npu_scratch_bytes")
    vela = [] if npu is None else [
        f"    of which Vela's plan {npu:>10} bytes (the ethos-u operators' scratch tensors, with "
        f"the tensors Vela placed in them); TFLM's own: {record['arena_bytes'] - npu} bytes"]
    return [
        f"{record['model']} on target {record['target']}, {CLASS_NAMES[ours]} ({allocator})",
        "  " + format_sum("minimum arena         ", record["arena_bytes"], terms, 10),
        *vela,
        f"  head (planned tensors) {record['head_bytes']:>10} bytes",
        f"  tail (persistent)      {record['tail_bytes']:>10} bytes",
        f"  temporaries peak       {record['temp_peak_bytes']:>10} bytes (from the arena start)",
        f"  TFLM's reported total  {total:>10} bytes{note}",
        f"  {CLASS_NAMES[other]} (--interpreter {other}): "
        f"{record['min_arena_bytes' if other == 'recording' else 'plain_min_arena_bytes']} bytes",
    ] + format_peak(record.get("head_peak"))


#: the rows of ``size --target a,b``: (label, record key)
TABLE_ROWS = (("minimum arena", "arena_bytes"), ("= head", "head_bytes"), ("+ tail", "tail_bytes"),
              ("+ temporaries gap", "temporaries_gap_bytes"), ("+ alignment gap", "alignment_gap_bytes"))


def _size_table(model: str, records: List[dict]) -> List[str]:
    """One model on several targets: a column per target, the minimum and its terms as
    rows (each column adds up), then the other interpreter's minimum and the head peak."""
    ours = records[0]["interpreter"]
    other = "micro" if ours == "recording" else "recording"
    other_key = "min_arena_bytes" if other == "recording" else "plain_min_arena_bytes"
    width = max(max(len(r["target"]) for r in records), 10)
    label = 26

    def row(name, values):
        return f"  {name:<{label}}" + "".join(f"  {v:>{width}}" for v in values)

    lines = [f"{model}: minimum arena in bytes per target, {CLASS_NAMES[ours]} "
             "(each column: minimum = head + tail + temporaries gap + alignment gap)",
             row("", [r["target"] for r in records])]
    lines += [row(name, [r[key] for r in records]) for name, key in TABLE_ROWS]
    lines.append(row(f"{CLASS_NAMES[other]}", [r[other_key] for r in records]))
    lines.append(row("head peak at operator", [
        "-" if not r.get("head_peak") or r["head_peak"]["operator"] is None
        else f"#{r['head_peak']['operator']}" for r in records]))
    return lines


def _csv_value(key: str, value):
    """A CSV cell: the head peak as its operator (``#3 CONV_2D``), None as empty."""
    if value is None:
        return ""
    if key == "head_peak":
        return "" if value["operator"] is None else f"#{value['operator']} {value['op'] or ''}".strip()
    return value


def _write_csv(rows: List[dict]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    from .sizing import SIZE_KEYS
    columns = ("path",) + SIZE_KEYS + ("error",)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_value(c, row.get(c)) for c in columns])


def cmd_size(args) -> int:
    from .sizing import c_snippet, cpp_snippet, measure_arena, model_files, size_many, size_record
    interpreter = "micro" if args.plain else args.interpreter
    formats = [name for name, on in (("--json", args.json), ("--csv", args.csv), ("--c", args.c),
                                     ("--cpp", args.cpp)) if on]
    if len(formats) > 1:
        raise InputError(f"{' and '.join(formats)}: choose one output format")
    targets = args.targets
    paths = [resolve_model_path(p) for p in args.models]
    snippet = "--c" if args.c else "--cpp" if args.cpp else None
    if snippet and len(targets) > 1:
        raise InputError(f"{snippet} takes one --target (the snippet declares one arena size)")
    if len(paths) == 1 and not os.path.isdir(paths[0]):
        from ..model import load_model
        model = load_model(paths[0])
        name = os.path.basename(paths[0])
        results = [measure_arena(model, target, op_resolver=args.resolver,
                                 recording=interpreter == "recording",
                                 alt_decompression_memory_size=args.alt_decompression_memory,
                                 max_loop_iterations=_sizing_loops(args))
                   for target in targets]
        if snippet:
            print((c_snippet if args.c else cpp_snippet)(name, results[0]))
            return 0
        records = [size_record(name, result) for result in results]
        if args.csv:
            _write_csv([{**record, "path": paths[0], "error": None} for record in records])
        elif len(records) == 1:
            _emit(args, records[0], _size_text(records[0]))
        else:
            _emit(args, {"model": name, "targets": records}, _size_table(name, records))
        return 0

    if snippet:
        raise InputError(f"{snippet} takes one model (the snippet declares one arena size)")
    if args.alt_decompression_memory:
        raise InputError("--alt-decompression-memory takes one model")
    files = model_files(paths)
    if not files:
        raise InputError(f"no .tflite files in {', '.join(args.models)}")
    rows: List[dict] = []
    with _progress(args, "size") as bar:
        bar.update(0, len(files) * len(targets))
        for target in targets:
            rows += size_many(files, target, interpreter, args.jobs,
                              on_done=lambda row: bar.advance(note=row["model"]),
                              custom_ops=args.custom_ops, max_loop_iterations=_sizing_loops(args))
    errors = [r for r in rows if r["error"]]
    if args.csv:
        _write_csv(rows)
    elif args.json:
        print(json.dumps(rows, indent=2))
    elif len(targets) > 1:
        width = max(len(p) for p in files)
        columns = [max(len(t), 10) for t in targets]
        by_key = {(r["path"], r["target"]): r for r in rows}
        text = [f"{len(files)} models: minimum arena in bytes for {CLASS_NAMES[interpreter]} "
                f"(--interpreter {interpreter}) per target",
                f"{'model':<{width}}" + "".join(f"  {t:>{w}}" for t, w in zip(targets, columns))]
        for path in files:
            cells = []
            for target, w in zip(targets, columns):
                r = by_key[(path, target)]
                cells.append(f"  {'error' if r['error'] else r['arena_bytes']:>{w}}")
            text.append(f"{path:<{width}}" + "".join(cells))
        for r in errors:
            text.append(f"error: {r['path']} on {r['target']}: {r['error']}")
        text.append(f"{len(errors)} of {len(rows)} sizings failed" if errors
                    else f"all {len(files)} models sized on {len(targets)} targets")
        print("\n".join(text))
    else:
        width = max(len(r["path"]) for r in rows)
        text = [f"{len(rows)} models on target {targets[0]}; minimum arena in bytes "
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
    from .plan_view import format_peak, head_peak, plan_entries
    from .sizing import format_sum, interpreter_terms, minimum_terms, operator_allocations
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
    allocations = operator_allocations(it)
    ops = [{"subgraph": node.subgraph_index, "index": node.index, "op": node.name,
            **allocations[(node.subgraph_index, node.index)]}
           for sg in it.subgraphs for node in sg.nodes]
    data = {"model": _model_name(args.model), "target": it.target.name, "interpreter": args.interpreter,
            "arena_bytes": it.arena_size, "tflm_report": lines, "categories": cats,
            "operators": ops, "head_bytes": it.arena.head_bytes,
            "temp_peak_bytes": stats.temp_peak, "tail_bytes": it.arena.persistent_used_bytes}
    minimum, terms = interpreter_terms(it)
    values = dict(terms)
    data.update({"min_arena_bytes": minimum, "min_head_bytes": values["head"],
                 "min_tail_bytes": values["tail"],
                 "temporaries_gap_bytes": values.get("temporaries gap", 0),
                 "alignment_gap_bytes": values.get("alignment gap", 0),
                 "head_peak": head_peak(plan_entries(it))})
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
                f"| tail {data['tail_bytes']} bytes (at this arena of {it.arena_size} bytes)")
    text.append(format_sum("minimum arena", data["min_arena_bytes"],
                           minimum_terms(data["min_arena_bytes"], data["min_head_bytes"],
                                         data["min_tail_bytes"],
                                         data["min_arena_bytes"] - data["alignment_gap_bytes"])))
    data["npu_scratch_bytes"] = _vela_line(model, data["head_bytes"], text)
    text += format_peak(data["head_peak"])
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
    from .plan_view import ascii_chart, format_peak, head_peak, plan_entries, svg_timeline
    if args.width < 10:
        raise InputError(f"--width must be at least 10 characters, not {args.width}")
    svg_path = (check_output_path(args.svg, "--svg", "plan.svg", reads_of(args.model))
                if args.svg is not None else None)
    model = _load(args.model)
    it = _make_interpreter(model, args, args.arena_size, invoke=False)
    entries = plan_entries(it)
    head = it.arena.head_bytes
    name = _model_name(args.model)
    if svg_path:
        title = f"{name}: memory plan on {it.target.name}"
        picture = svg_timeline(entries, title, head).encode("utf-8")
        write_file(svg_path, "--svg", lambda f: f.write(picture))
    peak = head_peak(entries)
    data = {"model": name, "target": it.target.name, "interpreter": args.interpreter,
            "head_bytes": head, "buffers": entries, "head_peak": peak, "svg": args.svg}
    text = [f"{name} on target {it.target.name}: head {head} bytes, {len(entries)} planned buffers"]
    data["npu_scratch_bytes"] = _vela_line(model, head, text)
    text += ascii_chart(entries, args.width)
    text += format_peak(peak)
    if args.svg:
        text.append(f"SVG written to {args.svg}")
    _emit(args, data, text)
    return 0


# ----------------------------------------------------------------------- run
def cmd_run(args) -> int:
    """Inference on the ``--input`` files: one sample (an array of the input's shape) or
    a batch (a leading samples axis, :mod:`micro_runtime.samples`): each sample from the
    reset state, outputs stacked on a leading axis."""
    from .arrays import dequantize_output, load_samples
    model = _load(args.model)
    main = model.main
    specs = [main.tensors[t] for t in main.inputs]
    paths = output_files(list(args.output or []), len(main.outputs), "--output",
                         reads=reads_of(args.model, *args.input))
    if len(args.input) != len(specs):
        raise InputError(f"the model has {len(specs)} input(s); got {len(args.input)} --input file(s)")
    it = _make_interpreter(model, args, args.arena_size, invoke=False)
    inputs, batched = load_samples(args.input, specs, args.quantize)
    count = inputs[0].shape[0] if inputs else 1
    if count > MAX_RUN_SAMPLES:
        raise InputError(f"--input holds {count} samples; run takes at most {MAX_RUN_SAMPLES} "
                         "(one invoke each): use eval for a data set (many samples per pass)")
    results: List[List[np.ndarray]] = [[] for _ in main.outputs]
    for n in range(count):
        if n:
            it.reset()
        for i, x in enumerate(inputs):
            it.set_input(np.array(x[n]), i)     # a copy that keeps a 0-d shape
        it.invoke()
        for k in range(len(results)):
            results[k].append(np.array(it.output(k)))
    outputs = [np.stack(r) if batched else r[0] for r in results]
    if args.dequantize:
        outputs = [dequantize_output(o, main.tensors[t]) for o, t in zip(outputs, main.outputs)]
    for path, value in zip(paths, outputs):
        write_file(path, "--output", lambda f, v=value: np.save(f, v))
    data = {"model": _model_name(args.model), "target": it.target.name, "interpreter": args.interpreter,
            "arena_bytes": it.arena_size, "samples": count if batched else None,
            "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype), "path": p,
                         "dequantized": bool(args.dequantize and o.dtype != it.output(k).dtype),
                         "values": o.reshape(-1)[:16].tolist()}
                        for k, (o, p) in enumerate(zip(outputs, paths + [None] * len(outputs)))]}
    text = [f"{data['model']} on target {it.target.name}, {CLASS_NAMES[args.interpreter]}, "
            f"arena {it.arena_size} bytes" + (f", {count} samples" if batched else "")]
    for k, o in enumerate(outputs):
        text.append(f"output {k}: {o.dtype}{list(o.shape)} {np.array2string(o.reshape(-1)[:16], separator=' ')}"
                    + (" ..." if o.size > 16 else "") + (f" -> {paths[k]}" if k < len(paths) else ""))
    _emit(args, data, text)
    return 0


# ---------------------------------------------------------------------- info
# ---------------------------------------------------------------------- eval
def cmd_eval(args) -> int:
    from .evaluation import format_regression, format_summary, run_evaluation
    if not args.inputs:
        raise InputError("give the samples with --inputs X.npy (one file per model input)")
    if args.batch is not None and args.batch < 1:
        raise InputError(f"--batch must be a positive number of samples, not {args.batch}")
    model = _load(args.model)
    paths = output_files(list(args.output or []), len(model.main.outputs), "--output",
                         reads=reads_of(args.model, *args.inputs, args.labels, args.expected))
    with _progress(args, "eval") as bar:
        result = run_evaluation(model, args.inputs, target=args.target, batch=args.batch,
                                stream=args.stream, labels_path=args.labels,
                                output_index=args.output_index, progress=bar.update,
                                jobs=args.jobs, quantize=args.quantize, targets_path=args.expected,
                                classifier=args.classifier,
                                max_loop_iterations=args.max_loop_iterations)
    arrays = result.pop("arrays")
    for path, value, entry in zip(paths, arrays, result["outputs"]):
        write_file(path, "--output", lambda f, v=value: np.save(f, v))
        entry["path"] = path
    data = {"model": _model_name(args.model), "target": args.target, **result}
    per_sample = [o for o in result["operators"] if o["mode"] == "per-sample"]
    text = [f"{data['model']} on target {args.target}: {result['samples']} samples in "
            f"{result['seconds']:.2f} s ({result['samples_per_s'] or 0:,.0f} samples/s), "
            f"batch {result['batch']}" + (f", {result['jobs']} processes" if result["jobs"] > 1 else "")
            + (", one stream" if args.stream else "")
            + (", inputs quantized from real values" if args.quantize else "")]
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
    if result["regression"] is not None:
        text.extend(format_regression(result["regression"]))
    _emit(args, data, text)
    return 0


def cmd_info(args) -> int:
    from .info import format_info, model_info
    from .sizing import measure_arena, operator_allocations
    model = _load(args.model)
    arena, arena_error, allocations = None, None, None
    try:
        size = measure_arena(model, args.target, op_resolver=args.resolver,
                             recording=args.interpreter == "recording",
                             max_loop_iterations=_sizing_loops(args))
        arena = {"target": size.target, "min_arena_bytes": size.recording_min_arena_bytes,
                 "plain_min_arena_bytes": size.plain_min_arena_bytes}
        allocations = operator_allocations(_make_interpreter(model, args, size.min_arena_bytes,
                                                             invoke=False))
    except MicroRuntimeError as e:
        arena_error = str(e)
    info = model_info(model, arena, arena_error, allocations)
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
    check_output_path(args.output, "-o", "optimized.tflite", reads_of(args.model))
    model = _load(args.model)
    result = optimize_model(model, args.target, op_resolver=args.resolver, reorder=args.reorder,
                            budget_s=args.budget,
                            recording=args.interpreter == "recording")
    write_file(args.output, "-o", lambda f: f.write(result.model))
    data = {"model": _model_name(args.model), "target": args.target, "interpreter": args.interpreter,
            "output": args.output, **result.as_dict()}
    written = _written_size(result.model, args)
    data["written"] = written
    text = [f"{data['model']} on target {args.target} -> {args.output}",
            f"  head: TFLM {result.original_head_bytes} bytes -> optimized {result.optimized_head_bytes} "
            f"bytes (lower bound {result.lower_bound_bytes}; saved {result.saved_bytes})",
            f"  minimum arena ({CLASS_NAMES[args.interpreter]}): {result.original_min_arena_bytes} -> "
            f"{result.optimized_min_arena_bytes} bytes",
            "  " + _written_line(written),
            f"  method: {result.method}{', operators reordered' if result.reordered else ''}; "
            f"{result.seconds:.2f} s"]
    _emit(args, data, text)
    return 0


def _written_size(model_bytes: bytes, args, target: Optional[str] = None) -> dict:
    """``size``'s record of the model ``optimize`` wrote (the same figures ``size OUT``
    prints for that file)."""
    from .sizing import measure_arena, size_record
    result = measure_arena(model_bytes, target or args.target, op_resolver=args.resolver,
                           recording=args.interpreter == "recording")
    return size_record(os.path.basename(args.output), result)


def _written_line(record: dict) -> str:
    from .sizing import format_sum, minimum_terms
    return format_sum("written model: minimum arena", record["arena_bytes"],
                      minimum_terms(record["arena_bytes"], record["head_bytes"], record["tail_bytes"],
                                    record["timeline_peak_bytes"]))


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
    check_output_path(args.output, "-o", "optimized.tflite", reads_of(args.model))
    result = optimize_with_patches(model, args.target, grid=args.patches or "auto",
                                   op_resolver=args.resolver,
                                   stage_end=args.stage_end, budget_s=args.budget,
                                   max_stages=args.max_stages, refine_moves=args.refine_moves,
                                   time_limit_s=args.time_limit,
                                   recording=args.interpreter == "recording")
    write_file(args.output, "-o", lambda f: f.write(result.model))
    name = _model_name(args.model)
    written = _written_size(result.model, args, result.target)
    data = {"model": name, "interpreter": args.interpreter, "output": args.output, **result.as_dict(),
            "written": written}
    # the written model's tail, as `size` reports it (the search's tail_bytes is minimum - head)
    data["tail_bytes"] = written["tail_bytes"]
    pct = 100.0 * result.saved_bytes / result.original_min_arena_bytes if result.original_min_arena_bytes else 0.0
    text = [f"{name} on target {result.target} -> {args.output}",
            f"  minimum arena ({CLASS_NAMES[args.interpreter]}): TFLM {result.original_min_arena_bytes} -> offline plan "
            f"{result.offline_plan_min_arena_bytes} -> patches {result.min_arena_bytes} bytes "
            f"(saved {result.saved_bytes}, {-pct:+.1f} %)",
            "  " + _written_line(written)]
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
    if result.stopped_early:
        text.append(f"  the search reached --time-limit while {result.stopped_early}: "
                    f"the best rewrite found by then was kept")
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
                               on_progress=bar.update, max_loop_iterations=args.max_loop_iterations)
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
                               interpreter=args.interpreter, on_progress=bar.update,
                               max_loop_iterations=args.max_loop_iterations)
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


def cmd_ops(args) -> int:
    """The operators micro-runtime runs on ``--target``, each with the tensor types it
    supports and the kernel library it comes from (``reference``, or ``cmsis-nn`` where a
    CMSIS-NN build replaces TFLM's reference kernel); with a model, each of its operators
    (count of uses), the types it uses, which kernel runs it and whether it runs them."""
    from ..op_resolver import default_op_resolver
    from ..schema import op_name
    from .resolver_code import operator_types, resolver_code
    target = get_target(args.target)
    resolver = default_op_resolver(target)
    if args.cpp:
        if args.model is None:
            raise InputError("--cpp needs a model: the resolver holds exactly its operators")
        if args.json:
            raise InputError("--json and --cpp: choose one output format")
        print(resolver_code(_load(args.model), target, _model_name(args.model)))
        return 0
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
        if getattr(target, "esp_nn", None):
            from kernels.esp_nn.internal.common import FUNCTION_SETS
            data["esp_nn"] = target.esp_nn
            text.append(f"ESP-NN functions: {FUNCTION_SETS[target.esp_nn]}; int8 paths run ESP-NN, "
                        "the rest TFLM's reference code (with a model: which, per operator)")
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
            route = kernel.route(target, sg, op) if kernel is not None and hasattr(kernel, "route") else None
            key = (name, used.key if used is not None else "", route)
            entry = uses.setdefault(key, {"op": name, "types": key[1], "count": 0,
                                          "supported": kernel is not None and types_ok,
                                          "kernel": kernel is not None,
                                          "library": None if kernel is None else kernel.library,
                                          "runs": route})
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
        if o["runs"]:
            text.append(f"      runs {o['runs']}")
    problems = missing + unsupported
    text.append("all supported" if not problems else
                "; ".join(filter(None, [missing and f"missing: {', '.join(missing)}",
                                        unsupported and f"types not supported: {', '.join(unsupported)}"])))
    _emit(args, data, text)
    return 0 if not problems else 1


# ---------------------------------------------------------------------- main
class _StoreOnce(argparse._StoreAction):
    """argparse's store, refusing an option given twice (``--target a --target b`` would
    otherwise keep the last one silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_options_given", {})
        if self.dest in given:
            hint = " (size takes several targets: --target a,b or --target all)" \
                if self.dest == "target" else ""
            parser.error(f"{option_string} given twice ({given[self.dest]} and {values}); "
                         f"give it once{hint}")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class _Targets(argparse.Action):
    """``size --target``: may be repeated, and each value may be ``a,b,c`` or ``all``."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_options_given", {})
        current = list(getattr(namespace, self.dest)) if "target" in given else []
        given["target"] = values
        setattr(namespace, self.dest, current + [values])


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (status 2) instead of the usage text, and options
    that store a value refusing to be given twice."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message):
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _add_common(p, arena: bool = True, model: Optional[str] = "one", targets: bool = False) -> None:
    """--target (several with ``targets``), --interpreter, --json (and the model,
    --arena-size) for a subcommand."""
    if model == "one":
        p.add_argument("model", help="path of a .tflite model, or bundled:NAME (bundled:person_detect)")
    if targets:
        p.add_argument("--target", default=[DEFAULT_TARGET], action=_Targets, metavar="T[,T...]",
                       help=TARGET_HELP + "; several (a,b,c, or --target repeated) or 'all' "
                            "give one column per target")
    else:
        p.add_argument("--target", default=DEFAULT_TARGET, metavar="T", help=TARGET_HELP)
    p.add_argument("--interpreter", default="recording", metavar="{recording,micro}",
                   help="recording: TFLM's RecordingMicroInterpreter (RecordingMicroAllocator; what the "
                        "tflite-micro package and TFLM's tests use; default); micro: MicroInterpreter "
                        "with the default MicroAllocator (what firmware links, a little smaller)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    if model != "optional":
        p.add_argument("--custom-op", action="append", metavar="NAME=persistent:N,scratch:M",
                       help="stand in for a custom operator micro-runtime has no kernel for: its "
                            "init reserves N persistent bytes, its prepare asks for an M-byte "
                            "scratch buffer; outputs are not computed (zeros), so run, eval, drift "
                            "and bench refuse it (repeat per operator)")
    if arena:
        p.add_argument("--arena-size", type=int, default=None,
                       help="arena bytes (default: the model's exact minimum for --interpreter)")


#: ``--jobs`` help of every subcommand that takes it (one meaning everywhere)
JOBS_HELP = ("worker processes: 0 = one per processor, N = at most N; never more than the "
             "processors or the {work} (default 1)")

#: numeric options every subcommand checks the same way: dest -> (option, least value, what)
NUMERIC_OPTIONS = {
    "arena_size": ("--arena-size", 0, "a number of bytes"),
    "alt_decompression_memory": ("--alt-decompression-memory", 0, "a number of bytes"),
    "num_runs": ("--num_runs", 1, "a number of timed invokes"),
    "warmup_runs": ("--warmup_runs", 0, "a number of untimed invokes"),
    "seed": ("--seed", 0, "a seed for the random inputs"),
}

#: ``--target`` help of every subcommand: the names, what they model, the aliases
TARGET_HELP = (
    f"the TFLM build to emulate (struct sizes, kernel library; default {DEFAULT_TARGET}): "
    "host64 (the tflite-micro PyPI package), mcu32 (a generic 32-bit build with 4-byte enums "
    "and compression on, not a Cortex-M firmware), cortex-m0, cortex-m3, cortex-m4, cortex-m7, "
    "cortex-m33, cortex-m55 (TFLM's Makefile build for that core, reference kernels), each also "
    "+cmsis-nn (CMSIS-NN kernels: no DSP on m0/m3, DSP on m4/m7/m33, MVE on m55); riscv32 "
    "(TFLM's riscv32_generic build); esp32-s3, esp32-p4, esp32, esp32-s2, esp32-c3, esp32-c6, "
    "esp32-h2 (esp-tflite-micro with ESP-NN as ESP-IDF builds it; also <chip>+esp-nn), each "
    "also +ansi (ESP-NN's plain C). Other names: "
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
    _add_common(p, arena=False, model=None, targets=True)
    p.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)  # = --interpreter micro
    p.add_argument("--c", action="store_true",
                   help="print a C snippet (C11): TENSOR_ARENA_SIZE and a _Alignas(16) arena (one model)")
    p.add_argument("--cpp", action="store_true",
                   help="print a C++ snippet: constexpr kTensorArenaSize and an alignas(16) arena "
                        "(one model)")
    p.add_argument("--csv", action="store_true", help="print CSV rows (one per model)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help=JOBS_HELP.format(work="models"))
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
                   help="input array (repeat per input, in order): the input's shape (one "
                        "sample) or a batch on a leading axis (each sample from the reset state)")
    p.add_argument("--output", action="append", metavar="Y.npy",
                   help="save the outputs to exactly this file (.npy format); one per output, or "
                        "one for all (output k -> STEM_k.EXT)")
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
                   help="samples of one model input (repeat per input): (n, *input shape), "
                        "(n, *input shape without its batch axis of 1), or one sample")
    p.add_argument("--quantize", action="store_true",
                   help="the inputs are real values: quantize each with its input tensor's scale "
                        "and zero point (TFLM's QUANTIZE arithmetic: round half away from zero, "
                        "then clamp to the type)")
    p.add_argument("--labels", metavar="Y.npy",
                   help="class ids (samples,) or one-hot rows: top-1 accuracy and confusion "
                        "(a classifier's output: one vector of scores per sample)")
    p.add_argument("--classifier", action="store_true",
                   help="with --labels: score the output as class scores even though no SOFTMAX "
                        "computes it (logits)")
    p.add_argument("--targets", dest="expected", metavar="T.npy",
                   help="expected outputs (real values, or quantized in the output's type): MSE, "
                        "max abs error and SNR in real and quantized units")
    p.add_argument("--output-index", type=int, default=0,
                   help="the output scored against --labels / --targets (default 0)")
    p.add_argument("--batch", type=int, default=None,
                   help="samples per pass (default: automatic, up to 1024)")
    p.add_argument("--stream", action="store_true",
                   help="the samples are one sequence: state carries from each to the next "
                        "(default: each sample starts from the reset state)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help=JOBS_HELP.format(work="samples") + "; the outputs do not depend on it")
    p.add_argument("--output", action="append", metavar="Y.npy",
                   help="save the outputs (first axis = samples) to exactly this file; one per "
                        "output, or one for all (output k -> STEM_k.EXT)")
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
    _add_common(p, arena=False, model="optional")   # --target / --interpreter: accepted for uniformity
    p.add_argument("--cpp", action="store_true",
                   help="print the C++ MicroMutableOpResolver<N> declaration and the Add...() "
                        "calls the model needs (TFLM's method names; the kernels are --target's)")
    p.set_defaults(func=cmd_ops)

    from .fit import add_parsers as add_fit_parsers
    add_fit_parsers(sub, TARGET_HELP)
    _add_limits(sub)
    return parser


def _target_names(value) -> List[str]:
    """The target names of ``--target`` values (each may be ``a,b,c`` or ``all``)."""
    from ..targets import TARGETS
    names: List[str] = []
    for item in (value if isinstance(value, list) else [value]):
        for name in str(item).split(","):
            name = name.strip()
            if name == "all":
                names += list(TARGETS)
            elif name:
                names.append(name)
    if not names:
        raise InputError("--target: give a target name (see micro-runtime --help)")
    return names


#: commands that need real outputs: a stand-in kernel (--custom-op) computes none
NEEDS_OUTPUTS = ("run", "eval", "drift", "bench")


def _check_custom_ops(args) -> None:
    """``--custom-op NAME=persistent:N,scratch:M`` -> ``args.custom_ops`` (name, N, M)
    and ``args.resolver`` (every kernel plus the stand-ins; None without any)."""
    from ..schema import BUILTIN_OP_CODES
    from ..stand_in import StandInKernel, parse_custom_op
    args.custom_ops = [parse_custom_op(t) for t in (getattr(args, "custom_op", None) or [])]
    args.resolver = None
    if not args.custom_ops:
        return
    names = [name for name, _, _ in args.custom_ops]
    for name in names:
        if names.count(name) > 1:
            raise InputError(f"--custom-op {name}: given twice")
        if name in BUILTIN_OP_CODES:
            raise InputError(f"--custom-op {name}: {name} is a builtin operator, which micro-runtime "
                             "runs itself; --custom-op stands in for custom operators")
    if args.command in NEEDS_OUTPUTS:
        raise InputError(f"--custom-op: a stand-in kernel computes no outputs, so {args.command} "
                         "cannot use it (size, audit, plan, info and optimize can)")
    from ..op_resolver import default_op_resolver
    args.resolver = default_op_resolver()
    for name, persistent, scratch in args.custom_ops:
        args.resolver.add(StandInKernel(name, persistent, scratch))


def _with_hint(error: MicroRuntimeError) -> str:
    """The error's message, and for custom operators we have no kernel for, the option
    that sizes the model anyway."""
    from ..errors import UnsupportedOpError
    from ..schema import BUILTIN_OP_CODES
    text = str(error)
    if isinstance(error, UnsupportedOpError):
        custom = [name for name in error.missing if name not in BUILTIN_OP_CODES]
        if custom:
            text += ("; to size the model anyway, describe each custom operator's allocations: "
                     + " ".join(f"--custom-op {name}=persistent:BYTES,scratch:BYTES" for name in custom)
                     + " (a stand-in kernel; its outputs are not computed)")
    return text
#: verbs whose invoke is a sizing pass (bounded loops by default) and verbs that invoke
#: as TFLM does (no bound unless given)
SIZING_VERBS = ("size", "audit", "plan", "info")
INVOKE_VERBS = ("run", "eval", "bench", "drift")
#: (verb or "*", option dest) -> (lowest, highest) accepted value; floats are checked
#: as (low, high] when low is 0.0. Each option's --help shows its range.
OPTION_RANGES = {
    ("*", "arena_size"): (0, 1 << 40),
    ("size", "alt_decompression_memory"): (0, (1 << 32) - 1),
    ("*", "max_loop_iterations"): (0, 1 << 62),
    ("plan", "width"): (10, 10000),
    ("eval", "batch"): (1, 1 << 16),
    ("eval", "output_index"): (0, (1 << 31) - 1),
    ("drift", "seeds"): (1, 10000),
    ("bench", "warmup_runs"): (0, 1000000),
    ("bench", "num_runs"): (1, 1000000),
    ("bench", "seed"): (0, (1 << 32) - 1),
    ("optimize", "budget"): (0.0, 86400.0),
    ("optimize", "time_limit"): (0.0, 86400.0),
    ("optimize", "stage_end"): (0, (1 << 31) - 1),
    ("optimize", "max_stages"): (1, 64),
    ("optimize", "refine_moves"): (0, 10000000),
}


#: (verb, dest) -> the option's name on the command line (filled by _add_limits)
_OPTION_NAMES: dict = {}


def _add_limits(sub) -> None:
    """--max-loop-iterations on the verbs that invoke, and each ranged option's range
    in its help (one place for both)."""
    from ..limits import SIZING_LOOP_ITERATIONS
    for verb in SIZING_VERBS + INVOKE_VERBS:
        sizing = verb in SIZING_VERBS
        sub.choices[verb].add_argument(
            "--max-loop-iterations", type=int, default=None, metavar="N",
            help=(f"WHILE iterations the sizing pass may run, all loops together (default "
                  f"{SIZING_LOOP_ITERATIONS}); past it the command stops with an error "
                  "(TFLM would run on)" if sizing else
                  "WHILE iterations each invoke may run, all loops together (default: no bound, "
                  "as TFLM; Ctrl-C interrupts, status 130)"
                  + (f"; the arena sizing before the run allows {SIZING_LOOP_ITERATIONS} unless "
                     "this is given" if verb == "run" else "")))
    for verb, p in sub.choices.items():
        for action in p._actions:
            low_high = OPTION_RANGES.get((verb, action.dest)) or OPTION_RANGES.get(("*", action.dest))
            if low_high and action.option_strings:
                _OPTION_NAMES[(verb, action.dest)] = action.option_strings[0]
            if low_high and action.help and action.help is not argparse.SUPPRESS:
                low, high = low_high
                action.help += (f" [range: {low:g} < value <= {high:g}]" if isinstance(low, float)
                                else f" [range: {low} to {high}]")


def _check_ranges(args) -> None:
    """Every numeric option inside its documented range (InputError naming it)."""
    for (verb, dest), (low, high) in OPTION_RANGES.items():
        if verb not in ("*", args.command):
            continue
        value = getattr(args, dest, None)
        if value is None:
            continue
        option = _OPTION_NAMES.get((args.command, dest), "--" + dest.replace("_", "-"))
        if isinstance(low, float):
            where = f"(range: {low:g} < value <= {high:g})"
            if not value > low:                    # also refuses nan
                raise InputError(f"{option} must be a positive number of seconds, not {value} {where}")
            if not value <= high:
                raise InputError(f"{option} must be at most {high:g} seconds, not {value} {where}")
        else:
            where = f"(range: {low} to {high})"
            if value < low:
                raise InputError(f"{option} must be at least {low}, not {value} {where}")
            if value > high:
                raise InputError(f"{option} must be at most {high}, not {value} {where}")


def _check_options(args) -> None:
    """Option values argparse cannot judge: InputErrors (status 1, one line). A core
    alias (``cortex-m0plus``) becomes its profile's name, which every output shows."""
    if args.target is not None:     # fit / boards: None = the board's target
        targets = [get_target(t).name for t in _target_names(args.target)]
        if len(targets) > 1 and args.command != "size":
            raise InputError(f"--target {','.join(targets)}: {args.command} runs one target "
                             "(size takes several: --target a,b or --target all)")
        args.targets = list(dict.fromkeys(targets))
        args.target = args.targets[0]
    else:
        args.targets = []
    for dest, (option, least, what) in NUMERIC_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is not None and value < least:
            raise InputError(f"{option} must be {what} (at least {least}), not {value}")
    if getattr(args, "jobs", None) is not None:
        from ..workers import check_jobs
        check_jobs(args.jobs, "--jobs")
    _check_ranges(args)
    _check_custom_ops(args)
    if args.interpreter not in INTERPRETERS:
        raise InputError(f"unknown interpreter {args.interpreter!r}; one of: {', '.join(INTERPRETERS)}")


def main(argv: Optional[List[str]] = None) -> int:
    """The command line: exit status 0, 1 (an error, one line on stderr), 2 (a command
    line that cannot be parsed) or 130 (interrupted by Ctrl-C, one line on stderr)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        _check_options(args)
        status = args.func(args)
        sys.stdout.flush()          # a closed pipe shows here, not at interpreter exit
        return status
    except MicroRuntimeError as e:
        print(f"error: {_with_hint(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, as command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except MemoryError as e:        # host memory beyond what the library bounds itself
        print(f"error: this host ran out of memory ({e or 'no detail'})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
