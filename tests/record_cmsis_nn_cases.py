"""Record the Cortex-M oracle's figures for seeded CMSIS-NN single-op cases (a module's
``generate(op, count, seed)``, by default tests/cmsis_nn_op_cases.py) into
tests/data/cmsis_nn_cases/.

    python -m tests.record_cmsis_nn_cases --oracle DIR --op svdf --count 12 --seed 1 \\
        --profiles cortex-m4+cmsis-nn cortex-m3+cmsis-nn

``DIR`` holds ``cortexm_oracle.py``: TFLM (90b983c2) built by its own Makefile for
``TARGET=cortex_m_qemu TARGET_ARCH=<core> OPTIMIZED_KERNEL_DIR=cmsis_nn`` with
arm-none-eabi-gcc 12.2 and a RecordingMicroInterpreter driver run under ``qemu-arm -cpu
cortex-a15`` (see tests/data/tflm_figures_cortexm.json's ``about`` for the build); its
``cases(profile, directory, with_min_arena=True)`` runs every ``<name>.tflite`` with its
``<name>.input<k>.bin`` files (one invoke) and returns status, report lines, output bytes
(hex) and the minimum arena found by binary search, one QEMU process per try.

Writes ``tests/data/cmsis_nn_cases/<op>/<name>.tflite`` / ``.input<k>.bin`` and
``tests/data/cmsis_nn_cases/<op>.json`` = {about, profiles, cases: {name: {profile:
{status, report_lines, outputs_hex, min_arena_bytes}}}}; profiles already in the JSON
and not asked for again are kept.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import numpy as np

import importlib

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cmsis_nn_cases")


def write_cases(op: str, count: int, seed: int, cases_module: str = "tests.cmsis_nn_op_cases",
                cases_dir: str = CASES_DIR) -> str:
    directory = os.path.join(cases_dir, op)
    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        os.remove(os.path.join(directory, old))
    generate = importlib.import_module(cases_module).generate
    for name, model, inputs in generate(op, count, seed):
        with open(os.path.join(directory, name + ".tflite"), "wb") as f:
            f.write(model)
        for k, x in enumerate(inputs):
            with open(os.path.join(directory, f"{name}.input{k}.bin"), "wb") as f:
                f.write(np.ascontiguousarray(x).tobytes())
    return directory


def short_copy(directory: str):
    """The cases under short names in a short temporary directory (the QEMU-run driver
    gets its arguments through semihosting, which truncates long command lines);
    returns (directory, {short name: case name})."""
    short_dir = tempfile.mkdtemp(prefix="c", dir="/tmp")
    names = {}
    models = sorted(f[:-len(".tflite")] for f in os.listdir(directory) if f.endswith(".tflite"))
    for k, name in enumerate(models):
        short = f"c{k:03d}"
        names[short] = name
        shutil.copy(os.path.join(directory, name + ".tflite"), os.path.join(short_dir, short + ".tflite"))
        i = 0
        while os.path.exists(os.path.join(directory, f"{name}.input{i}.bin")):
            shutil.copy(os.path.join(directory, f"{name}.input{i}.bin"),
                        os.path.join(short_dir, f"{short}.input{i}.bin"))
            i += 1
    return short_dir, names


def emulator_min_arena(op: str, name: str, profile: str, cases_dir: str = CASES_DIR):
    """The emulator's minimum arena for a case (a hint the oracle verifies), or None."""
    from tests.cmsis_nn_case_check import run_case
    try:
        _, _, it = run_case(op, name, profile, 1 << 22, cases_dir)
        return it.min_arena_bytes()
    except Exception:        # any failure: no hint, the oracle searches from scratch
        return None


def record_case(oracle, profile: str, short_dir: str, short: str, op: str, name: str,
                cases_dir: str = CASES_DIR, outputs: bool = True) -> dict:
    """One case on one profile: a run in a generous arena, then the exact minimum arena
    (the oracle's binary search, which first tries the emulator's figure as a hint:
    accepted only when that arena works and one byte less does not)."""
    model = os.path.join(short_dir, short + ".tflite")
    inputs = sorted((f for f in os.listdir(short_dir) if f.startswith(short + ".input")),
                    key=lambda f: int(f[len(short) + len(".input"):-len(".bin")]))
    spec = [os.path.join(short_dir, f) for f in inputs] or "zeros"
    arena, r = oracle.generous_run(profile, model, spec)
    entry = dict(status=r["status"], report_lines=r["report_lines"],
                 outputs_hex=r["outputs_hex"], arena_bytes=arena)
    if r["status"] != "ok":
        entry["messages"] = r["messages"][-8:]
        return entry
    if not outputs:
        entry.pop("outputs_hex")
    hint = emulator_min_arena(op, name, profile, cases_dir)
    entry["min_arena_bytes"] = oracle.min_arena(
        profile, model, spec, hints=[hint] if hint else [], known_ok=arena,
        total_hint=getattr(oracle, "_total_bytes", None) and oracle._total_bytes(r["report_lines"])
        or oracle.core._total_bytes(r["report_lines"]))
    return entry


def load_oracle(oracle_dir: str, filename: str = "cortexm_oracle.py"):
    spec = importlib.util.spec_from_file_location(filename[:-3], os.path.join(oracle_dir, filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", required=True, help="directory of cortexm_oracle.py")
    ap.add_argument("--op", required=True)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profiles", nargs="+", default=["cortex-m4+cmsis-nn", "cortex-m3+cmsis-nn"])
    ap.add_argument("--cases-module", default="tests.cmsis_nn_op_cases",
                    help="module whose generate(op, count, seed) makes the cases")
    ap.add_argument("--keep-models", action="store_true",
                    help="record the stored models again instead of generating them")
    a = ap.parse_args(argv)
    oracle = load_oracle(a.oracle)
    directory = (os.path.join(CASES_DIR, a.op) if a.keep_models
                 else write_cases(a.op, a.count, a.seed, a.cases_module))
    path = os.path.join(CASES_DIR, a.op + ".json")
    record = {"cases": {}}
    if os.path.exists(path) and a.keep_models:
        with open(path) as f:
            record = json.load(f)
    short_dir, names = short_copy(directory)
    try:
        for profile in a.profiles:
            for short, name in sorted(names.items()):
                entry = record_case(oracle, profile, short_dir, short, a.op, name)
                record["cases"].setdefault(name, {})[profile] = entry
                print(f"{profile} {name}: {entry['status']} {entry.get('min_arena_bytes', '')}",
                      file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(short_dir, ignore_errors=True)
    profiles = sorted({p for entry in record["cases"].values() for p in entry})
    record["profiles"] = profiles
    record["about"] = (
        f"{a.op}: single-op models from {a.cases_module} (seed {a.seed}, "
        f"{len(record['cases'])} cases), each run once on its stored .input<k>.bin files by TFLM "
        "(tensorflow/tflite-micro 90b983c2, CMSIS-NN 4ab83cc3) built by its own Makefile "
        "with TARGET=cortex_m_qemu TARGET_ARCH=<core> OPTIMIZED_KERNEL_DIR=cmsis_nn, "
        "arm-none-eabi-gcc 12.2 (-Os, short enums, compression off), RecordingMicroInterpreter "
        "driver under qemu-arm 7.2 -cpu cortex-a15; report_lines = PrintAllocations, "
        "outputs_hex = each output tensor's bytes after the invoke, min_arena_bytes = "
        "binary search (1-byte grid, one process per try, success = AllocateTensors and "
        "Invoke OK). Recorded " + datetime.date.today().isoformat()
        + " by tests/record_cmsis_nn_cases.py.")
    with open(path, "w") as f:
        json.dump({"about": record["about"], "profiles": profiles, "cases": record["cases"]},
                  f, indent=1, sort_keys=True)
    print(f"wrote {path}: {len(record['cases'])} cases x {profiles}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
