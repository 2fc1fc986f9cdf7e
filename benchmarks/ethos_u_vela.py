#!/usr/bin/env python3
"""Compile zoo models with Arm's Vela for Ethos-U NPUs and record Vela's own figures.

Writes ``<out>/<accelerator>/<model>_vela.tflite`` for every model and accelerator
configuration, and ``<out>/vela_figures.json``: per configuration and model, Vela's
summary (system configuration, memory mode, "Total SRAM used", DRAM / off-chip flash
used, each in bytes from the summary CSV's KiB) and the version and command line.

Vela is not a dependency of micro-runtime: install it apart, e.g.
``python -m venv /tmp/vela && /tmp/vela/bin/pip install ethos-u-vela`` and pass
``--vela /tmp/vela/bin/vela``. tests/data/ethos_u/README.md says how the committed
files were made.

    python benchmarks/ethos_u_vela.py --vela VELA --out tests/data/ethos_u \\
        --accelerator ethos-u55-128 --accelerator ethos-u65-256 tests/data/person_detect.tflite ...
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

#: summary CSV columns recorded (KiB in the CSV, bytes here)
KIB_COLUMNS = {"sram_memory_used": "sram_used_bytes", "dram_memory_used": "dram_used_bytes",
               "off_chip_flash_memory_used": "off_chip_flash_used_bytes",
               "on_chip_flash_memory_used": "on_chip_flash_used_bytes"}


def vela_version(vela: str) -> str:
    return subprocess.run([vela, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def compile_model(vela: str, model: str, accelerator: str, out_dir: str) -> dict:
    """Run Vela on one model; the _vela.tflite lands in out_dir; returns Vela's figures."""
    os.makedirs(out_dir, exist_ok=True)
    name = os.path.splitext(os.path.basename(model))[0]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [vela, f"--accelerator-config={accelerator}", os.path.abspath(model),
               "--output-dir", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return {"status": "vela_failed", "messages": proc.stdout.splitlines()[-5:]
                    + proc.stderr.splitlines()[-5:]}
        os.replace(os.path.join(tmp, f"{name}_vela.tflite"),
                   os.path.join(out_dir, f"{name}_vela.tflite"))
        summary = glob.glob(os.path.join(tmp, f"{name}_summary_*.csv"))
        row = next(csv.DictReader(open(summary[0]))) if summary else {}
    figures = {"system_config": row.get("system_config"), "memory_mode": row.get("memory_mode"),
               "command": "vela " + " ".join([f"--accelerator-config={accelerator}",
                                             os.path.basename(model)])}
    for column, key in KIB_COLUMNS.items():
        if row.get(column) not in (None, ""):
            figures[key] = round(float(row[column]) * 1024)
    for line in proc.stdout.splitlines():
        if line.startswith("CPU operators") or line.startswith("NPU operators"):
            key, _, value = line.partition("=")
            figures[key.strip().lower().replace(" ", "_")] = int(value.split()[0])
    return figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--vela", default="vela")
    ap.add_argument("--out", required=True)
    ap.add_argument("--accelerator", action="append", required=True)
    a = ap.parse_args(argv)
    path = os.path.join(a.out, "vela_figures.json")
    data = json.load(open(path)) if os.path.isfile(path) else {"models": {}}
    data["vela_version"] = vela_version(a.vela)
    for accelerator in a.accelerator:
        for model in a.models:
            name = os.path.basename(model)
            fig = compile_model(a.vela, model, accelerator, os.path.join(a.out, accelerator))
            data["models"].setdefault(name, {})[accelerator] = fig
            print(accelerator, name, fig.get("status", "ok"), fig.get("sram_used_bytes"), flush=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
