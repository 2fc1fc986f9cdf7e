"""``micro-runtime info`` over the zoo: the table of docs/cli.md.

    python benchmarks/zoo_info.py [--target T]

Every figure is ``micro-runtime info MODEL --target T --json``.
"""
import argparse
import contextlib
import io
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from micro_runtime.targets import DEFAULT_TARGET  # noqa: E402
from micro_runtime.tools.cli import main as cli_main  # noqa: E402
from tests.test_zoo import ZOO  # noqa: E402


def info(path: str, target: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["info", path, "--target", target, "--json"]) == 0
    return json.loads(out.getvalue())


def tensor(t: dict) -> str:
    shape = "x".join(map(str, t["shape"]))
    if t["scale"] is None:
        return f"{t['dtype']} {shape}"
    return f"{t['dtype']} {shape} ({t['scale']:.4g}, {t['zero_point']})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default=DEFAULT_TARGET)
    args = ap.parse_args()
    print(f"| model | input (scale, zero point) | output (scale, zero point) | flash bytes | weight bytes "
          f"| MACs | operators | arena on {args.target} (recording / micro) |")
    print("|---|---|---|---:|---:|---:|---|---:|")
    for name in ZOO:
        d = info(os.path.join(ROOT, "tests", "data", name + ".tflite"), args.target)
        ops = ", ".join(f"{t['op']} x{t['count']}" if t["count"] > 1 else t["op"] for t in d["op_types"])
        a = d["arena"]
        # a model the target cannot run (e.g. compression metadata on a build without
        # USE_TFLM_COMPRESSION) has no arena there: the cell says why
        arena = (f"{a['min_arena_bytes']:,} / {a['plain_min_arena_bytes']:,}" if a is not None
                 else f"refused: {d['arena_error'].split(':')[0]}")
        print(f"| {name} | {'; '.join(map(tensor, d['inputs']))} | {'; '.join(map(tensor, d['outputs']))} "
              f"| {d['model_bytes']:,} | {d['weights_bytes']:,} | {d['macs']:,} | {ops} "
              f"| {arena} |")


if __name__ == "__main__":
    main()
