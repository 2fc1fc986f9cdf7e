"""Minimum arena of every zoo model on every Cortex-M profile, beside mcu32 and the figures
TFLM's own Cortex-M builds recorded (tests/data/reference/tflm_figures_cortexm*.json).

    python benchmarks/cortexm_sizes.py               # markdown table for the README
    python benchmarks/cortexm_sizes.py --check       # also: our figure vs TFLM's, per cell

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
from tests.tflm_figures import DATA, load_figures  # noqa: E402

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
    args = ap.parse_args(argv)
    figures, _ = load_figures()
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


if __name__ == "__main__":
    sys.exit(main())
