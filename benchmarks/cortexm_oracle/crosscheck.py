#!/usr/bin/env python3
"""Check a driver binary against recorded figures of the same build, model by model:
the report lines (generous arena, zeros), the output hashes on zeros and lcg1, and the
minimum arena (it runs at the recorded figure and fails one byte below). Used to run
the same TFLM library two ways: on QEMU's Cortex-A15 in user mode (how the figures
of tflm_figures_cortexm_builds.json were made) and on an M-profile board in system
mode (see qemu_system.py).

    crosscheck.py BINARY_PROFILE BUILD FIGURES.json MODEL... [--out RESULT.json]

BINARY_PROFILE is a directory under $CORTEXM_ORACLE_BIN; BUILD the recorded build name.
Models are paths; their names in the figures file are relative to tests/data.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cortexm_oracle as co  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "tests", "data")


def check_model(profile: str, ref: dict, path: str) -> dict:
    """Differences between one model's runs of ``profile`` and its recorded figures
    (an empty ``differences`` list when every figure agrees)."""
    m = ref["min_arena_bytes"]
    generous = 1 << 20
    while generous < m:
        generous *= 2
    diffs = []
    z = co.run(profile, path, generous, "zeros", want_hex=False)
    l = co.run(profile, path, generous, "lcg1", want_hex=False)
    if z["status"] != "ok":
        diffs.append(f"zeros run: {z['status']}")
    if z["report_lines"] != ref["report_lines"]:
        diffs.append("report_lines")
    if z["outputs_fnv1a"] != ref["outputs_fnv1a"]["zeros"]:
        diffs.append("outputs zeros")
    if l["outputs_fnv1a"] != ref["outputs_fnv1a"]["lcg1"]:
        diffs.append("outputs lcg1")
    at_min = co._ok(profile, path, m, "zeros")
    below = co._ok(profile, path, m - 1, "zeros")
    if not at_min or below:
        diffs.append(f"min_arena (runs at {m}: {at_min}, at {m - 1}: {below})")
    return {"differences": diffs, "seconds": round(z["seconds"] + l["seconds"], 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile"); ap.add_argument("build"); ap.add_argument("figures")
    ap.add_argument("models", nargs="+"); ap.add_argument("--out")
    a = ap.parse_args(argv)
    figures = json.load(open(a.figures))["models"]
    result = json.load(open(a.out)) if a.out and os.path.isfile(a.out) else {}
    for path in a.models:
        name = os.path.relpath(path, DATA)
        ref = figures.get(name, {}).get(a.build)
        if ref is None or "status" in ref or name in result:
            continue
        result[name] = check_model(a.profile, ref, path)
        print(a.profile, name, result[name]["differences"] or "same", flush=True)
        if a.out:
            co._write_json(a.out, result)
    same = sum(1 for r in result.values() if not r["differences"])
    print(f"{a.profile} vs recorded {a.build}: {same} of {len(result)} models the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
