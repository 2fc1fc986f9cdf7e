"""Recorded figures of TFLM builds (tests/data/reference/tflm_figures_cortexm*.json) and the
input / hash definitions they use, so tests and benchmarks/cortexm_sizes.py compare our
emulator with them the same way.

A figures file is ``{"about": how it was made, "models": {model path relative to
tests/data: {build name (a target profile): figures}}}``; figures are ``min_arena_bytes``,
``report_lines`` (the ``[RecordingMicroAllocator]`` lines of PrintAllocations after one
Invoke on zero inputs, at an arena that is a multiple of 16 bytes), ``outputs_fnv1a``
(``{"zeros": [...], "lcg1": [...]}``, one hash per output, each input kind run in a fresh
interpreter), or ``status`` / ``messages`` when the build could not run the model.
"""
from __future__ import annotations

import io
import json
import os
from typing import Dict, Iterable, List, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
REFERENCE_DIR = os.path.join(DATA, "reference")
#: the independent figures of the first Cortex-M builds (cortex-m4, cortex-m4+cmsis-nn,
#: cortex-m3+cmsis-nn on the 11 zoo models), the cortex_m_qemu builds run on a Cortex-A15
#: in user mode, and the Cortex-M55 (hard float, MVE) builds run on QEMU's mps3-an547
FIGURE_FILES = ("tflm_figures_cortexm.json", "tflm_figures_cortexm_builds.json",
                "tflm_figures_cortexm_m55.json")

LCG_MULTIPLIER = 1103515245
LCG_INCREMENT = 12345


def lcg1_bytes(count: int, state: int = 1) -> Tuple[np.ndarray, int]:
    """``count`` bytes of the 'lcg1' input stream from LCG state ``state``, and the state
    after them: x <- x * 1103515245 + 12345 (mod 2**32), byte = (x >> 16) & 0xff, the
    first byte from the first update. Closed form x_k = a^k x_0 + c (1 + a + ... +
    a^(k-1)), with uint32 arithmetic wrapping mod 2**32."""
    if count == 0:
        return np.zeros(0, np.uint8), state
    a = np.full(count, LCG_MULTIPLIER, np.uint32)
    powers = np.cumprod(a, dtype=np.uint32)                       # a^1 .. a^count
    geometric = np.cumsum(np.concatenate(([np.uint32(1)], powers[:-1])), dtype=np.uint32)
    x = powers * np.uint32(state) + np.uint32(LCG_INCREMENT) * geometric
    return ((x >> np.uint32(16)) & np.uint32(0xFF)).astype(np.uint8), int(x[-1])


def input_arrays(kind: str, specs: Iterable[Tuple[tuple, np.dtype]]) -> List[np.ndarray]:
    """The model inputs of ``kind`` ('zeros' or 'lcg1') for inputs of (shape, dtype):
    'lcg1' fills every input byte, inputs in order, from one stream started at x0 = 1."""
    out, state = [], 1
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if kind == "zeros":
            raw = np.zeros(nbytes, np.uint8)
        elif kind == "lcg1":
            raw, state = lcg1_bytes(nbytes, state)
        else:
            raise ValueError(f"unknown input kind {kind!r}")
        out.append(raw.view(dtype).reshape(shape))
    return out


def fnv1a32(data: bytes) -> str:
    """FNV-1a, 32 bits, as 8 lower-case hex digits."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def load_figures() -> Tuple[Dict[Tuple[str, str], dict], Dict[str, str]]:
    """{(model, profile): figures} over every figures file present (a later file's entry
    for the same model and profile must agree with an earlier one: checked by
    tests/test_cortexm_zoo.py), and {file name: about}."""
    figures: Dict[Tuple[str, str], dict] = {}
    about = {}
    for name in FIGURE_FILES:
        path = os.path.join(REFERENCE_DIR, name)
        if not os.path.exists(path):
            continue
        data = json.load(open(path))
        about[name] = data["about"]
        for model, builds in data["models"].items():
            for profile, entry in builds.items():
                figures.setdefault((model, profile), entry)
    return figures, about


def figure_sources() -> Dict[Tuple[str, str], List[dict]]:
    """Every recorded entry per (model, profile), one per figures file that has it."""
    out: Dict[Tuple[str, str], List[dict]] = {}
    for name in FIGURE_FILES:
        path = os.path.join(REFERENCE_DIR, name)
        if os.path.exists(path):
            for model, builds in json.load(open(path))["models"].items():
                for profile, entry in builds.items():
                    out.setdefault((model, profile), []).append(entry)
    return out


def report_arena(min_arena: int) -> int:
    """An arena for the report lines: a multiple of 16 (the report's tail depends on the
    arena end's alignment), at least 1 MiB as the recording driver's."""
    size = 1 << 20
    while size < min_arena:
        size *= 2
    return size


def emulate(path: str, profile: str, arena_size: int,
            kinds: Tuple[str, ...] = ("zeros", "lcg1")) -> dict:
    """What the figures record, from our emulator: report lines and minimum arena from a
    run on zeros, and the output hashes of each input kind in ``kinds`` (each in a fresh
    interpreter; 'zeros' must be among them)."""
    from micro_runtime import MicroInterpreter
    if "zeros" not in kinds:
        raise ValueError("the report lines and the minimum come from the run on zeros")
    result: dict = {"outputs_fnv1a": {}}
    for kind in kinds:
        it = MicroInterpreter(path, arena_size=arena_size, target=profile, recording=True)
        it.allocate_tensors()
        specs = [(it.input(i).shape, it.input(i).dtype) for i in range(it.inputs_size)]
        for i, x in enumerate(input_arrays(kind, specs)):
            it.set_input(x, i)
        it.invoke()
        result["outputs_fnv1a"][kind] = [fnv1a32(np.ascontiguousarray(it.output(i)).tobytes())
                                         for i in range(it.outputs_size)]
        if kind == "zeros":
            buf = io.StringIO()
            it.print_allocations(buf)
            result["report_lines"] = buf.getvalue().splitlines()
            result["min_arena_bytes"] = it.min_arena_bytes()
    return result
