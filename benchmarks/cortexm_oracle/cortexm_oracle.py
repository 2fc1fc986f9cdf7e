#!/usr/bin/env python3
"""Cortex-M ground truth: TFLM built for a Cortex-M core, run under qemu-arm.

Each profile ('cortex-m4+cmsis-nn', 'cortex-m3', ...) is a driver binary
bin/<profile>/driver.elf linked against libtensorflow-microlite.a built by
TFLM's own Makefile (TARGET=cortex_m_qemu TARGET_ARCH=<core>
[OPTIMIZED_KERNEL_DIR=cmsis_nn]).  The binary runs under
``qemu-arm -cpu cortex-a15`` (Thumb-2 code for the M core runs unchanged on the
A15 model; Debian's M-profile user mode aborts).  See README.md beside this file.

Python use::

    import sys; sys.path.insert(0, 'benchmarks/cortexm_oracle')
    import cortexm_oracle as co
    r = co.run('cortex-m4+cmsis-nn', 'model.tflite', 200000, inputs='lcg1')
    r['status'], r['report_lines'], r['outputs_fnv1a'], r['outputs_hex']
    co.min_arena('cortex-m4+cmsis-nn', 'model.tflite')

CLI::

    cortexm_oracle.py run PROFILE MODEL ARENA [--inputs zeros|lcg1|FILE...]
    cortexm_oracle.py min-arena PROFILE MODEL
    cortexm_oracle.py figures PROFILE MODEL... [--out figures/PROFILE.json]
    cortexm_oracle.py merge            # figures/*.json -> tflm_figures_cortexm.json
    cortexm_oracle.py cases PROFILE DIR [--min-arena] [--arena N] [--out F.json]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import time
from typing import Iterable, Sequence, Union

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_system  # noqa: E402  (system-mode boards: profiles with a 'machine' file)

ORACLE_DIR = os.path.dirname(os.path.abspath(__file__))
#: where the driver binaries live: <BIN_DIR>/<profile>/driver.elf (env CORTEXM_ORACLE_BIN)
BIN_DIR = os.environ.get("CORTEXM_ORACLE_BIN", os.path.join(ORACLE_DIR, "bin"))
#: where figures are written (env CORTEXM_ORACLE_OUT)
OUT_DIR = os.environ.get("CORTEXM_ORACLE_OUT", ORACLE_DIR)
FIGURES_DIR = os.path.join(OUT_DIR, "figures")
MERGED_PATH = os.path.join(OUT_DIR, "tflm_figures_cortexm.json")
QEMU = ["qemu-arm", "-cpu", "cortex-a15"]
REPORT_PREFIX = "[RecordingMicroAllocator]"
MAX_ARENA_BYTES = 64 * 1024 * 1024
DEFAULT_TIMEOUT_S = 120.0

InputSpec = Union[str, Sequence[str]]


class OracleError(RuntimeError):
    """The oracle could not produce an answer (missing binary, bad input spec)."""


def profiles() -> list[str]:
    """Profiles whose driver binary exists."""
    return sorted(p for p in os.listdir(BIN_DIR)
                  if os.path.isfile(os.path.join(BIN_DIR, p, "driver.elf"))) \
        if os.path.isdir(BIN_DIR) else []


def driver_path(profile: str) -> str:
    path = os.path.join(BIN_DIR, profile, "driver.elf")
    if not os.path.isfile(path):
        raise OracleError(f"profile {profile!r} not built (no {path}); built: {profiles()}")
    return path


def _input_args(inputs: InputSpec) -> list[str]:
    if isinstance(inputs, str):
        if inputs in ("zeros", "lcg1"):
            return [inputs]
        paths = [inputs]
    else:
        paths = list(inputs)
    for p in paths:
        if not os.path.isfile(p):
            raise OracleError(f"input file not found: {p}")
    return ["file"] + [os.path.abspath(p) for p in paths]


def run(profile: str, model_path: str, arena_bytes: int,
        inputs: InputSpec = "zeros", want_hex: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """Run one model once, in its own qemu process.

    arena_bytes: arena size in bytes (the arena starts 16-byte aligned).
    inputs: 'zeros', 'lcg1', a path of raw bytes filling all inputs in order,
        or a list of paths, one per input tensor.
    Returns dict(status, report_lines, outputs_fnv1a, outputs_hex, messages,
    returncode, seconds).  status: 'ok', 'alloc_fail', 'invoke_fail',
    'input_error', 'crash', 'timeout', 'error'.
    """
    if not os.path.isfile(model_path):
        raise OracleError(f"model not found: {model_path}")
    args = [os.path.abspath(model_path), str(int(arena_bytes))] + _input_args(inputs)
    if want_hex:
        args.append("--hex")
    driver = driver_path(profile)
    machine = qemu_system.machine_of(os.path.dirname(driver))
    cmd = (qemu_system.system_command(machine, driver, args) if machine
           else QEMU + [driver] + args)
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return dict(status="timeout", report_lines=[], outputs_fnv1a=[],
                    outputs_hex=[], messages=[], returncode=None,
                    seconds=time.time() - t0)
    result = parse_output(proc.stdout, proc.stderr, proc.returncode, want_hex)
    result["seconds"] = round(time.time() - t0, 3)
    return result


def parse_output(stdout: bytes, stderr: bytes, returncode: int | None,
                 want_hex: bool = True) -> dict:
    """The result of one driver run from its output streams.

    ORACLE lines are taken from both streams (a semihosting console may carry the
    guest's stdout and stderr on one stream); report lines and TFLM's messages are
    the other lines.  Returns dict(status, report_lines, outputs_fnv1a, outputs_hex,
    messages, returncode) as run() documents.
    """
    out = stdout.decode("latin-1").replace("\r", "").splitlines()
    err = stderr.decode("latin-1").replace("\r", "").splitlines()
    lines = out + err
    report = [l for l in lines if l.startswith(REPORT_PREFIX)]
    messages = [l for l in lines
                if l and not l.startswith(REPORT_PREFIX) and not l.startswith("ORACLE ")]
    fnv: list[str] = []
    hexes: list[str] = []
    status_line = ""
    for line in lines:
        if line.startswith("ORACLE output "):
            fnv.append(re.search(r"fnv1a=([0-9a-f]{8})", line).group(1))
        elif line.startswith("ORACLE hex "):
            parts = line.split(" ")
            hexes.append(parts[3] if len(parts) > 3 else "")
        elif line.startswith("ORACLE status"):
            status_line = line
        elif line.startswith("ORACLE warning"):
            messages.append(line)
    if "invoke=ok" in status_line:
        status = "ok"
    elif "alloc=fail" in status_line:
        status = "alloc_fail"
    elif "invoke=fail" in status_line:
        status = "invoke_fail"
    elif "error=input" in status_line:
        status = "input_error"
    elif "error=" in status_line:
        status = "error"
    else:
        status = "crash"
        messages.append(f"no status line; returncode {returncode}")
    if status_line and status != "ok":
        messages.append(status_line)
    return dict(status=status, report_lines=report, outputs_fnv1a=fnv,
                outputs_hex=hexes if want_hex else [], messages=messages,
                returncode=returncode)


SEARCH_TIMEOUT_S = 30.0


def _ok(profile: str, model_path: str, arena: int, inputs: InputSpec) -> bool:
    """One try of the arena search: AllocateTensors and Invoke both OK (a crash or
    timeout counts as a failure)."""
    return run(profile, model_path, arena, inputs, want_hex=False,
               timeout_s=SEARCH_TIMEOUT_S)["status"] == "ok"


def _total_bytes(report_lines: Iterable[str]) -> int | None:
    for l in report_lines:
        m = re.search(r"Arena allocation total (\d+) bytes", l)
        if m:
            return int(m.group(1))
    return None


def generous_run(profile: str, model_path: str, inputs: InputSpec = "zeros",
                 start: int = 1 << 20) -> tuple[int, dict]:
    """Smallest power-of-two arena >= start (up to 64 MiB) at which the model runs."""
    arena = start
    while True:
        r = run(profile, model_path, arena, inputs)
        if r["status"] == "ok" or arena >= MAX_ARENA_BYTES or r["status"] not in (
                "alloc_fail", "invoke_fail"):
            return arena, r
        arena *= 2


def min_arena(profile: str, model_path: str, inputs: InputSpec = "zeros",
              hints: Iterable[int] = (), known_ok: int | None = None,
              total_hint: int | None = None) -> int | None:
    """Exact smallest arena (bytes, 1-byte grid) with AllocateTensors and Invoke OK.

    Each try is its own process.  Assumes success is monotonic in the arena size
    (as any binary search does): the answer is a size n that succeeds while n-1
    fails.  hints: candidate answers (e.g. another profile's figure) checked first
    with two runs each.  Returns None when the model does not run at 64 MiB.
    """
    for h in sorted(set(int(x) for x in hints if x)):
        if _ok(profile, model_path, h, inputs):
            if not _ok(profile, model_path, h - 1, inputs):
                return h
            break
    if known_ok is None:
        known_ok, r = generous_run(profile, model_path, inputs)
        if r["status"] != "ok":
            return None
        total_hint = _total_bytes(r["report_lines"])
    hi = known_ok  # succeeds
    lo = 0         # treated as failing (an empty arena cannot hold a model)
    if total_hint:
        # Bracket from the recorded total: lo is a verified failure, hi a success.
        probe = max(total_hint - 64, 1)
        if not _ok(profile, model_path, probe, inputs):
            lo = probe
            step = 256
            while total_hint + step < hi:
                cand = total_hint + step
                if _ok(profile, model_path, cand, inputs):
                    hi = cand
                    break
                lo = cand
                step *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _ok(profile, model_path, mid, inputs):
            hi = mid
        else:
            lo = mid
    return hi


def _figure_hints(model_name: str, exclude_profile: str) -> list[int]:
    hints = []
    for path in glob.glob(os.path.join(FIGURES_DIR, "*.json")):
        try:
            data = json.load(open(path))
        except (OSError, ValueError):
            continue
        for prof, entry in data.get("models", {}).get(model_name, {}).items():
            if prof != exclude_profile and entry.get("min_arena_bytes"):
                hints.append(entry["min_arena_bytes"])
    return hints


def model_figures(profile: str, model_path: str, name: str | None = None) -> dict:
    """Figures of one model for one profile, in the shared reference's format."""
    name = name or os.path.basename(model_path)
    arena, r0 = generous_run(profile, model_path, "zeros")
    if r0["status"] != "ok":
        return dict(status=r0["status"], messages=r0["messages"][-8:],
                    report_lines=r0["report_lines"])
    r1 = run(profile, model_path, arena, "lcg1", want_hex=False)
    m = min_arena(profile, model_path, "zeros", hints=_figure_hints(name, profile),
                  known_ok=arena, total_hint=_total_bytes(r0["report_lines"]))
    entry = dict(min_arena_bytes=m,
                 outputs_fnv1a=dict(lcg1=r1["outputs_fnv1a"], zeros=r0["outputs_fnv1a"]),
                 report_lines=r0["report_lines"])
    if r1["status"] != "ok":
        entry["lcg1_status"] = r1["status"]
    return entry


COMPRESSION_NOTE = (
    "model carries TFLM compression metadata, which needs USE_TFLM_COMPRESSION; the "
    "cortex_m_qemu build has it off, so TFLM ignores the metadata and reads the "
    "compressed (LUT index) buffers as plain weights: it runs, but the figures are not "
    "those of the compressed model; kept under observed_without_compression")


def _mark_compression(name: str, entry: dict) -> dict:
    """Entries of *_lut_metadata* models: not valid figures without compression."""
    if "_lut_metadata" not in name or entry.get("status") == "needs_USE_TFLM_COMPRESSION":
        return entry
    return dict(status="needs_USE_TFLM_COMPRESSION", note=COMPRESSION_NOTE,
                observed_without_compression=entry)


def _write_json(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def figures(profile: str, model_paths: Sequence[str], out: str | None = None,
            workers: int = 1, names: Sequence[str] | None = None) -> dict:
    """Figures for many models on one profile; written to figures/<profile>.json
    after every model (so a partial file is usable)."""
    out = out or os.path.join(FIGURES_DIR, f"{profile}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    names = list(names) if names else [os.path.basename(p) for p in model_paths]
    data = {"about": about_text([profile]), "models": {}}
    if os.path.isfile(out):
        data["models"] = json.load(open(out)).get("models", {})
    todo = [(n, p) for n, p in zip(names, model_paths)
            if profile not in data["models"].get(n, {})]

    def one(item):
        n, p = item
        t0 = time.time()
        e = model_figures(profile, p, n)
        return n, e, time.time() - t0

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        for n, e, dt in ex.map(one, todo):
            e = _mark_compression(n, e)
            data["models"].setdefault(n, {})[profile] = e
            _write_json(out, data)
            print(f"{profile} {n}: {e.get('status', 'ok')} min_arena={e.get('min_arena_bytes')}"
                  f" ({dt:.1f}s)", flush=True)
    return data


def _read_about_facts() -> dict:
    path = os.path.join(ORACLE_DIR, "about_facts.json")
    return json.load(open(path)) if os.path.isfile(path) else {}


def about_text(profile_list: Sequence[str]) -> str:
    facts = _read_about_facts()
    return facts.get("about", "see benchmarks/cortexm_oracle/README.md") + \
        " Profiles in this file: " + ", ".join(profile_list) + "."


def merge(out: str = MERGED_PATH) -> dict:
    """Merge figures/*.json into one file with an `about` for all profiles."""
    models: dict = {}
    profs = []
    for path in sorted(glob.glob(os.path.join(FIGURES_DIR, "*.json"))):
        d = json.load(open(path))
        for name, per in d.get("models", {}).items():
            for prof, e in per.items():
                models.setdefault(name, {})[prof] = _mark_compression(name, e)
                if prof not in profs:
                    profs.append(prof)
    data = {"about": about_text(profs), "models": models}
    _write_json(out, data)
    return data


def cases(profile: str, directory: str, with_min_arena: bool = False,
          arena_bytes: int | None = None, out: str | None = None) -> dict:
    """Run every <name>.tflite of a directory with its <name>.input<k>.bin files.

    Returns {name: {status, [min_arena_bytes], report_lines, outputs_hex}}.
    The run uses arena_bytes if given, else the smallest power of two >= 1 MiB
    that works.  Without input files the model gets zeros.
    """
    result = {}
    for model in sorted(glob.glob(os.path.join(directory, "*.tflite"))):
        name = os.path.basename(model)[: -len(".tflite")]
        files = glob.glob(os.path.join(directory, f"{name}.input*.bin"))
        files.sort(key=lambda f: int(re.search(r"\.input(\d+)\.bin$", f).group(1)))
        inputs: InputSpec = files if files else "zeros"
        if arena_bytes:
            r = run(profile, model, arena_bytes, inputs)
            arena = arena_bytes
        else:
            arena, r = generous_run(profile, model, inputs)
        entry = dict(status=r["status"], report_lines=r["report_lines"],
                     outputs_hex=r["outputs_hex"], arena_bytes=arena)
        if r["status"] != "ok":
            entry["messages"] = r["messages"][-8:]
        elif with_min_arena:
            entry["min_arena_bytes"] = min_arena(profile, model, inputs, known_ok=arena,
                                                 total_hint=_total_bytes(r["report_lines"]))
        result[name] = entry
        print(f"{profile} {name}: {r['status']}", file=sys.stderr, flush=True)
    if out:
        _write_json(out, result)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("profile"); p.add_argument("model"); p.add_argument("arena", type=int)
    p.add_argument("--inputs", nargs="+", default=["zeros"])
    p = sub.add_parser("min-arena")
    p.add_argument("profile"); p.add_argument("model")
    p.add_argument("--inputs", nargs="+", default=["zeros"])
    p = sub.add_parser("figures")
    p.add_argument("profile"); p.add_argument("models", nargs="+")
    p.add_argument("--out"); p.add_argument("--workers", type=int, default=1)
    p.add_argument("--names-relative-to", help="name models by path relative to this dir")
    sub.add_parser("merge")
    p = sub.add_parser("cases")
    p.add_argument("profile"); p.add_argument("directory")
    p.add_argument("--min-arena", action="store_true")
    p.add_argument("--arena", type=int); p.add_argument("--out")
    sub.add_parser("profiles")
    a = ap.parse_args(argv)

    def spec(lst):
        return lst[0] if len(lst) == 1 else lst

    if a.cmd == "run":
        print(json.dumps(run(a.profile, a.model, a.arena, spec(a.inputs)), indent=1))
    elif a.cmd == "min-arena":
        print(min_arena(a.profile, a.model, spec(a.inputs)))
    elif a.cmd == "figures":
        names = None
        if a.names_relative_to:
            names = [os.path.relpath(m, a.names_relative_to) for m in a.models]
        figures(a.profile, a.models, a.out, a.workers, names)
    elif a.cmd == "merge":
        merge()
    elif a.cmd == "cases":
        res = cases(a.profile, a.directory, a.min_arena, a.arena, a.out)
        if not a.out:
            print(json.dumps(res, indent=1))
    elif a.cmd == "profiles":
        print("\n".join(profiles()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
