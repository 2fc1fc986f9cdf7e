"""Shared pieces of the data-movement op tests (reshape, pad, slice, gather ...):
random arrays of every tensor type, quantization draws, and an assertion that our
interpreter rejects a model with a clear message."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from tests.strategies import scales

from micro_runtime.errors import MicroRuntimeError
from tests.helpers import run_ours

_INT_RANGES = {"int8": (-128, 127), "int16": (-32768, 32767), "uint8": (0, 255),
               "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
               "uint16": (0, 65535), "uint32": (0, (1 << 32) - 1)}


def any_array(draw, shape, dtype: str) -> np.ndarray:
    """A random array of any tensor dtype (full range for integers), from a drawn seed."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype in ("float16", "float32", "float64"):
        return rng.uniform(-100, 100, size=shape).astype(dtype)
    lo, hi = _INT_RANGES[dtype]
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.dtype(dtype))


def quant_or_none(draw, dtype: str):
    """Optional per-tensor quantization (data-movement ops ignore it unless said)."""
    if dtype in ("int8", "uint8", "int16") and draw(st.booleans()):
        zp = 0 if dtype == "int16" else draw(st.integers(*_INT_RANGES[dtype]))
        return (draw(scales(1e-3, 2.0)), zp)
    return None


def assert_rejected(model: bytes, inputs=(), match: str = ""):
    """Our interpreter refuses the model (allocate or invoke) with a message containing
    ``match``."""
    with pytest.raises(MicroRuntimeError) as info:
        run_ours(model, [np.asarray(x) for x in inputs])
    assert match in str(info.value), f"message {str(info.value)!r} lacks {match!r}"
    return info.value


def assert_same_arena_fits(oracle, model: bytes, inputs=(), span: int = 48):
    """For kernels that write persistent buffers while holding temporaries, where success
    is not monotone in the arena size (a write may clobber a live temporary at one size
    and not 16 bytes higher): TFLM agrees with our replay on both sides of every size in
    [min - span, min + 16] where our verdict changes, fails just below our minimum and
    works at it."""
    from arena.arena import fits
    _, _, it = run_ours(model, [np.asarray(x) for x in inputs])
    trace = it.arena.trace
    ours = it.min_arena_bytes()
    sizes = range(ours - span, ours + 17)
    verdict = {s: fits(trace, s) for s in sizes}
    assert all(verdict[s] for s in sizes if s >= ours), "our minimum is not robust"
    probes = {ours - 1, ours}
    for s in sizes[1:]:
        if verdict[s] != verdict[s - 1]:
            probes.update((s - 1, s))
    for s in sorted(probes):
        theirs = oracle.fits(model, s, inputs)
        assert theirs == verdict[s], f"arena of {s} bytes: TFLM {'fits' if theirs else 'fails'}, " \
                                     f"ours {'fits' if verdict[s] else 'fails'} (our minimum {ours})"


def assert_same_min_arena(oracle, model: bytes, inputs=()):
    """Our smallest working arena (temporaries included) is TFLM's, byte for byte."""
    _, _, it = run_ours(model, [np.asarray(x) for x in inputs])
    ours = it.min_arena_bytes()
    theirs = oracle.min_arena(model, inputs)
    assert ours == theirs, f"minimum arena: ours {ours} bytes, TFLM {theirs} bytes"


def assert_both_reject(oracle, model: bytes, inputs=(), match: str = "", tflm_stage: str = "allocate"):
    """Our interpreter refuses the model with a message containing ``match`` and TFLM
    (the package) fails too, at ``tflm_stage`` ("allocate": its prepare; "invoke")."""
    error = assert_rejected(model, inputs, match)
    theirs = oracle.run(model, [np.asarray(x) for x in inputs])
    assert not theirs.ok, f"TFLM accepts the model we reject with {error}"
    assert not theirs.crashed and theirs.stage == tflm_stage, \
        f"TFLM failed at {theirs.stage!r} (crashed={theirs.crashed}), expected {tflm_stage!r}"
    return error
