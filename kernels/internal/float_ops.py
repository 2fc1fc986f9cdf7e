"""float32 arithmetic with x86 SSE NaN propagation, as the compiled TFLM kernels do it.

An SSE ``addss`` / ``subss`` / ``mulss`` returns its first operand (quieted) when that
is a NaN, else the second operand (quieted) when that is a NaN, else the IEEE result
(an invalid operation gives the default NaN, sign bit set). numpy's vectorised loops do
not promise which NaN they return when both operands are NaNs, so these helpers fix
that case explicitly. ``first`` is the operand TFLM's compiled code puts first.
"""
from __future__ import annotations

import numpy as np

_QUIET = np.uint32(0x00400000)


def _quiet(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, np.float32).view(np.uint32) | _QUIET).view(np.float32)


def first_nan(first, second, result) -> np.ndarray:
    """``result`` with the quieted ``first`` wherever both operands are NaNs."""
    first = np.asarray(first, np.float32)
    second = np.asarray(second, np.float32)
    both = np.isnan(first) & np.isnan(second)
    if not both.any():
        return result
    return np.where(both, _quiet(np.broadcast_to(first, both.shape)), result).astype(np.float32)


def add_f32(first, second) -> np.ndarray:
    """``first + second`` in float32 (x86 NaN choice)."""
    with np.errstate(all="ignore"):
        result = np.add(first, second, dtype=np.float32)
    return first_nan(first, second, result)


def sub_f32(first, second) -> np.ndarray:
    """``first - second`` in float32 (x86 NaN choice)."""
    with np.errstate(all="ignore"):
        result = np.subtract(first, second, dtype=np.float32)
    return first_nan(first, second, result)


def fmod_f32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``std::fmod`` on floats as the tflite-micro package computes it (x87 ``fprem``):
    exact remainders; an invalid operation (x infinite, y zero) gives the default NaN; a
    NaN operand comes out quieted, and of two NaNs the one with the larger significand
    wins (the positive one on a tie) -- the x87 rule, measured on the package."""
    x, y = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(y, np.float32))
    with np.errstate(all="ignore"):
        r = np.fmod(x, y, dtype=np.float32)
    nx, ny = np.isnan(x), np.isnan(y)
    if not (nx.any() or ny.any()):
        return r
    qx = x.view(np.uint32) | _QUIET
    qy = y.view(np.uint32) | _QUIET
    mx, my = qx & np.uint32(0x7FFFFF), qy & np.uint32(0x7FFFFF)
    take_x = nx & (~ny | (mx > my) | ((mx == my) & (qx < np.uint32(0x80000000))))
    take_y = ny & ~take_x
    bits = np.where(take_x, qx, np.where(take_y, qy, r.view(np.uint32)))
    return bits.astype(np.uint32).view(np.float32)


def sequential_extreme(x: np.ndarray, axis: int, initial: float, is_max: bool = True,
                       keepdims: bool = False) -> np.ndarray:
    """float32 max (or min) along ``axis`` as TFLM's loop ``m = std::max(m, x)`` from
    ``initial``: NaNs never win, and of equal values the first stays (the sign of a zero
    result is the first zero's). numpy's fmax/nanmax reductions are not used: numpy 2.4's
    SIMD loops let a signalling NaN hide an infinity."""
    x = np.asarray(x, np.float32)
    init = np.float32(initial)
    clean = np.where(np.isnan(x), init, x)
    reduce = np.max if is_max else np.min
    result = np.asarray(reduce(clean, axis=axis, initial=init), np.float32)
    zero = result == 0
    if zero.any():
        cols = np.moveaxis(clean, axis, 0).reshape(clean.shape[axis], -1)
        flat = result.reshape(-1).copy()
        where = zero.reshape(-1)
        sub = cols[:, where]
        has_zero = (sub == 0).any(axis=0)
        first = sub[np.argmax(sub == 0, axis=0), np.arange(sub.shape[1])]
        flat[where] = np.where(has_zero, first, flat[where])
        result = flat.reshape(result.shape)
    return np.expand_dims(result, axis) if keepdims else result
