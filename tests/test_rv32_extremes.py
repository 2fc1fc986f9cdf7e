"""The RV32 target profiles against the RV32 TFLM builds at extreme quantization scales
(tests/data/rv32_extremes.json, written by tests/record_rv32_extremes.py: single-op models
with scales from 1e-45 to 3.4e38, nan, +-inf, 0 and negative ones, run under
qemu-system-riscv32; its ``about`` says how). Per case and build: where the build runs, the
same output bytes; where it aborts or refuses, the emulator refuses too. What C leaves
undefined there (shift counts of 32 or more, out-of-range float -> int conversions) follows
the RV32 semantics of kernels/internal/quantization.py (``Target.cpu``)."""
from __future__ import annotations

import json
import os
from typing import List, Optional, Tuple

import numpy as np
import pytest

from micro_runtime import MicroInterpreter, MicroRuntimeError

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, "data", "rv32_extremes.json")
CASES_DIR = os.path.join(HERE, "data", "rv32_extremes")


def _load():
    if not os.path.exists(RECORD):
        return []
    with open(RECORD) as f:
        record = json.load(f)
    return [(op, name, record["cases"][op][name]) for op in sorted(record["cases"])
            for name in sorted(record["cases"][op])]


CASES = _load()

#: differences not modelled yet (strict xfails: a case that starts to match fails the test)
_ABORT = "the RV32 builds abort (no message: a TFLITE_DCHECK) where the profiles run; not identified"
_NEGATIVE = "the RV32 builds run a negative output / input scale the profiles refuse"
KNOWN = {
    "batch_matmul_int8_01": _ABORT, "hard_swish_int8_05": _ABORT,
    "conv_2d_int16_02": _NEGATIVE, "leaky_relu_int16_05": _NEGATIVE, "leaky_relu_int16_08": _NEGATIVE,
    "mul_int16_05": _NEGATIVE, "mul_int8_02": _NEGATIVE, "mul_int8_08": _NEGATIVE,
    "quantize_int16_02": _NEGATIVE, "quantize_int16_08": _NEGATIVE,
    "squared_difference_int8_08": _NEGATIVE,
}


def run_ours(op: str, name: str, build: str, arena_bytes: int) -> Tuple[Optional[List[str]], Optional[Exception]]:
    """(outputs as hex, None) of our run of a case on the build's profile, or (None, the
    emulator's refusal)."""
    directory = os.path.join(CASES_DIR, op)
    with open(os.path.join(directory, name + ".tflite"), "rb") as f:
        model = f.read()
    try:
        it = MicroInterpreter(model, arena_size=arena_bytes, target=build, recording=False,
                              error_reporter=lambda m: None)
        it.allocate_tensors()
        k = 0
        while os.path.exists(os.path.join(directory, f"{name}.input{k}.bin")):
            spec = np.array(it.input(k))
            raw = np.fromfile(os.path.join(directory, f"{name}.input{k}.bin"), dtype=spec.dtype)
            it.set_input(raw.reshape(spec.shape), k)
            k += 1
        it.invoke()
    except MicroRuntimeError as e:
        return None, e
    return [np.array(it.output(i)).tobytes().hex() for i in range(it.outputs_size)], None


def compare(op: str, name: str, build: str, entry: dict) -> Optional[str]:
    """None when our run matches the build's record, else what differs."""
    outputs, error = run_ours(op, name, build, entry["arena_bytes"])
    if entry["status"] != "ok":
        if error is None:
            return f"the build stops ({entry['status']}: {entry.get('messages')}), ours runs"
        return None
    if error is not None:
        return f"the build runs, ours refuses: {error}"
    if "outputs_hex" in entry and outputs != entry["outputs_hex"]:
        a = bytes.fromhex("".join(outputs))
        b = bytes.fromhex("".join(entry["outputs_hex"]))
        diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
        return f"{len(diff)} output bytes differ (first at byte {diff[0] if diff else '?'})"
    return None


@pytest.mark.skipif(not CASES, reason="no recorded RV32 extreme-scale cases")
@pytest.mark.parametrize("op,name,by_build", [
    pytest.param(*c, marks=pytest.mark.xfail(strict=True, reason=KNOWN[c[1]])) if c[1] in KNOWN else c
    for c in CASES], ids=[c[1] for c in CASES])
def test_profiles_match_the_rv32_builds(op, name, by_build):
    problems = [f"{build}: {p}" for build, entry in sorted(by_build.items())
                if (p := compare(op, name, build, entry)) is not None]
    assert not problems, f"{name}: " + "; ".join(problems)


def main() -> None:
    """Print the figures: cases x builds equal / differing, and every difference."""
    equal = total = 0
    for op, name, by_build in CASES:
        for build, entry in sorted(by_build.items()):
            total += 1
            p = compare(op, name, build, entry)
            if p is None:
                equal += 1
            else:
                print(f"{name} {build}: {p}")
    print(f"{equal} of {total} case x build pairs equal")


if __name__ == "__main__":
    main()
