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


# ------------------------------------------- libgcc's ARM soft-float double add
_MANT52 = (1 << 52) - 1


def _libgcc_dadd_far(a: float, b: float) -> float:
    """libgcc's __adddf3 for two normal doubles whose exponents differ by 33..54 (the
    smaller one shifted right by more than a word): the smaller's low word only sets a
    sticky bit, so when the sum loses its top bit (an effective subtraction) and is shifted
    back left, the bit below the result's last place is gone and the rounding is not
    IEEE's. Integer model of the routine: two's-complement 64-bit mantissas, 32 extension
    bits, 96-bit negation of a negative sum, one normalising shift, round to nearest even
    on the extension."""
    ab = int(np.float64(a).view(np.uint64))
    bb = int(np.float64(b).view(np.uint64))
    ea, eb = (ab >> 52) & 0x7FF, (bb >> 52) & 0x7FF
    if ea < eb:
        ab, bb, ea, eb = bb, ab, eb, ea
    shift = ea - eb
    x = (ab & _MANT52) | (1 << 52)
    y = (bb & _MANT52) | (1 << 52)
    x = -x if ab >> 63 else x
    y = -y if bb >> 63 else y
    y &= (1 << 64) - 1
    y_low, y_high = y & 0xFFFFFFFF, y >> 32
    y_high_signed = y_high - (1 << 32) if y_high >> 31 else y_high
    extension = (y_high << (64 - shift)) & 0xFFFFFFFF
    if y_low:
        extension |= 2
    total = x + (y_high_signed >> (shift - 32))
    exponent = ea - 1
    negative = total < 0
    if negative:
        wide = (-((total << 32) | extension)) & ((1 << 96) - 1)
        total, extension = wide >> 32, wide & 0xFFFFFFFF
    if total >= 1 << 53:
        extension = ((total & 1) << 31) | (extension >> 1)
        total >>= 1
        exponent += 1
    elif total < 1 << 52:
        total = (total << 1) | (extension >> 31)
        extension = (extension << 1) & 0xFFFFFFFF
        exponent -= 1
    if extension > 0x80000000 or (extension == 0x80000000 and total & 1):
        total += 1
    bits = (exponent << 52) + total + (int(negative) << 63)
    return float(np.uint64(bits).view(np.float64))


def libgcc_dadd(a, b) -> np.ndarray:
    """``a + b`` in double as libgcc's ARM soft-float __aeabi_dadd computes it: IEEE
    except where the exponents of two normal operands differ by 33 to 54 (see
    :func:`_libgcc_dadd_far`; those few elements one at a time)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    with np.errstate(all="ignore"):
        result = np.add(a, b)
    ea = (a.view(np.uint64) >> np.uint64(52)).astype(np.int64) & 0x7FF
    eb = (b.view(np.uint64) >> np.uint64(52)).astype(np.int64) & 0x7FF
    gap = np.abs(ea - eb)
    far = (gap >= 33) & (gap <= 54) & (ea > 0) & (eb > 0) & (ea < 0x7FF) & (eb < 0x7FF)
    if far.any():
        result = np.array(result, copy=True)
        result[far] = [_libgcc_dadd_far(x, y) for x, y in zip(a[far].tolist(), b[far].tolist())]
    return result


def libgcc_dsub(a, b) -> np.ndarray:
    """``a - b`` in double as libgcc's __aeabi_dsub (an add of -b)."""
    return libgcc_dadd(a, np.negative(np.asarray(b, np.float64)))
