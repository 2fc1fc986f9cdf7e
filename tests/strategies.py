"""Hypothesis strategies shared by the differential kernel tests."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

DTYPE_RANGES = {"int8": (-128, 127), "int16": (-32768, 32767), "uint8": (0, 255),
                "int32": (-(1 << 31), (1 << 31) - 1)}


def scales(lo: float = 1e-3, hi: float = 2.0):
    """Quantization scales (float32-representable, positive)."""
    return st.floats(min_value=float(np.float32(lo)), max_value=float(np.float32(hi)),
                     allow_nan=False, allow_infinity=False, width=32)


def zero_points(dtype: str = "int8"):
    if dtype == "int16":
        return st.just(0)
    lo, hi = DTYPE_RANGES[dtype]
    return st.integers(lo, hi)


def shapes(min_dims=1, max_dims=4, min_side=1, max_side=8):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def arrays(draw, shape, dtype: str, lo=None, hi=None, seed_only=True):
    """Random array of ``shape`` from a drawn seed (fast for large tensors)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if dtype in ("float32", "float64"):
        lo = -4.0 if lo is None else lo
        hi = 4.0 if hi is None else hi
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    dlo, dhi = DTYPE_RANGES[dtype]
    lo = dlo if lo is None else lo
    hi = dhi if hi is None else hi
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


activations = st.sampled_from([0, 1, 2, 3])  # NONE, RELU, RELU_N1_TO_1, RELU6
