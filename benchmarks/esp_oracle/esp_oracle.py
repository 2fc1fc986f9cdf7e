#!/usr/bin/env python3
"""ESP32-family and RISC-V ground truth: TFLM builds run under qemu-system-riscv32.

Each build ('esp32-c3', 'esp32-c3+ansi', 'esp32-c6', 'riscv32', and the stand-ins
'esp32-s3', 'esp32-p4') is a driver binary ``$ESP_ORACLE_BIN/<build>/driver.elf``: the
Cortex-M oracle's driver (benchmarks/cortexm_oracle/driver.cc) linked against that build's
libraries and picolibc's RISC-V semihosting start-up, run bare-metal on QEMU's ``virt``
board (``qemu-system-riscv32 -M virt -bios none``).  argv comes through semihosting
(SYS_GET_CMDLINE), the model file is read through semihosting file I/O, and the guest's
stdout and stderr both reach QEMU's stderr.  How each build was made: README.md beside
this file and the ``about`` of tests/data/reference/tflm_figures_esp_builds.json.

The verbs, the arena search and the figures format are the Cortex-M runner's
(benchmarks/cortexm_oracle/cortexm_oracle.py): this module loads its own instance of that
module and gives it this family's binaries, emulator command, output paths and ``about``.

Python use::

    import sys; sys.path.insert(0, 'benchmarks/esp_oracle')
    import esp_oracle as eo
    r = eo.run('esp32-c3', 'model.tflite', 200000, inputs='lcg1')
    eo.min_arena('esp32-c3', 'model.tflite')

CLI (as cortexm_oracle.py)::

    esp_oracle.py run BUILD MODEL ARENA [--inputs zeros|lcg1|FILE...]
    esp_oracle.py min-arena BUILD MODEL
    esp_oracle.py figures BUILD MODEL... [--names-relative-to tests/data] [--workers 2]
    esp_oracle.py merge      # figures/*.json -> tflm_figures_esp_builds.json (+ per-build about)
    esp_oracle.py cases BUILD DIR [--min-arena] [--arena N] [--out F.json]
    esp_oracle.py verify BUILD [--figures F.json] [--workers 2]   # n runs, n-1 refused
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from typing import Iterable, List, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
_CORE_PATH = os.path.join(os.path.dirname(HERE), "cortexm_oracle", "cortexm_oracle.py")


def _load_core():
    """A separate instance of the Cortex-M runner (its module globals are this family's)."""
    spec = importlib.util.spec_from_file_location("esp_oracle_core", _CORE_PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


core = _load_core()

#: where the driver binaries live: <BIN_DIR>/<build>/driver.elf (env ESP_ORACLE_BIN)
BIN_DIR = os.environ.get("ESP_ORACLE_BIN", os.path.join(HERE, "bin"))
#: where figures are written (env ESP_ORACLE_OUT)
OUT_DIR = os.environ.get("ESP_ORACLE_OUT", HERE)
FIGURES_DIR = os.path.join(OUT_DIR, "figures")
MERGED_PATH = os.path.join(OUT_DIR, "tflm_figures_esp_builds.json")
#: the recorded Cortex-M figures: their minimum arenas are checked first as candidates
CORTEXM_FIGURES = os.path.join(REPO, "tests", "data", "reference",
                               "tflm_figures_cortexm_builds.json")
QEMU_SYSTEM = "qemu-system-riscv32"
#: guest RAM (the drivers are linked for 0x80000000..0xC0000000 on the virt board)
QEMU_MEMORY = "1G"

core.ORACLE_DIR = HERE
core.BIN_DIR = BIN_DIR
core.OUT_DIR = OUT_DIR
core.FIGURES_DIR = FIGURES_DIR
core.MERGED_PATH = MERGED_PATH
core.QEMU = [QEMU_SYSTEM]
core.COMPRESSION_NOTE = (
    "model carries TFLM compression metadata, which needs USE_TFLM_COMPRESSION; this "
    "build has it off (neither esp-tflite-micro's CMakeLists.txt nor TFLM's Makefile for "
    "riscv32_generic defines it), so TFLM ignores the metadata and reads the compressed "
    "(LUT index) buffers as plain weights: it runs, but the figures are not those of the "
    "compressed model; kept under observed_without_compression")


def _escape(arg: str) -> str:
    # QEMU's option syntax: a literal comma is written twice
    return arg.replace(",", ",,")


def qemu_command(driver: str, args: Sequence[str]) -> List[str]:
    """The qemu-system-riscv32 command running ``driver`` with ``args`` as argv[1:]
    (picolibc's semihosting start-up puts its own argv[0] before them).  No display,
    monitor or serial port: all I/O is semihosting."""
    if any(" " in a for a in args):
        # SYS_GET_CMDLINE hands the guest one space-separated string
        raise core.OracleError(f"arguments with spaces cannot pass semihosting: {args}")
    semi = ",".join(["enable=on", "target=native"] + [f"arg={_escape(a)}" for a in args])
    return [QEMU_SYSTEM, "-M", "virt", "-m", QEMU_MEMORY, "-bios", "none",
            "-display", "none", "-monitor", "none", "-serial", "none",
            "-semihosting-config", semi, "-kernel", driver]


def run(profile: str, model_path: str, arena_bytes: int,
        inputs: core.InputSpec = "zeros", want_hex: bool = True,
        timeout_s: float = core.DEFAULT_TIMEOUT_S) -> dict:
    """Run one model once, in its own QEMU process (see cortexm_oracle.run for the
    arguments and the result)."""
    if not os.path.isfile(model_path):
        raise core.OracleError(f"model not found: {model_path}")
    args = [os.path.abspath(model_path), str(int(arena_bytes))] + core._input_args(inputs)
    if want_hex:
        args.append("--hex")
    cmd = qemu_command(core.driver_path(profile), args)
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return dict(status="timeout", report_lines=[], outputs_fnv1a=[],
                    outputs_hex=[], messages=[], returncode=None,
                    seconds=time.time() - t0)
    result = core.parse_output(proc.stdout, proc.stderr, proc.returncode, want_hex)
    result["seconds"] = round(time.time() - t0, 3)
    return result


_cortexm_hints_cache: dict = {}


def _cortexm_hints(model_name: str) -> List[int]:
    """Minimum arenas the Cortex-M builds recorded for this model (candidates only: each
    is verified by two runs, n succeeds and n-1 fails)."""
    if not _cortexm_hints_cache:
        try:
            data = json.load(open(CORTEXM_FIGURES))
        except (OSError, ValueError):
            data = {"models": {}}
        for name, per in data.get("models", {}).items():
            _cortexm_hints_cache[name] = sorted({e["min_arena_bytes"] for e in per.values()
                                                 if e.get("min_arena_bytes")})
        _cortexm_hints_cache.setdefault("", [])
    return list(_cortexm_hints_cache.get(model_name, []))


_core_figure_hints = core._figure_hints


def _figure_hints(model_name: str, exclude_profile: str) -> List[int]:
    return _core_figure_hints(model_name, exclude_profile) + _cortexm_hints(model_name)


def _read_about_facts() -> dict:
    path = os.path.join(HERE, "about_facts.json")
    return json.load(open(path)) if os.path.isfile(path) else {}


def about_text(profile_list: Sequence[str]) -> str:
    facts = _read_about_facts()
    return facts.get("about", "see benchmarks/esp_oracle/README.md") + \
        " Builds in this file: " + ", ".join(profile_list) + "."


#: builds whose compute routines are stubs: arenas and report lines only, no outputs
STAND_INS = ("esp32-s3", "esp32-p4")
_core_model_figures = core.model_figures


def _model_figures(profile: str, model_path: str, name: str | None = None) -> dict:
    entry = _core_model_figures(profile, model_path, name)
    if profile in STAND_INS:
        entry.pop("outputs_fnv1a", None)
        entry.pop("lcg1_status", None)
    return entry


core.run = run
core._figure_hints = _figure_hints
core.about_text = about_text
core.model_figures = _model_figures


def merge(out: str = MERGED_PATH) -> dict:
    """figures/*.json -> one file: ``about`` (common to all builds), ``builds`` (each
    build's own about: sources, flags, stubs; 'complete' says whether every model listed
    in the Cortex-M figures has an entry) and ``models``."""
    data = core.merge(out)
    facts = _read_about_facts().get("builds", {})
    wanted = set(json.load(open(CORTEXM_FIGURES))["models"]) if os.path.isfile(
        CORTEXM_FIGURES) else set()
    builds = {}
    for prof in sorted({p for per in data["models"].values() for p in per}):
        have = {m for m, per in data["models"].items() if prof in per}
        builds[prof] = dict(about=facts.get(prof, "(no description)"),
                            models=len(have), complete=wanted <= have)
    data["builds"] = builds
    core._write_json(out, data)
    return data


def verify(profile: str, figures_path: str, data_dir: str, workers: int = 1) -> list:
    """Re-check every recorded minimum arena n of one build: n must run (status ok) and
    n-1 must be refused by TFLM itself (alloc_fail / invoke_fail, not a timeout or a
    crash, which the search also counts as failures).  Returns the problems found."""
    import concurrent.futures
    models = json.load(open(figures_path))["models"]
    todo = [(name, per[profile]) for name, per in sorted(models.items()) if profile in per]

    def one(item):
        name, entry = item
        entry = entry.get("observed_without_compression", entry)
        n = entry.get("min_arena_bytes")
        if not n:
            return name, None
        path = os.path.join(data_dir, name)
        at = run(profile, path, n, "zeros", want_hex=False)["status"]
        below = run(profile, path, n - 1, "zeros", want_hex=False)["status"]
        if at != "ok" or below not in ("alloc_fail", "invoke_fail"):
            return name, f"{name}: at {n} {at}, at {n - 1} {below}"
        return name, None

    problems = []
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        for name, problem in ex.map(one, todo):
            print(f"{profile} {name}: {problem or 'verified'}", flush=True)
            if problem:
                problems.append(problem)
    print(f"{profile}: {len(todo)} entries, {len(problems)} problems", flush=True)
    return problems


profiles = core.profiles
min_arena = core.min_arena
generous_run = core.generous_run
model_figures = core.model_figures
figures = core.figures
cases = core.cases


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        merge()
        return 0
    if argv[:1] == ["verify"]:
        import argparse
        ap = argparse.ArgumentParser(prog="esp_oracle.py verify")
        ap.add_argument("profile")
        ap.add_argument("--figures", help="figures file (default figures/<profile>.json)")
        ap.add_argument("--data", default=os.path.join(REPO, "tests", "data"))
        ap.add_argument("--workers", type=int, default=1)
        a = ap.parse_args(argv[1:])
        path = a.figures or os.path.join(FIGURES_DIR, f"{a.profile}.json")
        return 1 if verify(a.profile, path, a.data, a.workers) else 0
    return core.main(argv)


if __name__ == "__main__":
    sys.exit(main())
