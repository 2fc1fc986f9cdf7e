"""micro-runtime's mcu32 profile against a real 32-bit TFLM build, model by model.

    python benchmarks/mcu32_check.py DRIVER MODEL_OR_DIR [MODEL_OR_DIR ...]
        [--json-out FIGURES.json] [--base DIR] [--jobs N] [--no-hint] [--timeout S] [--cli]

DRIVER is a 32-bit TFLM program with the interface ``DRIVER MODEL.tflite ARENA_BYTES``:
it runs the model with a RecordingMicroAllocator on an arena of exactly ARENA_BYTES at a
16-byte-aligned address (AllocateTensors, zero inputs, Invoke), prints the allocator's
PrintAllocations report (the "[RecordingMicroAllocator] ..." lines, on stdout or stderr)
and a last line ``STATUS OK`` or ``STATUS FAIL <stage>``. A crash or a time-out counts as a
failure. (How the build behind tests/data/tflm_examples/tflm_figures_32bit.json was made:
that file's "about" field.)

For each model (directories are searched recursively for ``*.tflite``) it finds TFLM's exact
minimum arena by binary search (bracketed around our figure first, unless ``--no-hint``;
success is taken to be monotone in the arena size), each try in a fresh process, takes
TFLM's report at that
arena, and compares with micro-runtime's ``--target mcu32`` figures (``measure_arena``, what
``micro-runtime size --target mcu32 --json`` prints, and the report of
``MicroInterpreter(..., target="mcu32", recording=True)`` after allocate_tensors + invoke on
zeros at the same arena). Each model prints one line: ``identical``, ``lines differ``,
``min arena differs`` (or both), or ``tflm fails`` when the build cannot run it at all (an op
it lacks). Exit code 0 when every model TFLM runs is identical.

``--json-out`` writes TFLM's figures, {relative path: {"min_arena_bytes", "report"}}, keyed
relative to ``--base`` (default: the common parent of the arguments).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PREFIX = "[RecordingMicroAllocator]"
BIG_ARENA = 64 << 20


def find_models(args: List[str]) -> List[str]:
    out = []
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                out.extend(os.path.join(root, n) for n in names if n.endswith(".tflite"))
        else:
            out.append(a)
    return sorted(set(os.path.abspath(p) for p in out))


class Tflm:
    """Runs the 32-bit driver; every call is its own process."""

    def __init__(self, driver: str, timeout: float = 120.0):
        self.driver = os.path.abspath(driver)
        self.timeout = timeout
        self.runs = 0

    def run(self, model: str, arena: int) -> Tuple[bool, List[str], str]:
        self.runs += 1
        try:
            p = subprocess.run([self.driver, model, str(arena)], capture_output=True, text=True,
                               timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return False, [], "timeout"
        text = p.stdout + "\n" + p.stderr
        lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(PREFIX)]
        status = [ln for ln in p.stdout.splitlines() if ln.startswith("STATUS ")]
        ok = p.returncode == 0 and bool(status) and status[-1] == "STATUS OK"
        why = status[-1] if status else f"exit {p.returncode} (signal/crash)"
        if not ok and not status:
            tail = [ln for ln in p.stderr.splitlines() if ln.strip()][-1:]
            why += (": " + tail[0][:200]) if tail else ""
        return ok, lines, why

    def min_arena(self, model: str, hint: Optional[int] = None) -> Tuple[Optional[int], str]:
        """Exact smallest arena that runs (assumes success is monotone in the size)."""
        ok, _, why = self.run(model, BIG_ARENA)
        if not ok:
            return None, why
        lo, hi = 0, BIG_ARENA          # lo fails (or is 0), hi succeeds
        if hint and 0 < hint < BIG_ARENA:
            # bracket the answer around the hint with steps growing from 64 bytes
            step = 64
            if self.run(model, hint)[0]:
                hi = hint
                while True:
                    probe = hi - step
                    if probe <= 0:
                        break
                    if self.run(model, probe)[0]:
                        hi = probe
                        step *= 4
                    else:
                        lo = probe
                        break
            else:
                lo = hint
                while True:
                    probe = lo + step
                    if probe >= hi:
                        break
                    if self.run(model, probe)[0]:
                        hi = probe
                        break
                    lo = probe
                    step *= 4
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.run(model, mid)[0]:
                hi = mid
            else:
                lo = mid
        return hi, ""


USE_CLI = False


def ours_min(model: str) -> int:
    """``micro-runtime size MODEL --target mcu32 --json`` -> min_arena_bytes (in-process by
    default: the same ``measure_arena`` call; ``--cli`` runs the command itself)."""
    if USE_CLI:
        p = subprocess.run([sys.executable, "-m", "micro_runtime", "size", model, "--target", "mcu32",
                            "--json"], capture_output=True, text=True, check=True,
                           cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return int(json.loads(p.stdout)["min_arena_bytes"])
    from micro_runtime.tools.sizing import measure_arena
    return measure_arena(model, "mcu32").min_arena_bytes


def ours_report(model: str, arena: int) -> Tuple[List[str], str]:
    """micro-runtime mcu32's report at ``arena``: MicroInterpreter(..., target="mcu32",
    recording=True), allocate_tensors, zero inputs, invoke, print_allocations."""
    import numpy as np
    from micro_runtime import MicroInterpreter
    try:
        it = MicroInterpreter(model, arena_size=arena, target="mcu32", recording=True,
                              error_reporter=lambda m: None)
        it.allocate_tensors()
        for i in range(it.inputs_size):
            x = it.input(i)
            it.set_input(np.zeros(x.shape, x.dtype), i)
        it.invoke()
        buf = io.StringIO()
        it.print_allocations(buf)
        return [ln.strip() for ln in buf.getvalue().splitlines() if ln.strip()], ""
    except Exception as e:  # noqa: BLE001 - reported per model
        return [], f"{type(e).__name__}: {e}"


def check_one(tflm: Tflm, model: str, use_hint: bool = True) -> Dict:
    try:
        our_min, err = ours_min(model), ""
    except Exception as e:  # noqa: BLE001 - reported per model
        our_min, err = None, f"size: {type(e).__name__}: {e}"
    t_min, why = tflm.min_arena(model, hint=our_min if use_hint else None)
    row = {"model": model, "tflm_min": t_min, "ours_min": our_min, "tflm_report": [], "ours_report": []}
    if t_min is None:
        row.update(status="tflm fails", detail=why)
        return row
    ok, t_lines, why = tflm.run(model, t_min)
    row["tflm_report"] = t_lines
    o_lines, err2 = ours_report(model, t_min)
    if err2 and our_min is not None and our_min > t_min:
        # ours needs a larger arena: compare both reports at ours (they do not depend on the size)
        _, t_lines, _ = tflm.run(model, our_min)
        o_lines, err2 = ours_report(model, our_min)
    row["ours_report"] = o_lines
    problems, detail = [], []
    if o_lines != t_lines:
        problems.append("lines differ")
        if err2:
            detail.append(f"    ours failed at TFLM's minimum arena: {err2}")
        else:
            n = max(len(t_lines), len(o_lines))
            for a, b in zip(t_lines + [""] * (n - len(t_lines)), o_lines + [""] * (n - len(o_lines))):
                if a != b:
                    detail.append(f"    tflm: {a}\n    ours: {b}")
    if our_min != t_min:
        problems.append("min arena differs")
        detail.append(f"    min arena tflm {t_min} ours {our_min} (ours - tflm = "
                      f"{(our_min - t_min) if our_min is not None else '?'}){' ' + err if err else ''}")
    row.update(status=" + ".join(problems) if problems else "identical", detail="\n".join(detail))
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("driver", help="32-bit TFLM driver: DRIVER MODEL.tflite ARENA_BYTES")
    ap.add_argument("models", nargs="+", help=".tflite files or directories")
    ap.add_argument("--json-out", help="write TFLM's figures here")
    ap.add_argument("--base", help="key models in --json-out relative to this directory")
    ap.add_argument("--jobs", type=int, default=1, help="models checked in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per TFLM run")
    ap.add_argument("--no-hint", action="store_true",
                    help="plain binary search over [0, 64 MiB] instead of starting at our figure")
    ap.add_argument("--cli", action="store_true",
                    help="take our min arena from the micro-runtime CLI (a process per model)")
    args = ap.parse_args(argv)
    global USE_CLI
    USE_CLI = args.cli

    models = find_models(args.models)
    base = os.path.abspath(args.base) if args.base else os.path.commonpath(
        [os.path.dirname(m) for m in models])
    tflm = Tflm(args.driver, args.timeout)
    counts: Dict[str, int] = {}
    figures = {}

    def job(m):
        return check_one(tflm, m, use_hint=not args.no_hint)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for row in pool.map(job, models):
            name = os.path.relpath(row["model"], base)
            counts[row["status"]] = counts.get(row["status"], 0) + 1
            print(f"{name}: {row['status']}  (min arena tflm {row['tflm_min']}, ours {row['ours_min']})",
                  flush=True)
            if row["status"] not in ("identical",) and row.get("detail"):
                print(row["detail"], flush=True)
            if row["tflm_min"] is not None:
                figures[name] = {"min_arena_bytes": row["tflm_min"], "report": row["tflm_report"]}
    print("\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f"  ({tflm.runs} TFLM runs)")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"models": dict(sorted(figures.items()))}, f, indent=1)
            f.write("\n")
    bad = sum(v for k, v in counts.items() if k not in ("identical", "tflm fails"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
