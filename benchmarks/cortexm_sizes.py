"""Minimum arena of every zoo model on every Cortex-M profile, beside mcu32 and the figures
TFLM's own Cortex-M builds recorded (tests/data/reference/tflm_figures_cortexm*.json).

    python benchmarks/cortexm_sizes.py               # markdown table for docs/targets.md
    python benchmarks/cortexm_sizes.py --check       # also: our figure vs TFLM's, per cell
    python benchmarks/cortexm_sizes.py --counts      # per recorded build, over every model
                                                     # TFLM recorded: report / arena / outputs equal

Each cell is our minimum arena in bytes (RecordingMicroInterpreter) with TFLM's reference
kernels and with CMSIS-NN on that core, each with its difference to mcu32; with
``--check`` a figure whose model and build TFLM recorded shows ``=`` when the two agree
and ``TFLM n`` when they do not (a model TFLM could not run shows its status).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from micro_runtime.errors import MicroRuntimeError  # noqa: E402
from micro_runtime.targets import CORTEX_M_CORES  # noqa: E402
from micro_runtime.tools.sizing import measure_arena  # noqa: E402
from micro_runtime import load_model  # noqa: E402
from micro_runtime.targets import TARGETS  # noqa: E402
from tests.tflm_figures import DATA, emulate, load_figures, report_arena  # noqa: E402
from tests.test_cortexm_zoo import RECORDED_AS  # noqa: E402

#: the zoo models TFLM's Cortex-M figures cover (the compressed and audio ones are in the
#: sweep of tests/test_cortexm_zoo.py)
ZOO = ["hello_world_int8", "hello_world_float", "simple_add_model", "ad01_int8",
       "micro_speech_quantized", "person_detect", "keyword_scrambled_8bit", "kws_ref_model",
       "trained_lstm_int8", "vww_96_int8", "pretrainedResnet_quant"]


def arena(path: str, target: str):
    try:
        return measure_arena(path, target).min_arena_bytes
    except MicroRuntimeError as e:
        return f"error: {e}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare each cell with TFLM's figure")
    ap.add_argument("--models", nargs="*", default=ZOO, help="zoo model names (default: the 11)")
    ap.add_argument("--counts", action="store_true",
                    help="per recorded build: models whose report lines, minimum arena and outputs "
                         "equal TFLM's (a markdown table), then the differences")
    args = ap.parse_args(argv)
    figures, _ = load_figures()
    if args.counts:
        return counts(figures)
    cores = list(CORTEX_M_CORES)
    print("| model | mcu32 | " + " | ".join(f"{c}: reference / +cmsis-nn" for c in cores) + " |")
    print("|---|---:|" + "---:|" * len(cores))
    mismatches = 0
    for model in args.models:
        path = os.path.join(DATA, model + ".tflite")
        base = arena(path, "mcu32")
        cells = []
        for core in cores:
            parts = []
            for target in (core, core + "+cmsis-nn"):
                ours = arena(path, target)
                part = str(ours) if isinstance(ours, str) else f"{ours} ({ours - base:+d})"
                ref = figures.get((model + ".tflite", target))
                if args.check and ref is not None:
                    if "status" in ref:
                        part += f" TFLM {ref['status']}"
                    elif ref["min_arena_bytes"] == ours:
                        part += " ="
                    else:
                        part += f" TFLM {ref['min_arena_bytes']}"
                        mismatches += 1
                parts.append(part)
            cells.append(" / ".join(parts))
        print(f"| {model} | {base} | " + " | ".join(cells) + " |")
    if args.check:
        names = [c + lib for c in cores for lib in ("", "+cmsis-nn")]
        recorded = sum(1 for (m, p) in figures if m[:-7] in args.models and p in names)
        print(f"\n{recorded} cells recorded by TFLM builds, {mismatches} differ")
    return 1 if mismatches else 0


def counts(figures) -> int:
    """Per recorded build: how many models it ran, and of those how many give the same
    report lines, minimum arena and output hashes here; models with COMPRESSION_METADATA
    count as refused (TFLM runs them on garbage weights, micro-runtime refuses them)."""
    rows, notes = {}, []
    for (model, build), ref in sorted(figures.items()):
        profile = RECORDED_AS.get(build, build)
        if profile not in TARGETS:
            continue
        row = rows.setdefault(build, {"models": 0, "report": 0, "arena": 0, "outputs": 0, "refused": 0})
        path = os.path.join(DATA, model)
        loaded = load_model(path)
        if loaded.has_compression() and loaded.compression.lut_entries:
            row["refused"] += 1
            continue
        if "status" in ref:
            notes.append(f"{build} {model}: TFLM {ref['status']}")
            continue
        row["models"] += 1
        try:
            ours = emulate(path, profile, report_arena(ref["min_arena_bytes"]))
        except MicroRuntimeError as e:
            notes.append(f"{build} {model}: ours failed: {e}")
            continue
        for key, field in (("report", "report_lines"), ("arena", "min_arena_bytes"),
                           ("outputs", "outputs_fnv1a")):
            if ours[field] == ref[field]:
                row[key] += 1
            else:
                notes.append(f"{build} {model}: {field} differs")
    print("| TFLM build | checked as | models | report lines identical | minimum arena exact | "
          "outputs equal (zeros, lcg1) | COMPRESSION_METADATA models refused |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for build, r in rows.items():
        print(f"| {build} | {RECORDED_AS.get(build, build)} | {r['models']} | {r['report']} | "
              f"{r['arena']} | {r['outputs']} | {r['refused']} |")
    for note in notes:
        print(f"\n* {note}", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
