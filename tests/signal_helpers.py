"""Helpers for the signal-library custom op tests (TFLM's SignalWindow, SignalRfft, ...):
seeded input generators with edge values, flexbuffer options, and a differential run
over several invokes that may compare only part of an output (SignalEnergy leaves the
bins outside its range untouched, i.e. undefined)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import flatbuffers.flexbuffers as flex
import numpy as np
from hypothesis import strategies as st

from micro_runtime import MicroInterpreter
from tests.stateful_helpers import compare_invokes_with_tflm


def options(**values) -> bytes:
    """Custom options as the TF signal ops write them: a flexbuffer map."""
    return flex.Dumps(values)


def rng_of(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def int_array(rng, shape, dtype, edge_fraction: float = 0.1) -> np.ndarray:
    """Full-range integers with some elements set to the type's extremes and zero, and a
    random magnitude (bit length) per element so small and large values both occur."""
    info = np.iinfo(dtype)
    bits = info.bits - (1 if info.min < 0 else 0)
    n = int(np.prod(shape, dtype=np.int64))
    length = rng.integers(0, bits + 1, size=n).astype(np.uint64)
    raw = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    mag = np.where(length == 0, np.uint64(0), raw >> (np.uint64(64) - np.maximum(length, np.uint64(1))))
    if info.min < 0:
        vals = mag.astype(np.int64)
        vals = np.where(rng.integers(0, 2, size=n) == 1, -vals - 1, vals)
        out = vals.astype(dtype)
    else:
        out = mag.astype(dtype)
    edge = rng.random(n) < edge_fraction
    if edge.any():
        choices = np.array([info.min, info.max, 0], dtype=dtype)
        out[edge] = choices[rng.integers(0, 3, size=int(edge.sum()))]
    return out.reshape(shape)


def compare_invokes(oracle, model: bytes, runs: List[Sequence[np.ndarray]],
                    arena_size: int = 1 << 20, reset_between: bool = False, context: str = "",
                    output_slices: Optional[Dict[int, slice]] = None):
    """Invoke ours and TFLM once per entry of ``runs`` (state carried over, or reset after
    every invoke); every invoke's outputs (``output_slices`` restricts an output to a
    slice) and the allocation reports must be identical."""
    return compare_invokes_with_tflm(oracle, model, runs, arena_size, reset_between, context,
                                     output_slices=output_slices)[0]


def mcu32_runs(model: bytes, runs: List[Sequence[np.ndarray]]) -> None:
    """The model also allocates and runs on the 32-bit profile."""
    it = MicroInterpreter(model, arena_size=1 << 20, target="mcu32", error_reporter=lambda m: None)
    it.allocate_tensors()
    for inputs in runs:
        for i, x in enumerate(inputs):
            it.set_input(np.asarray(x), i)
        it.invoke()


def compare_valid_invokes(oracle, model: bytes, runs: List[Sequence[np.ndarray]],
                          reset_between: bool = False, context: str = "",
                          data_elements: Optional[int] = None) -> List[bool]:
    """For ops with a (data, valid) output pair (SignalFramer, SignalStacker): every
    invoke's valid flag equal to TFLM's, the data output (its first ``data_elements``:
    the op never writes the rest) equal whenever it is valid (an invalid invoke leaves
    it as it was: arena leftovers, undefined), and the allocation reports equal. Returns
    the valid flags."""
    import io
    theirs = oracle.run(model, runs=[list(r) for r in runs], reset_between=reset_between)
    assert theirs.ok, f"{context}: TFLM failed ({theirs.stage}): {theirs.error}"
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64", recording=True,
                          error_reporter=lambda m: None)
    it.allocate_tensors()
    flags = []
    for k, inputs in enumerate(runs):
        for i, x in enumerate(inputs):
            it.set_input(np.asarray(x), i)
        it.invoke()
        valid = bool(np.array(it.output(1)))
        assert valid == bool(theirs.invokes[k][1]), f"{context} invoke {k}: valid flag differs"
        if valid:
            n = data_elements
            assert (np.array(it.output(0)).reshape(-1)[:n].tobytes()
                    == theirs.invokes[k][0].reshape(-1)[:n].tobytes()), f"{context} invoke {k}: output differs"
        flags.append(valid)
        if reset_between:
            it.reset()
    buf = io.StringIO()
    it.print_allocations(buf)
    assert buf.getvalue().splitlines() == theirs.lines, f"{context}: allocation report differs"
    return flags
