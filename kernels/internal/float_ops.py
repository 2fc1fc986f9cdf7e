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


# --------------------------------------------------- Arm soft-float (libgcc) NaN rules
_SIGN = np.uint32(0x80000000)
_DEFAULT_QUIET = np.uint32(0x7FC00000)


def _arm_nan(kind: str, a: np.ndarray, b: np.ndarray, result: np.ndarray) -> np.ndarray:
    """``result`` (the IEEE value numpy computed) with the NaN libgcc's ARM soft-float
    routines (``__aeabi_fadd`` / ``fsub`` / ``fmul`` / ``fdiv``, what -mfloat-abi=soft
    Cortex-M code calls) return wherever the result is a NaN:

    * add: a NaN ``a`` quieted; else a NaN ``b`` quieted, unless ``a`` is infinite (then
      ``a`` quieted: inf's sign, payload 0); inf + -inf: ``a`` quieted (``a``'s sign).
    * sub: add with ``b``'s sign bit flipped (a NaN ``b`` comes out negated).
    * mul: a NaN ``a``, else ``b``, quieted; 0 * inf: the infinite operand quieted.
    * div: a NaN ``a``, else ``b``, quieted; 0 / 0: ``a``'s sign, inf / inf: ``b``'s sign,
      with 0x7fc00000.

    (x86 SSE differs: invalid operations give 0xffc00000 and sub keeps ``b``'s sign.)
    Measured against libgcc under QEMU (tests/data/newlib/{add,sub,mul,div}.out.bin)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    result = np.asarray(result, np.float32)
    nan_out = np.isnan(result)
    if not nan_out.any():
        return result
    ab, bb = a.view(np.uint32), b.view(np.uint32)
    if kind == "sub":
        bb = bb ^ _SIGN
        kind = "add"
    a_nan, b_nan = np.isnan(a), np.isnan(b)
    quiet_a, quiet_b = ab | _QUIET, bb | _QUIET
    if kind == "add":
        invalid_or_b = np.where(np.isinf(a), quiet_a, quiet_b)
        bits = np.where(a_nan, quiet_a, np.where(b_nan, invalid_or_b, quiet_a))
    elif kind == "mul":
        inf_operand = np.where(np.isinf(a), ab, bb)
        bits = np.where(a_nan, quiet_a, np.where(b_nan, quiet_b, (inf_operand & _SIGN) | _DEFAULT_QUIET))
    elif kind == "div":
        invalid = np.where(np.isinf(b), bb, ab) & _SIGN        # inf / inf: b's sign; 0 / 0: a's
        bits = np.where(a_nan, quiet_a, np.where(b_nan, quiet_b, invalid | _DEFAULT_QUIET))
    else:
        raise ValueError(f"unknown operation {kind!r}")
    return np.where(nan_out, bits.view(np.float32), result).astype(np.float32)


def arm_add_f32(a, b) -> np.ndarray:
    """``a + b`` in float32 with ARM soft-float's NaN rules (:func:`_arm_nan`)."""
    with np.errstate(all="ignore"):
        return _arm_nan("add", a, b, np.add(a, b, dtype=np.float32))


def arm_sub_f32(a, b) -> np.ndarray:
    """``a - b`` in float32 with ARM soft-float's NaN rules."""
    with np.errstate(all="ignore"):
        return _arm_nan("sub", a, b, np.subtract(a, b, dtype=np.float32))


def arm_mul_f32(a, b) -> np.ndarray:
    """``a * b`` in float32 with ARM soft-float's NaN rules."""
    with np.errstate(all="ignore"):
        return _arm_nan("mul", a, b, np.multiply(a, b, dtype=np.float32))


def arm_div_f32(a, b) -> np.ndarray:
    """``a / b`` in float32 with ARM soft-float's NaN rules."""
    with np.errstate(all="ignore"):
        return _arm_nan("div", a, b, np.divide(a, b, dtype=np.float32))


def x86_row_sum(rows) -> np.ndarray:
    """Sequential float32 sum along the last axis (TFLM's ``sum += x`` loop from 0.f) as
    x86 SSE computes it: numpy's add.accumulate runs the same ``acc + x`` in order, and a
    NaN accumulator stays first operand."""
    rows = np.asarray(rows, np.float32)
    if rows.shape[-1] == 0:
        return np.zeros(rows.shape[:-1], np.float32)
    with np.errstate(all="ignore"):
        return np.add.accumulate(rows, axis=-1, dtype=np.float32)[..., -1] + np.float32(0.0)


def arm_row_sum(rows) -> np.ndarray:
    """:func:`x86_row_sum` with ARM soft-float's NaN rules: where the sum becomes a NaN,
    the NaN libgcc's add makes of (sum so far, element) at that step (it then stays: a NaN
    first operand is returned quieted)."""
    rows = np.asarray(rows, np.float32)
    if rows.shape[-1] == 0:
        return np.zeros(rows.shape[:-1], np.float32)
    with np.errstate(all="ignore"):
        running = np.add.accumulate(rows, axis=-1, dtype=np.float32)
    total = running[..., -1] + np.float32(0.0)
    nan_rows = np.isnan(total)
    if not nan_rows.any():
        return total
    flat_rows = rows.reshape(-1, rows.shape[-1])[nan_rows.reshape(-1)]
    flat_running = running.reshape(-1, rows.shape[-1])[nan_rows.reshape(-1)]
    first = np.argmax(np.isnan(flat_running), axis=1)
    picks = np.arange(first.size)
    before = np.where(first > 0, flat_running[picks, np.maximum(first - 1, 0)], np.float32(0.0))
    nan = _arm_nan("add", before.astype(np.float32), flat_rows[picks, first],
                   np.full(first.size, np.nan, np.float32))
    out = total.reshape(-1).copy()
    out[nan_rows.reshape(-1)] = nan
    return out.reshape(total.shape)
