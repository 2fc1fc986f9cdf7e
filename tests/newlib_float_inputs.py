"""Inputs of the newlib float-function checks (tests/test_newlib_float.py): generated here,
so tests/data/newlib/<function>.out.bin stores only the outputs newlib computed for them.

``float_inputs(function)`` -> float32 array: bit patterns spread over the whole 32-bit space,
special values (zeros, infinities, NaNs, denormals, the largest finite), a few ulps either side
of the function's branch points, and a dense seeded sample of the range neural networks feed
it. ``arithmetic_inputs()`` -> (n, 2) float32 operand pairs with NaNs of both signs and
payloads for the +, -, *, / NaN-propagation check.
"""
from __future__ import annotations

import numpy as np

_SPECIALS_BITS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                  0x7F800001, 0xFF812345, 0x7FA00000, 0x00000001, 0x80000001, 0x007FFFFF,
                  0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
                  0xBF800000, 0x3F000000, 0xBF000000]

#: per function: float32 bit patterns of its branch points, and the (low, high) range of
#: the dense sample
_BRANCHES = {
    "expf": ([0x3EB17218, 0x3F851592, 0x31800000, 0x42B17217, 0x42CFF1B5, 0xC2AEAC50], (-110.0, 90.0)),
    "expm1f": ([0x3EB17218, 0x3F851592, 0x33000000, 0x42B17218, 0x4195B844, 0x3E800000,
                0x41B80000, 0x40000000, 0x41C00000], (-20.0, 20.0)),
    "tanhf": ([0x24000000, 0x3F800000, 0x41B00000, 0x3E800000, 0x3EB17218], (-12.0, 12.0)),
    "logf": ([0x3F800000, 0x3F7FFFF0, 0x3F800010, 0x3FB504F3, 0x3F3504F3, 0x3F4B0000,
              0x3FC00000, 0x00800000, 0x3FDAE148, 0x3FB0A3D7], (0.0, 50.0)),
    "sinf": ([0x3F490FD8, 0x4016CBE4, 0x43490F80, 0x3FC90FDB, 0x40490FDB, 0x32000000,
              0x3E99999A, 0x3F480000, 0x47800000, 0x4B800000], (-210.0, 210.0)),
}
_BRANCHES["cosf"] = _BRANCHES["sinf"]


def _spread(n: int) -> np.ndarray:
    return (np.arange(n, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)


def float_inputs(function: str) -> np.ndarray:
    """The recorded inputs of ``function`` (a key of the module's branch table); float32."""
    branches, (low, high) = _BRANCHES[function]
    rng = np.random.default_rng(sum(function.encode()))
    near = np.array(branches, np.int64)[:, None] + np.arange(-3, 4)[None, :]
    near = np.concatenate([near, near | 0x80000000]).reshape(-1) & 0xFFFFFFFF
    dense = rng.uniform(low, high, 6000).astype(np.float32).view(np.uint32)
    small = (rng.uniform(-1, 1, 1000) * 2.0 ** rng.integers(-30, 1, 1000)).astype(np.float32)
    large = (rng.uniform(-1, 1, 500) * 2.0 ** rng.integers(0, 128, 500)).astype(np.float32)
    bits = np.concatenate([np.array(_SPECIALS_BITS, np.uint32), near.astype(np.uint32),
                           _spread(2000), dense, small.view(np.uint32), large.view(np.uint32)])
    return bits.view(np.float32)


def double_inputs(function: str = "exp") -> np.ndarray:
    """The recorded float64 inputs of newlib's double ``exp`` (DETECTION_POSTPROCESS's
    std::exp(double)): specials, the branch points +- a few ulps, random bit patterns,
    and a dense sample of [-50, 50] (box-size encodings over scales)."""
    rng = np.random.default_rng(sum(function.encode()) + 64)
    branches = np.array([0.0, 0.34657359027997264, 1.0397207708399179, 709.782712893384,
                         -745.1332191019411, 2.0 ** -28, 1.0, -1.0], np.float64)
    branches = np.concatenate([branches, -branches])
    near = (branches.view(np.int64)[:, None] + np.arange(-2, 3)[None, :]).reshape(-1).view(np.float64)
    specials = np.array([np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e308, -1e308], np.float64)
    bits = rng.integers(0, 2**63, 1500, dtype=np.int64).view(np.float64) * rng.choice([-1.0, 1.0], 1500)
    dense = rng.uniform(-50, 50, 6000)
    small = rng.uniform(-1, 1, 1000) * 2.0 ** rng.integers(-40, 1, 1000)
    return np.concatenate([specials, near, bits, dense, small]).astype(np.float64)


def double_add_inputs() -> np.ndarray:
    """(n, 2) float64 operand pairs for libgcc's soft-float double add: exponent gaps of
    25..60 (the routine's word-shift paths), powers of two and mantissas near them (sums
    that lose or gain a bit), both signs, either order."""
    rng = np.random.default_rng(33)
    n = 6000
    m = np.where(rng.random(n) < 0.5, 1.0, rng.uniform(1, 2, n))
    m = np.where(rng.random(n) < 0.2, 1 + 2.0 ** -52 * rng.integers(1, 5, n), m)
    m = np.where(rng.random(n) < 0.1, 2 - 2.0 ** -52 * rng.integers(1, 5, n), m)
    a = m * 2.0 ** rng.integers(-60, 60, n) * rng.choice([-1, 1], n)
    gap = rng.integers(25, 61, n)
    mb = np.where(rng.random(n) < 0.3, 1.0, rng.uniform(1, 2, n))
    b = mb * 2.0 ** (np.floor(np.log2(np.abs(a))) - gap) * rng.choice([-1, 1], n)
    swap = rng.random(n) < 0.5
    return np.stack([np.where(swap, a, b), np.where(swap, b, a)], axis=1)


def arithmetic_inputs() -> np.ndarray:
    """(n, 2) float32 operand pairs: NaN / NaN (both signs, quiet and signalling, payloads),
    NaN / number, number / NaN, and inf / 0 pairs that make a NaN."""
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFD00001, 0x7F800001, 0xFF812345,
                     0x7FA00000], np.uint32).view(np.float32)
    numbers = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, 3e38, 1e-45], np.float32)
    values = np.concatenate([nans, numbers])
    a, b = np.meshgrid(values, values, indexing="ij")
    return np.stack([a.reshape(-1), b.reshape(-1)], axis=1).astype(np.float32)
