"""Shared strategies of the unary-math kernel tests (ABS ... FILL): float32 arrays with
special values (signed zeros, infinities, NaNs with payloads, subnormals, huge values)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.strategies import arrays, shapes

SPECIAL_BITS = np.array([
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001,
    0x7FA00000,                                  # signalling NaN
    0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000,   # subnormals, smallest normal
    0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000, 0x3FC00000,
    0xC0200000, 0x4B000001, 0xCB000001, 0x42F00000, 0xC2F00000, 0x3F490FDB, 0x39800000,
], dtype=np.uint32)
SPECIALS = SPECIAL_BITS.view(np.float32)


def float_values(draw, shape, spreads=(1.0, 4.0, 30.0, 150.0, 1e6, 1e30)):
    """float32 array: uniform in a drawn range, sometimes half-integers (rounding ties),
    sometimes random bit patterns, with special values sprinkled in."""
    kind = draw(st.sampled_from(["uniform", "uniform", "halves", "bits", "positive"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = int(np.prod(shape, dtype=np.int64))
    if kind == "bits":
        x = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    elif kind == "halves":
        x = (rng.integers(-40, 40, size=n) / 2.0).astype(np.float32)
    else:
        spread = draw(st.sampled_from(spreads))
        lo = 0.0 if kind == "positive" else -spread
        x = rng.uniform(lo, spread, size=n).astype(np.float32)
    if n and draw(st.booleans()):
        mask = rng.random(n) < 0.25
        x = np.where(mask, rng.choice(SPECIALS, size=n), x).astype(np.float32)
    return x.reshape(shape)


def small_shapes():
    return shapes(0, 4, 1, 6)


__all__ = ["SPECIALS", "float_values", "small_shapes", "arrays"]
