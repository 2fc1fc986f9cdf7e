"""Sizing many models at once: wall time of ``micro-runtime size DIR --jobs N`` and a check
that every row equals the single-model ``size MODEL --json``.

    python benchmarks/size_sweep.py                                  # tests/data/tflm_examples, --jobs 2
    python benchmarks/size_sweep.py PATH... --jobs 4 --target host64

Prints the sweep's wall time (the command run as a subprocess, interpreter start-up
included), the number of rows, errors, and rows equal to the single-model run; exit
status 1 if any row differs.
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from micro_runtime.targets import DEFAULT_TARGET  # noqa: E402
from micro_runtime.tools.cli import main as cli_main  # noqa: E402


def single(path: str, target: str, interpreter: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["size", path, "--target", target, "--interpreter", interpreter, "--json"])
    return json.loads(out.getvalue()) if code == 0 else {"error": code}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[os.path.join(ROOT, "tests", "data", "tflm_examples")])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--interpreter", default="recording")
    args = ap.parse_args()
    cmd = [sys.executable, "-m", "micro_runtime", "size", *args.paths, "--jobs", str(args.jobs),
           "--target", args.target, "--interpreter", args.interpreter, "--json"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    rows = json.loads(proc.stdout)
    errors = [r for r in rows if r["error"]]
    print(f"sweep: {len(rows)} models, --jobs {args.jobs}, target {args.target}: {wall:.1f} s wall "
          f"(exit status {proc.returncode}, {len(errors)} errors)")
    start = time.perf_counter()
    differ = []
    for row in rows:
        if row["error"]:
            continue
        expected = single(row["path"], args.target, args.interpreter)
        if {k: v for k, v in row.items() if k not in ("path", "error")} != expected:
            differ.append(row["path"])
    print(f"single-model size, one by one in one process: {time.perf_counter() - start:.1f} s; "
          f"rows equal to it: {len(rows) - len(errors) - len(differ)} of {len(rows) - len(errors)}")
    for path in differ:
        print(f"  differs: {path}")
    for row in errors:
        print(f"  error: {row['path']}: {row['error']}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
