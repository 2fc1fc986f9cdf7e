"""fit_check: micro-runtime's predictions of what TFLM costs outside the arena, against
linked and measured firmware (tests/data/reference/tflm_fit_firmware.json).

For every model x recorded build: TFLM's flash (text + rodata + data + exidx kept from
libtensorflow-microlite.a), the RAM outside the arena a firmware declares
(MicroInterpreter + MicroMutableOpResolver<N> + TFLM .data/.bss), and the stack
high-water mark of AllocateTensors + Invoke, predicted from the build's tables
(micro_runtime/data/fit) vs the linked image / the QEMU measurement. Goals: flash
within 2 %, static RAM exact, stack within 5 %. Models the stack tables were derived
from are marked; the others are held out.

    python benchmarks/fit_check.py [--build B] [--all]   (--all: every model's row)
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from micro_runtime.fit_tables import load_table, model_node_keys  # noqa: E402
from micro_runtime.model import load_model  # noqa: E402

DATA = os.path.join(os.path.dirname(HERE), "tests", "data")

FIGURES = os.path.join(os.path.dirname(HERE), "tests", "data", "reference", "tflm_fit_firmware.json")


def compare(build: str, data: dict) -> list:
    """One row per model: predicted and measured figures."""
    table = load_table(build)
    if table is None:
        return []
    derived = set((table.stack or {}).get("derived_from", []))
    rows = []
    for model, rec in sorted(data["models"].items()):
        if "error" in rec:
            continue
        pred = table.predict(rec["ops"], model_node_keys(load_model(os.path.join(DATA, model))))
        static_pred = pred.interpreter_bytes + pred.resolver_bytes + pred.tflm_static_ram_bytes
        static_meas = rec["interpreter_bytes"] + rec["resolver_bytes"] + rec["tflm_static_ram_bytes"]
        rows.append({
            "model": model, "held_out": model not in derived, "ops": len(rec["ops"]),
            "flash_pred": pred.tflm_flash_bytes, "flash_meas": rec["tflm_flash_bytes"],
            "static_pred": static_pred, "static_meas": static_meas,
            "lib_pred": pred.runtime_library_flash_bytes, "lib_meas": rec.get("runtime_library_flash_bytes"),
            "stack_pred": pred.stack_bytes, "stack_meas": rec.get("stack_bytes"),
        })
    return rows


def pct(pred, meas):
    if pred is None or meas is None or meas == 0:
        return None
    return 100.0 * (pred - meas) / meas


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", action="append", help="only these builds")
    p.add_argument("--all", action="store_true", help="print every model's row")
    args = p.parse_args(argv)
    figures = json.load(open(FIGURES))
    ok = True
    for build, data in sorted(figures["builds"].items()):
        if args.build and build not in args.build:
            continue
        rows = compare(build, data)
        if not rows:
            print(f"{build}: no tables in micro_runtime/data/fit")
            continue
        print(f"\n== {build} ({data.get('build_type', 'default')} build type): {len(rows)} models")
        if args.all:
            print(f"{'model':<48}{'ops':>4}{'flash pred':>12}{'linked':>9}{'err%':>7}"
                  f"{'static':>8}{'linked':>8}{'stack pred':>12}{'meas':>7}{'err%':>7}")
        flash_err = [abs(pct(r["flash_pred"], r["flash_meas"])) for r in rows]
        static_exact = sum(r["static_pred"] == r["static_meas"] for r in rows)
        stack_rows = [r for r in rows if r["stack_pred"] is not None and r["stack_meas"] is not None]
        for r in rows:
            if args.all:
                fe = pct(r["flash_pred"], r["flash_meas"])
                se = pct(r["stack_pred"], r["stack_meas"])
                print(f"{r['model'][-47:]:<48}{r['ops']:>4}{r['flash_pred']:>12}{r['flash_meas']:>9}"
                      f"{fe:>7.2f}{r['static_pred']:>8}{r['static_meas']:>8}"
                      f"{str(r['stack_pred']):>12}{str(r['stack_meas']):>7}"
                      f"{'' if se is None else f'{se:.1f}':>7}" + ("" if r["held_out"] else "  (derivation)"))
        print(f"TFLM flash: max |error| {max(flash_err):.3f} % (goal 2 %), exact for "
              f"{sum(e == 0 for e in flash_err)} of {len(rows)}; range "
              f"{min(r['flash_meas'] for r in rows)}..{max(r['flash_meas'] for r in rows)} bytes")
        print(f"RAM outside the arena (MicroInterpreter + resolver + TFLM .data/.bss): exact for "
              f"{static_exact} of {len(rows)}")
        lib_rows = [r for r in rows if r["lib_meas"] is not None]
        if lib_rows:
            print(f"C library / runtime code added by the operators: exact for "
                  f"{sum(r['lib_pred'] == r['lib_meas'] for r in lib_rows)} of {len(lib_rows)}")
        for label, subset in (("held out", [r for r in stack_rows if r["held_out"]]),
                              ("derivation", [r for r in stack_rows if not r["held_out"]])):
            if not subset:
                continue
            errs = [pct(r["stack_pred"], r["stack_meas"]) for r in subset]
            # the worst model (among equals, the deepest stack)
            worst = max(subset, key=lambda r: (abs(pct(r["stack_pred"], r["stack_meas"])), r["stack_meas"]))
            print(f"stack, {label} ({len(subset)} models): max |error| {max(abs(e) for e in errs):.1f} % "
                  f"(goal 5 %), exact for {sum(e == 0 for e in errs)}, within 5 %: "
                  f"{sum(abs(e) <= 5 for e in errs)}, under-predicted: {sum(e < 0 for e in errs)}; "
                  f"range {min(r['stack_meas'] for r in subset)}..{max(r['stack_meas'] for r in subset)} "
                  f"bytes; worst {worst['model']} {worst['stack_pred']} vs {worst['stack_meas']}")
        missing = len(rows) - len(stack_rows)
        if missing:
            print(f"stack not predicted for {missing} models (operators without stack figures)")
        stack_ok = all(abs(pct(r["stack_pred"], r["stack_meas"])) <= 5 for r in stack_rows)
        met = max(flash_err) <= 2 and static_exact == len(rows) and stack_ok
        print(f"goals (flash within 2 %, static RAM exact, stack within 5 %): "
              f"{'met' if met else 'NOT met'}")
        ok = ok and met
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
