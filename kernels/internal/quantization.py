"""Integer arithmetic exactly as TFLM's reference kernels do it, vectorised with numpy.

Every function here reproduces one TFLM / gemmlowp primitive bit for bit:

* :func:`quantize_multiplier` — real multiplier -> (int32 significand, shift) via frexp
  and round-half-away-from-zero (TFLM's QuantizeMultiplier);
* :func:`saturating_rounding_doubling_high_mul`, :func:`rounding_divide_by_pot` —
  gemmlowp's fixed-point primitives;
* :func:`multiply_by_quantized_multiplier` — the double-rounding requantisation for
  int32 accumulators, :func:`multiply_by_quantized_multiplier_64` for int64 ones;
* :func:`activation_range_quantized` / :func:`activation_range_float` — fused
  activation clamps.

Arrays are int64 internally (exact for every int32 product); results are int64 arrays
holding int32 values unless stated otherwise.
"""
from __future__ import annotations

import math
import threading
from typing import Optional, Tuple, Union

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

# TfLiteFusedActivation values (same numbering as the schema's ActivationFunctionType).
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6, ACT_TANH, ACT_SIGN_BIT = range(6)

ArrayLike = Union[int, np.ndarray]


def round_half_away(x: np.ndarray) -> np.ndarray:
    """std::round: nearest integer, halves away from zero (exact for float32/64)."""
    x = np.asarray(x)
    t = np.trunc(x)
    frac = x - t  # exact
    return t + np.where(np.abs(frac) >= 0.5, np.sign(x), 0).astype(x.dtype)


def round_half_away_scalar(x: float) -> float:
    t = math.trunc(x)
    return float(t + (math.copysign(1.0, x) if abs(x - t) >= 0.5 else 0.0))


class TfliteCheckError(ValueError):
    """A requantisation parameter TFLM refuses or aborts on (one of its TFLITE_CHECKs /
    TF_LITE_ENSUREs fails, or its C is undefined and not emulated for the CPU): the
    interpreter reports it as a KernelError of the operator, in these words."""


def ieee_div(a, b) -> float:
    """``a / b`` in C double arithmetic: a zero divisor gives inf or nan, not an error."""
    with np.errstate(all="ignore"):
        return float(np.float64(a) / np.float64(b))


# ------------------------------------------------------------- C semantics per CPU
#: How the CPU a TFLM build runs on evaluates what C leaves undefined in the requantisation
#: routines at extreme scales (a multiplier of 2^31 or more gives a left shift of 32 or
#: more; an infinite one reaches a double -> int64 cast):
#:
#: * ``"x86"`` (host builds: the tflite-micro package, mcu32): ``1 << s`` for an int
#:   shifts by ``s & 31`` (SHL masks the count), an int64 one by ``s & 63``; the cast of
#:   inf / nan gives INT64_MIN, a float -> int32 conversion out of range gives INT32_MIN;
#: * ``"arm"`` (Cortex-M builds): ``x << s`` by a register uses the count's low byte and
#:   gives 0 from 32 on; the cast (``__aeabi_d2lz``) saturates: +inf -> INT64_MAX (then
#:   QuantizeMultiplier's TFLITE_CHECK aborts), -inf -> INT64_MIN, nan -> 0;
#: * ``"riscv"`` (RV32 builds: ESP32-C3 / C6 / H2 and upstream riscv32, rv32imc / rv32imac
#:   with libgcc's soft float; the ESP32-P4, rv32imafc): int32 shifts use ``s & 31`` (sll /
#:   sra read 5 bits of the count), an int64 shift is two-word code that shifts by
#:   ``s & 31`` below 32 and by ``32 + (s & 31)`` from 32 on (by 64: as by 32); every
#:   float / double -> int32 / int64 conversion saturates by sign, and a NaN gives the
#:   maximum (RISC-V arithmetic makes the canonical, positive NaN, which libgcc's soft-fp
#:   converts by its sign and the P4's fcvt.w.s converts to INT32_MAX whatever the sign), so
#:   QuantizeMultiplier of +inf and of nan aborts on TFLM's check, -inf gives (0, 0).
#:   Measured: benchmarks/esp_oracle/c_semantics_probe.c (both ISAs) and the RV32 TFLM
#:   builds on tests/data/rv32_extremes.json.
#:
#: The interpreter sets the CPU of its target around prepare and invoke
#: (:func:`c_semantics`); :func:`current_cpu` reads it (thread-local, "x86" by default).
CPUS = ("x86", "arm", "riscv")
_CPU = threading.local()


def current_cpu() -> str:
    """The CPU whose C semantics the requantisation helpers follow (see :data:`CPUS`)."""
    return getattr(_CPU, "name", "x86")


def debug_asserts() -> bool:
    """Whether the build keeps its debug assertions (no NDEBUG: gemmlowp's ``assert`` and
    TFLM's TFLITE_DCHECK abort), set by :class:`c_semantics` (False by default)."""
    return getattr(_CPU, "debug", False)


class c_semantics:
    """``with c_semantics("arm"):`` the helpers follow that CPU (re-entrant, thread-local);
    ``debug_checks=True``: and the build's debug assertions, which abort before the
    undefined shifts they guard (RoundingDivideByPOT's exponent in 0..31; the 64-bit
    MultiplyByQuantizedMultiplier's multiplier >= 0, shift in -31..7, |x| < 2^47): those
    raise :class:`TfliteCheckError`."""

    def __init__(self, cpu: str, debug_checks: bool = False):
        if cpu not in CPUS:
            raise ValueError(f"unknown CPU {cpu!r}")
        self.cpu = cpu
        self.debug = bool(debug_checks)

    def __enter__(self):
        self._saved = (getattr(_CPU, "name", None), getattr(_CPU, "debug", False))
        _CPU.name = self.cpu
        _CPU.debug = self.debug
        return self

    def __exit__(self, *exc):
        name, _CPU.debug = self._saved
        if name is None:
            del _CPU.name
        else:
            _CPU.name = name
        return False


def _assert_exponent(exponent) -> None:
    """gemmlowp RoundingDivideByPOT's ``assert(exponent <= 31)`` in a debug build."""
    if debug_asserts():
        raise TfliteCheckError(f"a rounding right shift by {int(np.max(exponent))}: gemmlowp's "
                               "assertion exponent <= 31 fails (the build aborts)")


def c_shift_factor(shift: ArrayLike) -> np.ndarray:
    """``1 << shift`` as TFLM's ``x * (1 << left_shift)`` evaluates it on the current CPU,
    for shifts >= 0, as the int32 value it has (2^31 wraps to -2^31): the caller
    multiplies and wraps to int32. Shifts of 32 or more are undefined in C: x86 masks
    them to ``shift & 31`` (so does RV32), Arm gives 0 (counts up to 255; the low byte
    beyond)."""
    s = np.asarray(shift, dtype=np.int64)
    if current_cpu() != "arm":
        eff = s & 31
        return wrap_int32(np.int64(1) << eff)
    low = s & 0xFF
    return np.where(low >= 32, 0, wrap_int32(np.int64(1) << np.minimum(low, 31)))


def c_shift_right(x: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """``x >> shift`` for int32 ``x`` and a count >= 0 as the current CPU evaluates it
    (counts of 32 or more are undefined in C): x86 and RV32 shift by ``shift & 31``, Arm
    by the count's low byte, all sign bits from 32 on."""
    x = np.asarray(x, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    if current_cpu() != "arm":
        return x >> (s & 31)
    low = s & 0xFF
    return np.where(low >= 32, x >> 31, x >> np.minimum(low, 31))


def c_float_to_int32(value) -> int:
    """The C conversion ``static_cast<int32_t>(value)`` of a float or double on the
    current CPU (truncation toward zero): a value outside the int32 range, inf or nan is
    undefined in C; x86 (CVTTSS2SI) gives INT32_MIN, Arm (VCVT) saturates (nan: 0), RV32
    saturates (nan: INT32_MAX, see :data:`CPUS`)."""
    v = float(value)
    cpu = current_cpu()
    if math.isnan(v):
        return INT32_MIN if cpu == "x86" else 0 if cpu == "arm" else INT32_MAX
    if -2147483648.0 <= v < 2147483648.0:
        return int(math.trunc(v))
    if cpu == "x86":
        return INT32_MIN
    return INT32_MAX if v > 0 else INT32_MIN


def c_float_to_int32_array(values: np.ndarray) -> np.ndarray:
    """:func:`c_float_to_int32` for each element of a float array (int64 result)."""
    x = np.asarray(values, dtype=np.float64)
    inside = (x >= -2147483648.0) & (x < 2147483648.0)       # False for nan
    result = np.trunc(np.where(inside, x, 0.0)).astype(np.int64)
    cpu = current_cpu()
    if cpu == "x86":
        return np.where(inside, result, INT32_MIN)
    nan = INT32_MAX if cpu == "riscv" else 0
    return np.where(inside, result, np.where(np.isnan(x), nan, np.where(x > 0, INT32_MAX, INT32_MIN)))


def _c_double_to_int64(value: float) -> int:
    """The C cast ``static_cast<int64_t>(value)`` of a non-finite double on the current
    CPU (see :data:`CPUS`)."""
    cpu = current_cpu()
    if cpu == "x86" or math.isinf(value) and value < 0:
        return -(1 << 63)
    if cpu == "riscv":
        return (1 << 63) - 1
    return (1 << 63) - 1 if value > 0 else 0


def c_shift_count64(count: ArrayLike) -> np.ndarray:
    """The count an int64 shift ``v << count`` / ``v >> count`` (count >= 0 or not) really
    uses on the current CPU, for counts outside 0..63 (undefined in C): x86 ``count & 63``;
    RV32 ``count & 31`` below 32, ``32 + (count & 31)`` from 32 on (see :data:`CPUS`).
    Arm is not emulated (a TfliteCheckError)."""
    c = np.asarray(count, dtype=np.int64)
    cpu = current_cpu()
    if cpu == "x86":
        return c & 63
    if cpu == "riscv":
        return np.where(c >= 32, 32 + (c & 31), c & 31)
    raise TfliteCheckError(f"a 64-bit shift by {c.ravel()[0] if c.size else c} is undefined in C "
                           "(not emulated for this CPU)")


def quantize_multiplier(real_multiplier: float) -> Tuple[int, int]:
    """TFLM's QuantizeMultiplier: significand in [2^30, 2^31) and a power-of-two shift
    (positive = left shift) with real_multiplier ~= significand * 2^(shift - 31).

    At the extremes it does what TFLM's does: a multiplier below about 2^-31 (shift <
    -31) becomes (0, 0); a significand that rounds to 2^31 becomes 2^30 with the shift
    one higher; huge multipliers keep their shift (far above 31; see
    :func:`c_shift_factor`); a negative one gives a negative significand; an infinite or
    nan one follows the C cast of the current CPU (x86: (0, 0); Arm: +inf fails TFLM's
    check ``q_fixed <= 2^31`` and aborts, raised here as a TfliteCheckError, -inf and nan
    give (0, 0); RV32: +inf and nan abort, -inf gives (0, 0))."""
    real_multiplier = float(real_multiplier)
    if real_multiplier == 0.0:
        return 0, 0
    if not math.isfinite(real_multiplier):
        q_fixed = _c_double_to_int64(real_multiplier)   # frexp leaves the exponent 0
        if q_fixed > (1 << 31):
            raise TfliteCheckError(f"QuantizeMultiplier({real_multiplier}): TFLM's check "
                             "q_fixed <= (1LL << 31) fails (the build aborts)")
        return wrap_int32(q_fixed), 0
    q, shift = math.frexp(real_multiplier)
    q_fixed = int(round_half_away_scalar(q * float(1 << 31)))
    if q_fixed > (1 << 31):
        raise ValueError(f"quantize_multiplier({real_multiplier}): significand out of range")
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if q_fixed > INT32_MAX:
        raise ValueError(f"quantize_multiplier({real_multiplier}): significand out of range")
    if shift < -31:
        shift = 0
        q_fixed = 0
    return q_fixed, shift


def quantize_multiplier_array(real_multipliers: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`quantize_multiplier` for each element (per-channel scales), vectorised:
    frexp, then std::round of the significand x 2^31 (exact: it has at most 53
    significant bits and lies below 2^31, so trunc and the fraction are exact)."""
    real = np.asarray(real_multipliers, dtype=np.float64).ravel()
    if not np.all(np.isfinite(real)):
        pairs = [quantize_multiplier(float(v)) for v in real]
        return (np.array([p[0] for p in pairs], dtype=np.int32),
                np.array([p[1] for p in pairs], dtype=np.int32))
    q, shift = np.frexp(real)
    scaled = q * float(1 << 31)
    whole = np.trunc(scaled)
    q_fixed = (whole + np.where(np.abs(scaled - whole) >= 0.5, np.sign(scaled), 0.0)).astype(np.int64)
    shift = shift.astype(np.int64)
    carry = q_fixed == (1 << 31)
    q_fixed = np.where(carry, q_fixed // 2, q_fixed)
    shift = shift + carry
    underflow = shift < -31
    q_fixed = np.where(underflow, 0, q_fixed)
    shift = np.where(underflow | (real == 0.0), 0, shift)
    return q_fixed.astype(np.int32), shift.astype(np.int32)


def quantize_multiplier_smaller_than_one_exp(real_multiplier: float) -> Tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: requires 0 < m < 1; shift <= 0."""
    if not 0.0 < real_multiplier < 1.0:
        raise TfliteCheckError(f"multiplier {real_multiplier} must be in (0, 1) (TFLM's "
                               "QuantizeMultiplierSmallerThanOneExp check fails: it aborts)")
    return quantize_multiplier(real_multiplier)


def quantize_multiplier_greater_than_one(real_multiplier: float) -> Tuple[int, int]:
    """QuantizeMultiplierGreaterThanOne: requires m > 1; shift >= 0."""
    if not real_multiplier > 1.0:
        raise TfliteCheckError(f"multiplier {real_multiplier} must be > 1 (TFLM's "
                               "QuantizeMultiplierGreaterThanOne check fails: it aborts)")
    m, s = quantize_multiplier(real_multiplier)
    if s < 0:
        raise TfliteCheckError(f"multiplier {real_multiplier}: negative shift")
    return m, s


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to the int32 range (C++ int32 overflow).
    Python ints stay Python ints (the scalar fast path of the fixed-point helpers)."""
    if type(x) is int:
        return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    return ((np.asarray(x, dtype=np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def saturating_rounding_doubling_high_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values (given as int64).

    The C++ form -- (a*b + nudge) / 2^31 with a sign-dependent nudge and a truncating
    division -- equals floor((a*b + 2^30) / 2^31) for every sign; the one overflow
    (INT32_MIN * INT32_MIN) is the only product that lands above INT32_MAX, so
    saturating at INT32_MAX covers it."""
    if type(a) is int and type(b) is int:
        return min((a * b + (1 << 30)) >> 31, INT32_MAX)
    ab = np.multiply(a, b, dtype=np.int64)
    return np.minimum((ab + (1 << 30)) >> 31, INT32_MAX)


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero (int32
    x, exponent 0..31; beyond 31, which gemmlowp only asserts against, as the CPU
    computes it: :func:`_c_rounding_divide_by_pot`)."""
    if type(x) is int and type(exponent) is int:
        if exponent > 31:
            _assert_exponent(exponent)
            return int(_c_rounding_divide_by_pot(np.int64(x), np.int64(exponent)))
        mask = (1 << exponent) - 1
        return (x >> exponent) + ((x & mask) > (mask >> 1) + (x < 0))
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    if np.any(exponent > 31):
        _assert_exponent(exponent)
        return _c_rounding_divide_by_pot(x, exponent)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def _c_rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """RoundingDivideByPOT on int32 ``x`` with exponents that may exceed 31, as the C
    code runs: the mask ``(1ll << e) - 1`` truncated to int32 (-1 from 32 on), the int32
    shift ``x >> e`` by the CPU's rule (x86: by e & 31; Arm: by the count's low byte,
    all sign bits from 32 on)."""
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    mask = wrap_int32((np.int64(1) << np.minimum(e & 63, 62)) - 1) if current_cpu() == "x86" else \
        wrap_int32((np.int64(1) << np.minimum(e, 62)) - 1)
    mask = np.where(e >= 32, -1, mask)
    shifted = c_shift_right(x, e)
    remainder = wrap_int32(x & mask)
    threshold = (mask >> 1) + (x < 0)
    return shifted + (remainder > threshold)


def _is_scalar(value) -> bool:
    """np.ndim(value) == 0, without its dispatch overhead for the usual ints."""
    if isinstance(value, (int, np.integer)):
        return True
    return np.ndim(value) == 0


def multiply_by_quantized_multiplier(x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """TFLM's double-rounding MultiplyByQuantizedMultiplier for int32 ``x``.

    ``multiplier`` / ``shift`` may be scalars or arrays broadcastable to ``x``
    (per-channel). The left shift wraps like C++ int32 arithmetic.

    Fast form, equal to SRDHM then RoundingDivideByPOT for multipliers >= 0 (TFLM's are
    always >= 0, so SRDHM cannot saturate): SRDHM(x, m) == (x*m + 2^30) >> 31 (the C++
    truncating division with its sign-dependent nudge reduces to this floor), and
    rounding half away from zero by 2^e (e >= 1) == (q + 2^(e-1) - (q < 0)) >> e."""
    x = np.asarray(x, dtype=np.int64)
    if _is_scalar(multiplier) and _is_scalar(shift):
        m, s = int(multiplier), int(shift)
        if m < 0:
            return _multiply_by_quantized_multiplier_generic(x, multiplier, shift)
        if s < -31:
            return _multiply_by_quantized_multiplier_generic(x, multiplier, shift)
        if s < 0 and m > 0:
            return _scaled_down_int32(x, m, -s)
        if s > 30:                      # x * (1 << s) as the CPU evaluates it
            x = wrap_int32(x * int(c_shift_factor(s)))
        elif s > 0:
            x = wrap_int32(x << s)
        q = (x * m + (1 << 30)) >> 31
        if s < 0:
            q = (q + ((1 << (-s - 1)) - (q < 0))) >> -s
        return q
    m = np.asarray(multiplier, dtype=np.int64)
    s = np.asarray(shift, dtype=np.int64)
    if (m < 0).any() or (s < -31).any():
        return _multiply_by_quantized_multiplier_generic(x, multiplier, shift)
    if (s > 30).any():
        x = wrap_int32(x * c_shift_factor(np.maximum(s, 0)))
    elif (s > 0).any():
        x = wrap_int32(x << np.maximum(s, 0))
    q = (x * m + (1 << 30)) >> 31
    e = np.maximum(-s, 0)
    half = np.where(e > 0, np.int64(1) << np.maximum(e - 1, 0), 0)
    return (q + half - ((q < 0) & (e > 0))) >> e


def _scaled_down_int32(x: np.ndarray, m: int, e: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplier for int32 values ``x`` (as int64), a multiplier
    ``m`` > 0 and a right shift ``e`` >= 1, in one rounding shift (in-place passes, one
    new array). With q = (x*m + 2^30) >> 31 (SRDHM), the rounding divide is
    (q + 2^(e-1) - [q < 0]) >> e; nested floor shifts combine into
    (x*m + 2^30 + (2^(e-1) - [q < 0]) * 2^31) >> (31 + e), and q < 0 exactly when
    x*m < -2^30, i.e. when x < t = -floor(2^30 / m) (x an integer). (x - t) >> 63 is
    -1 there and 0 elsewhere (|x - t| < 2^32), so the correction is that shifted left
    by 31. Every intermediate stays inside int64: |x*m| < 2^62 and the added constants
    are below 2^62."""
    threshold = -((1 << 30) // m)
    fix = np.subtract(x, threshold)
    fix >>= 63
    fix <<= 31
    p = np.multiply(x, m)
    p += (1 << 30) + (1 << (e + 30))
    p += fix
    p >>= 31 + e
    return p


def _multiply_by_quantized_multiplier_generic(x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """MultiplyByQuantizedMultiplier composed literally from the two gemmlowp primitives."""
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    if np.any(left):
        x = wrap_int32(x * c_shift_factor(left))
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), right)


def multiply_by_quantized_multiplier_64(x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """TFLM's MultiplyByQuantizedMultiplier for int64 ``x`` (16x8 kernels): the
    multiplier is reduced to 16 bits, then one rounding shift; result cast to int32."""
    x = np.asarray(x, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    if debug_asserts() and (np.any(multiplier < 0) or np.any(shift < -31) or np.any(shift > 7)
                            or x.size and (x.min() < -(1 << 47) or x.max() >= 1 << 47)):
        raise TfliteCheckError("the 64-bit MultiplyByQuantizedMultiplier's debug assertions "
                               "(multiplier >= 0, shift in -31..7, |x| < 2^47) fail for a "
                               f"multiplier of {int(np.min(multiplier))} and a shift of "
                               f"{int(np.max(shift))} (the build aborts)")
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    total_shift = 15 - shift
    if np.any(total_shift < 1) or np.any(total_shift > 63):
        # shift counts outside 0..63 are undefined in C: as the CPU shifts (c_shift_count64)
        if current_cpu() == "arm":
            raise TfliteCheckError(f"a requantisation shift of {int(np.max(shift))} makes TFLM's "
                             "64-bit MultiplyByQuantizedMultiplier shift by a count outside "
                             "0..63 (undefined in C; not emulated for this CPU)")
        with np.errstate(over="ignore"):
            product = x * reduced                       # wraps as the C int64 product does
            result = (product + (np.int64(1) << c_shift_count64(total_shift - 1))) \
                >> c_shift_count64(total_shift)
        return wrap_int32(result)
    result = (x * reduced + (np.int64(1) << (total_shift - 1))) >> total_shift
    return wrap_int32(result)


def multiply_by_quantized_multiplier_smaller_than_one_exp(x: ArrayLike, multiplier: int, left_shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (left_shift <= 0)."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -left_shift)


def multiply_by_quantized_multiplier_greater_than_one(x: ArrayLike, multiplier: int, left_shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierGreaterThanOne (left_shift >= 0)."""
    x = wrap_int32(np.asarray(x, dtype=np.int64) * c_shift_factor(left_shift))
    return saturating_rounding_doubling_high_mul(x, multiplier)


# ----------------------------------------------------------------- activations
_TYPE_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def _quantize_float(value: float, scale: float, zero_point: int) -> int:
    """TFLM's kernel_util Quantize: round(f / scale) in float32, then + zero point."""
    with np.errstate(all="ignore"):
        tmp = np.float32(value) / np.float32(scale)
        tmp = round_half_away(np.asarray(tmp, dtype=np.float32))
    if not (np.float32(INT32_MIN) <= tmp <= np.float32(INT32_MAX)):
        raise TfliteCheckError(f"the activation bound {value} / scale {scale} does not fit int32 "
                               "(TFLM: no_integer_overflow_from_quantization was not true)")
    return int(zero_point) + int(tmp)


def activation_range_quantized(activation: int, dtype: np.dtype, scale: float,
                               zero_point: int) -> Tuple[int, int]:
    """CalculateActivationRangeQuantized for an int8/uint8/int16 output tensor."""
    key = np.dtype(dtype).name
    if key not in _TYPE_RANGES:
        raise ValueError(f"quantized activation range needs an int8, uint8 or int16 output, not {key}")
    qmin, qmax = _TYPE_RANGES[key]
    if activation == ACT_RELU:
        return max(qmin, _quantize_float(0.0, scale, zero_point)), qmax
    if activation == ACT_RELU6:
        return (max(qmin, _quantize_float(0.0, scale, zero_point)),
                min(qmax, _quantize_float(6.0, scale, zero_point)))
    if activation == ACT_RELU_N1_TO_1:
        return (max(qmin, _quantize_float(-1.0, scale, zero_point)),
                min(qmax, _quantize_float(1.0, scale, zero_point)))
    return qmin, qmax


def activation_range_float(activation: int) -> Tuple[float, float]:
    """CalculateActivationRange for float: (min, max) as float32 values. Without an
    activation the bounds are the float limits (not infinities), so TFLM clamps
    infinite results to +-3.4028235e38."""
    big = np.finfo(np.float32).max
    lo, hi = -big, big
    if activation == ACT_RELU:
        lo = 0.0
    elif activation == ACT_RELU6:
        lo, hi = 0.0, 6.0
    elif activation == ACT_RELU_N1_TO_1:
        lo, hi = -1.0, 1.0
    return np.float32(lo), np.float32(hi)


def quantized_convolution_multiplier(input_scale: float, filter_scale: float, output_scale: float,
                                     bias_scale: float = None) -> float:
    """GetQuantizedConvolutionMultipler: (input_scale * filter_scale) / output_scale,
    every scale widened to double before the product and the division; with a bias,
    its scale must be within 2 % of an output step of the product (TFLM rejects the
    model otherwise).

    The product is a double product in the TFLM we emulate (the tflite-micro package:
    its machine code converts both float scales to double, then multiplies), although
    the 2026-08 source (tensorflow/lite/kernels/kernel_util.cc) rounds the product to
    float first; the float32 product gives a multiplier a few units off in the last
    places, enough to move outputs by one step on accumulators near a rounding
    boundary (issue 17)."""
    with np.errstate(all="ignore"):     # C double arithmetic: x / 0 is inf or nan
        if bias_scale is not None:
            product64 = np.float64(input_scale) * np.float64(filter_scale)
            diff = abs(product64 - np.float64(bias_scale))
            if not diff / np.float64(output_scale) <= 0.02:
                raise ValueError(
                    f"bias scale {bias_scale} does not match input_scale * filter_scale "
                    f"({float(product64)}) within 2% of the output scale {output_scale} (TFLM: "
                    "scale_diff / output_scale <= 0.02 was not true)")
        product = np.float64(np.float32(input_scale)) * np.float64(np.float32(filter_scale))
        if not product >= 0:
            raise ValueError(f"input_scale * filter_scale is {float(product)} (TFLM: "
                             "input_product_scale >= 0 was not true)")
        return float(product / np.float64(np.float32(output_scale)))


_WORK = threading.local()

try:  # numpy's clip ufunc: one pass, without np.clip's Python-level wrapper
    clip_into = np._core.umath.clip
except AttributeError:  # numpy < 2
    clip_into = np.core.umath.clip


#: work buffers below this many elements are not pooled
_POOLED_MIN_ELEMENTS = 4096


def work_buffer(role: str, shape: Tuple[int, int], dtype, transposed: bool = False) -> np.ndarray:
    """A reusable host-side scratch array of ``shape`` (``transposed``: laid out as the
    transpose of ``shape``, to match a transposed operand), one growing buffer per
    ``role`` and dtype and per thread. Large numpy temporaries are fresh memory mappings
    whose page faults can cost more than the arithmetic; reusing one buffer avoids them.
    The contents are valid until the next call with the same role in the same thread.
    Small buffers are fresh arrays: cheaper than the pool's bookkeeping."""
    count = int(shape[0]) * int(shape[1])
    if count < _POOLED_MIN_ELEMENTS:
        return np.empty(shape[::-1], dtype).T if transposed else np.empty(shape, dtype)
    pool = _WORK.__dict__.setdefault("pool", {})
    key = (role, np.dtype(dtype).str)
    buf = pool.get(key)
    if buf is None or buf.size < count:
        buf = pool[key] = np.empty(max(count, 4096), dtype)
    flat = buf[:count]
    return flat.reshape(shape[::-1]).T if transposed else flat.reshape(shape)


class ChannelRequantizer:
    """The output stage of TFLM's per-channel integer kernels (conv, depthwise conv,
    transpose conv, ...) for a fixed multiplier / shift / bias per channel, on arrays with
    the channels on axis 0 (shape (C, N): every per-channel constant then broadcasts
    over a long contiguous row, which keeps numpy fast):

        acc (+ bias) -> MultiplyByQuantizedMultiplier -> + output_offset -> clamp

    ``int64_accum=False``: int32 accumulator (wrapping like the C++ int32 sum; the bias
    add wraps too) and the double-rounding 32-bit MultiplyByQuantizedMultiplier;
    ``int64_accum=True``: int64 accumulator and the 64-bit MultiplyByQuantizedMultiplier
    (16-bit reduced multiplier, one rounding shift, result narrowed to int32).

    Bit-exact with :func:`multiply_by_quantized_multiplier` /
    :func:`multiply_by_quantized_multiplier_64` for multipliers >= 0 (what
    QuantizeMultiplier produces), with fewer passes: SaturatingRoundingDoublingHighMul
    with a non-negative multiplier is ``(x * m + 2^30) >> 31`` for either sign (it cannot
    saturate) and is negative exactly when ``x * m + 2^30`` is; RoundingDivideByPOT by
    ``r`` >= 1 is ``(q + 2^(r-1) - [q < 0]) >> r``; and nested floor shifts combine, so
    the whole 32-bit routine is ``(x*m + 2^30 + (2^(r-1) - [neg]) * 2^31) >> (31 + r)``.
    The bias and the output offset are folded into those constants when no
    intermediate can overflow. ``acc_bound`` (max |accumulator| before the bias, or
    None if unknown) tells whether the int32 accumulator can wrap."""

    def __init__(self, multiplier, shift, bias=None, output_offset: int = 0,
                 act_min: int = INT32_MIN, act_max: int = INT32_MAX, int64_accum: bool = False,
                 acc_bound=None):
        self.float64 = None
        self.runtime_bound = None
        self._fused = {}
        m = np.asarray(multiplier, dtype=np.int64).reshape(-1)
        shift = np.asarray(shift, dtype=np.int64).reshape(-1)
        col = (-1, 1)
        #: multipliers outside QuantizeMultiplier's usual range (negative, from a negative
        #: scale; or a left shift of 31 or more, from huge scales): the plain composition
        #: of TFLM's routine with the CPU's C semantics (:func:`c_shift_factor`)
        self.reference = None
        if np.any(m < 0) or np.any(shift > 30) or (int64_accum and np.any(15 - shift < 1)):
            self.reference = (m.reshape(col), shift.reshape(col))
            self.bias = None if bias is None else np.asarray(bias, dtype=np.int64).reshape(col)
            self.act_min, self.act_max = int(act_min), int(act_max)
            self.int64_accum = bool(int64_accum)
            self.offset = int(output_offset)
            return
        self.bias = None if bias is None else np.asarray(bias, dtype=np.int64).reshape(col)
        self.act_min, self.act_max = int(act_min), int(act_max)
        self.int64_accum = bool(int64_accum)
        bias_max = 0 if bias is None else int(np.abs(self.bias).max(initial=0))
        offset = int(output_offset)
        if self.int64_accum:
            reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
            total_shift = 15 - shift
            if np.any(total_shift < 1) or np.any(total_shift > 62):
                raise ValueError("shift out of range for the 64-bit requantisation")
            self.mult = reduced.reshape(col)
            self.shift = total_shift.reshape(col)
            add = np.int64(1) << total_shift.reshape(col) - 1
            # (x + b) * rm wraps in int64 exactly as x * rm + b * rm does
            self.fold_bias = True
            self.add = add + (0 if self.bias is None else self.bias * self.mult)
            # the int32 narrowing can be skipped when the result provably fits
            self.needs_wrap = acc_bound is None or (
                (float(acc_bound) + bias_max) * float(reduced.max(initial=0))
                / 2.0 ** float(total_shift.min(initial=62)) + 2 >= 2.0 ** 31)
            self.offset = offset
            return
        # Where the high-mul result is negative, the true rounding and the one without the
        # sign correction both give at most the output offset: (p + 2^(r-1) 2^31) >> (31+r)
        # <= 0 for p < 0, and RoundingDivideByPOT of a negative value is <= 0. When the
        # clamp's lower bound is at least the offset (ReLU, ReLU6: act_min = offset), both
        # clamp to act_min there, so the correction changes nothing and is skipped.
        self.fix_matters = self.act_min < offset
        left = np.maximum(shift, 0)
        right = np.maximum(-shift, 0)
        if np.any(right > 31):
            raise ValueError("shift out of range for the 32-bit requantisation")
        self.left = left.reshape(col) if np.any(left) else None
        self.mult = m.reshape(col)
        self.shift = (31 + right).reshape(col)
        self.neg_fix = np.where(right > 0, np.int64(1) << 31, 0).reshape(col)
        half = ((np.int64(1) << right) >> 1).reshape(col) << 31
        self.may_wrap = acc_bound is None or float(acc_bound) + bias_max >= 2.0 ** 31
        self.fold_bias = self.bias is not None and not self.may_wrap and self.left is None
        base = np.int64(1) << 30
        if self.fold_bias:
            base = base + self.bias * self.mult
        self.base = base
        # output offset folded into the final shift: (p >> S) + z == (p + z * 2^S) >> S
        if offset and abs(offset) + 1 < 2 ** (62 - int(self.shift.max())):
            self.half = half + (np.int64(offset) << self.shift)
            self.offset = 0
        else:
            self.half = half
            self.offset = offset
        self._plan_float64(acc_bound)
        if self.float64 is None and acc_bound is not None:
            self._plan_runtime_bound(acc_bound)

    def _plan_runtime_bound(self, acc_bound) -> None:
        """When the float64 plan fails only because the worst-case accumulator bound is
        large (sum |filter| x the largest input, rarely approached), the plan for the
        largest bound B it allows, used on a call only when that call's accumulators all
        lie within +-B (checked, else the integer form): exact on every input."""
        if self.left is not None or not (self.fold_bias or (self.bias is None and not self.may_wrap)):
            return
        m = self.mult.reshape(-1).astype(np.float64)
        if not np.any(m > 0):
            return
        base = np.abs(np.broadcast_to(self.base, self.mult.shape).reshape(-1).astype(np.float64))
        half = np.abs(np.broadcast_to(self.half, self.mult.shape).reshape(-1).astype(np.float64))
        fix = np.broadcast_to(self.neg_fix, self.mult.shape).reshape(-1).astype(np.float64)
        room = float(1 << 51) - base - half - fix - np.ldexp(float(abs(self.offset)), self.shift.reshape(-1))
        # (bound + 1) m < room for every channel, with a margin of one for rounding; a
        # channel without room (a huge shift) must turn out constant over that bound
        usable = (m > 0) & (room > 0)
        if not np.any(usable):
            return
        bound = float(np.floor(np.min(room[usable] / m[usable]))) - 3.0
        if not 1024.0 <= bound < float(acc_bound):
            return
        self._plan_float64(bound)
        if self.float64 is not None:
            self.runtime_bound = bound

    def covers(self, acc: np.ndarray) -> bool:
        """Whether the float64 plan (and its fused form) is exact for these accumulators:
        always for a plan made for the static bound; for a run-time bound, when every
        accumulator lies within it."""
        bound = self.runtime_bound
        if bound is None:
            return True
        return bool(acc.size == 0 or (-bound <= float(acc.min()) and float(acc.max()) <= bound))

    def _plan_float64(self, acc_bound) -> None:
        """A float64 form of the folded 32-bit routine, used when it is exact: every
        intermediate is an integer (or an integer scaled by a power of two) below 2^53.

            out = floor(x * m/2^S + (base + half)/2^S - [x*m + base < 0] * neg_fix/2^S)

        The sign test is ``x < T`` with the integer T = ceil(-base / m) per channel."""
        self.float64 = None
        if not self.fold_bias and not (self.bias is None and not self.may_wrap and self.left is None):
            return
        if acc_bound is None:
            return
        m = self.mult.reshape(-1).astype(np.float64)
        base = np.broadcast_to(self.base, self.mult.shape).reshape(-1)
        half = np.broadcast_to(self.half, self.mult.shape).reshape(-1)
        fix = np.broadcast_to(self.neg_fix, self.mult.shape).reshape(-1)
        shift = self.shift.reshape(-1)
        # every term below 2^51 (checked in float64 with room for its rounding): then the
        # float64 products and sums below are exact integers scaled by powers of two
        # an output offset the integer form could not fold (a large shift elsewhere) is
        # folded here: (base + half + offset 2^S) / 2^S
        unfolded = float(abs(self.offset))
        size = (float(acc_bound) + 1.0) * m + np.abs(base.astype(np.float64)) \
            + np.abs(half.astype(np.float64)) + fix.astype(np.float64) \
            + np.ldexp(unfolded, shift)
        # a channel beyond that range whose output is one value over every accumulator
        # (typically a huge shift: a channel of near-zero scale) is that constant
        constant = ~(size < float(1 << 51))
        values = np.zeros(size.shape, np.int64)
        if np.any(constant):
            values, constant = self._constant_channels(constant, acc_bound)
            if values is None:
                return
        size = np.where(constant, 0.0, size)
        self._float64_size = size
        self._constant = (constant, values)
        scale = np.ldexp(1.0, -shift)
        k = np.where(constant, 0.0, m * scale)
        c = np.where(constant, values.astype(np.float64),
                     (base + half).astype(np.float64) * scale + float(self.offset))
        d = np.where(constant, 0.0, fix.astype(np.float64) * scale)
        mi = self.mult.reshape(-1)
        t = np.where(mi != 0, -(base // np.where(mi != 0, mi, 1)), 0).astype(np.float64)
        t[(mi == 0) | constant] = -np.inf             # ceil(-base / m); none when m == 0
        # every accumulator is within +-acc_bound, so a threshold beyond it is moved to
        # +-(acc_bound + 1) (same comparisons); below 2^24 it is then exact in float32,
        # which compares with float32 accumulators without a conversion
        limit = float(acc_bound) + 1.0
        t = np.clip(t, -limit, limit)
        t32 = t.astype(np.float32) if limit <= float(1 << 24) else None
        col = (-1, 1)
        self.float64 = (k.reshape(col), c.reshape(col), d.reshape(col), t.reshape(col),
                        bool(np.any(d)) and self.fix_matters,
                        None if t32 is None else t32.reshape(col))
        self._fused = {}

    def _constant_channels(self, candidates: np.ndarray, acc_bound):
        """(output value per channel, constant mask) for the ``candidates`` channels when
        each gives one output over every accumulator |x| <= acc_bound, else (None, None).
        The integer routine (without the float64 plan) is evaluated at x = -B and B
        (B = floor(acc_bound)): it is non-decreasing in x (x * m + base grows with x, and
        the sign correction only lowers the results below the threshold), so equal ends
        mean one value throughout (after the clamp, which keeps that order)."""
        bound = int(math.floor(float(acc_bound)))
        channels = candidates.size
        ends = np.tile(np.array([-bound, bound], dtype=np.int64), (channels, 1))
        out = np.asarray(self(ends), dtype=np.int64)
        if not np.all(out[candidates, 0] == out[candidates, 1]):
            return None, None
        return np.where(candidates, out[:, 0], 0), candidates

    def fused(self, out_dtype) -> Optional["FusedRequant"]:
        """The float64 plan rearranged for kernels that fold it into their own arithmetic
        (see :class:`FusedRequant`), for outputs of ``out_dtype`` (int8 or int16); None
        when the plan does not apply or the shifted constants would leave the exact range."""
        if self.float64 is None or self.int64_accum:
            return None
        key = np.dtype(out_dtype).str
        if key not in self._fused:
            self._fused[key] = FusedRequant.from_plan(self, np.dtype(out_dtype))
        return self._fused[key]

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        """``acc``: exact integer sums without the bias, channels on axis 0 (any integer or
        integral float dtype, any layout of the other axes). Returns the clamped values as int64
        (or float64 holding integers, when the float64 form is exact), shape (C, N); the
        float64 result is a reused work buffer (see :func:`work_buffer`): consume it before
        the next call."""
        acc = np.asarray(acc)
        channels = acc.shape[0]
        if self.reference is not None:
            m, s = self.reference
            x = np.array(acc, dtype=np.int64).reshape(channels, -1)
            if self.bias is not None:
                x += self.bias
            if self.int64_accum:
                p = multiply_by_quantized_multiplier_64(x, m, s)
            else:
                p = multiply_by_quantized_multiplier(wrap_int32(x), m, s)
            p = p + self.offset
            clip_into(p, self.act_min, self.act_max, out=p)
            return p
        if self.float64 is not None and not self.int64_accum and self.covers(acc):
            k, c, d, threshold, any_fix, threshold32 = self.float64
            x = acc.reshape(channels, -1)
            if threshold32 is not None and x.dtype == np.float32:
                threshold = threshold32
            transposed = x.ndim == 2 and x.strides[0] < x.strides[1]
            t = work_buffer("requant", x.shape, np.float64, transposed)
            np.multiply(x, k, out=t)
            t += c
            if any_fix:
                # (a masked subtract, ``where=``, is several times slower in numpy)
                mask = work_buffer("requant-mask", x.shape, np.bool_, transposed)
                fix = work_buffer("requant-fix", x.shape, np.float64, transposed)
                np.less(x, threshold, out=mask)
                np.multiply(mask, d, out=fix)
                t -= fix
            np.floor(t, out=t)
            clip_into(t, self.act_min, self.act_max, out=t)
            return t
        if self.int64_accum:
            p = np.array(acc, dtype=np.int64).reshape(channels, -1)
            p *= self.mult
            p += self.add
            p >>= self.shift
            if self.needs_wrap:
                p = wrap_int32(p)
        else:
            if self.fold_bias or (self.bias is None and not self.may_wrap and self.left is None):
                p = np.array(acc, dtype=np.int64).reshape(channels, -1)
                p *= self.mult
            else:
                x = np.array(acc, dtype=np.int64).reshape(channels, -1)
                if self.bias is not None:
                    x += self.bias
                if self.may_wrap:
                    x = wrap_int32(x)
                if self.left is not None:
                    x = wrap_int32(x << self.left)
                p = x * self.mult
            p += self.base
            if self.fix_matters:
                neg = p >> 63            # -1 where the high-mul result is negative
                neg &= self.neg_fix      # 2^31 there when a rounding shift follows
                p -= neg
            p += self.half
            p >>= self.shift
        if self.offset:
            p += self.offset
        clip_into(p, self.act_min, self.act_max, out=p)
        return p


class FusedRequant:
    """ChannelRequantizer's float64 plan in a form that kernels fold into their own float64
    arithmetic, for int8 / int16 outputs in NHWC order (channels on the last axis):

        t = x * k + c            (k = m / 2^S, c = (base + half + U 2^S) / 2^S per channel)
        t -= d where x < T       (the sign correction, only when it can matter)
        out = cast_unsigned(clip(t, act_min + U, act_max + U)) - U

    with U = 2^(bits - 1) of the output type. Exactness (all per channel, with the
    plan's bound: |x| <= acc_bound, |x * m| + |base + half| + U 2^S + fix < 2^51):

    * ``t`` is (integer) / 2^S with |integer| < 2^51, so every float64 step that builds it
      is exact, whether it is one multiply and one add (:meth:`scale_into`) or a BLAS
      product of integer operands with the weights pre-multiplied by k (:meth:`weights`;
      c in a column of ones, or added after): each product w * m is an integer < 2^38,
      each term and partial sum (any order, with or without FMA) an integer multiple of
      2^-S below 2^51 * 2^-S in magnitude (partial sums of sum |w x| m <= acc_bound m);
    * ``x < T`` (T the plan's integer threshold) is ``t < T * k + c``: x -> x * k + c is
      increasing (k > 0; channels with m = 0 have no threshold) and T * k + c is exact;
    * the plan's result is floor(t) clamped to [act_min, act_max] (without U); with U
      added, clip then the float -> unsigned integer cast (C's conversion drops the
      fraction, which for the non-negative clipped values is floor) gives
      clamp(floor(t)) + U (floor and a clamp to integer bounds commute), and flipping the
      top bit of the unsigned value subtracts U modulo 2^bits: the signed output.

    When U 2^S does not fit (large shifts, int16 outputs), U is 0 and ``finish`` clips,
    floors and casts the (then integral, in-range) values to the signed type.

    A plan made for a run-time bound (``runtime_bound``, see
    :meth:`ChannelRequantizer.covers`) is exact only on accumulators within it: callers
    check ``covers(acc)`` first (and cannot fold it into a product whose sums they never
    see).
    """

    runtime_bound = None

    def covers(self, acc: np.ndarray) -> bool:
        return True

    def __init__(self, k, c, threshold, fix, any_fix: bool, lo: float, hi: float,
                 unsigned, type_offset: int):
        self.k, self.c, self.threshold, self.fix = k, c, threshold, fix
        self.any_fix = any_fix
        self.lo, self.hi = lo, hi
        self.unsigned = unsigned
        self.type_offset = type_offset
        self._rows = {}

    @classmethod
    def from_plan(cls, rq: "ChannelRequantizer", out_dtype: np.dtype) -> Optional["FusedRequant"]:
        if out_dtype == np.int8:
            unsigned, offset = np.uint8, 1 << 7
        elif out_dtype == np.int16:
            unsigned, offset = np.uint16, 1 << 15
        else:
            return None
        if not (-offset <= rq.act_min <= rq.act_max < offset):
            return None
        constant, values = rq._constant
        shift = np.where(constant, 0, rq.shift.reshape(-1))
        if not np.all(rq._float64_size + np.ldexp(float(offset), shift) < float(1 << 51)):
            # U 2^S would leave the exact range: no shift, an explicit floor instead
            unsigned, offset = None, 0
        k, c, d, t, any_fix, _ = rq.float64
        k, plan_c, d, t = (v.reshape(-1) for v in (k, c, d, t))
        # the plan's c ((base + half + z 2^S) 2^-S with z the output offset the integer form
        # left unfolded, or a constant channel's value) shifted by U: exact by the size
        # check, which the subtraction back confirms
        c = plan_c + float(offset)
        if not np.array_equal(c - float(offset), plan_c):
            return None    # pragma: no cover  (the size check above rules this out)
        threshold = np.where(np.isfinite(t), t * k + c, -np.inf)
        fused = cls(k, c, threshold, d, any_fix, float(rq.act_min + offset),
                    float(rq.act_max + offset), unsigned, offset)
        fused.covers = rq.covers
        fused.runtime_bound = rq.runtime_bound
        return fused

    def weights(self, w: np.ndarray) -> np.ndarray:
        """(K + 1, O) float64 matrix for ``[cols, 1] @ matrix == x * k + c`` where
        ``x = cols @ w.T`` (``w``: (O, K) integer weights)."""
        w = np.asarray(w, dtype=np.float64)
        return np.ascontiguousarray(np.vstack([w.T * self.k, self.c[None, :]]))

    def row(self, name: str, reps: int) -> np.ndarray:
        """A per-channel constant tiled ``reps`` times (for rows holding several pixels)."""
        key = (name, reps)
        if key not in self._rows:
            self._rows[key] = np.tile(getattr(self, name), reps)
        return self._rows[key]

    def scale_into(self, acc: np.ndarray, t: np.ndarray, reps: int = 1) -> None:
        """t = acc * k + c (float64), ``acc``: exact integer sums (any float dtype), last
        axis = ``reps`` pixels x the channels."""
        # the widening first (a plain cast), then float64 passes in place: faster than a
        # mixed-type multiply, the same values (acc is exact in either type)
        np.copyto(t, acc)
        np.multiply(t, self.row("k", reps), out=t)
        np.add(t, self.row("c", reps), out=t)

    def finish(self, t: np.ndarray, out: np.ndarray, reps: int = 1) -> None:
        """The sign correction, clamp and narrowing of ``t`` (modified in place) into the
        int8 / int16 array ``out`` of the same shape (last axis = ``reps`` pixels x the
        channels)."""
        self.clamp(t, reps)
        self.narrow(t, out)

    def clamp(self, t: np.ndarray, reps: int = 1) -> None:
        """The sign correction and the clamp, in place (last axis = ``reps`` pixels x the
        channels; contiguous arrays are much faster)."""
        if self.any_fix:
            mask = np.less(t, self.row("threshold", reps))
            t -= np.multiply(mask, self.row("fix", reps))
        clip_into(t, self.lo, self.hi, out=t)

    def narrow(self, t: np.ndarray, out: np.ndarray) -> None:
        """Clamped ``t`` (see :meth:`clamp`) into the int8 / int16 ``out`` of its shape."""
        if self.unsigned is None:
            np.floor(t, out=t)
            np.copyto(out, t, casting="unsafe")
            return
        raw = out.view(self.unsigned)
        np.copyto(raw, t, casting="unsafe")
        np.bitwise_xor(raw, self.unsigned(self.type_offset), out=raw)


# ------------------------------------------------ float activation bounds (TFLM exact)
_FLT_MAX = np.float32(np.finfo(np.float32).max)


def activation_bounds_float32(activation: int) -> Tuple[np.float32, np.float32]:
    """TFLM's CalculateActivationRange<float>: NONE (and TANH / SIGN_BIT) give
    [lowest, max] of float, i.e. +-FLT_MAX, not infinities (an infinite result is
    clamped to +-FLT_MAX); RELU gives [0, FLT_MAX]."""
    if activation == ACT_RELU:
        return np.float32(0.0), _FLT_MAX
    if activation == ACT_RELU6:
        return np.float32(0.0), np.float32(6.0)
    if activation == ACT_RELU_N1_TO_1:
        return np.float32(-1.0), np.float32(1.0)
    return -_FLT_MAX, _FLT_MAX


def clamp_float32(x: np.ndarray, lo, hi) -> np.ndarray:
    """ActivationFunctionWithMinMax: std::min(std::max(x, lo), hi) (NaN passes through)."""
    x = np.asarray(x, dtype=np.float32)
    lo, hi = np.float32(lo), np.float32(hi)
    x = np.where(x < lo, lo, x)
    return np.where(hi < x, hi, x).astype(np.float32, copy=False)


# ------------------------------------- gemmlowp fixed point on int32 raw values (int64)
# FixedPoint<int32, I> holds a value v as the raw int32 round(v * 2^(31 - I)). Sums wrap
# like the int32 arithmetic of the compiled C++; products are SRDHM. Every function takes
# and returns int64 arrays holding int32 values.

def c_div(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """C++ integer division (truncation toward zero)."""
    if type(a) is int and type(b) is int:
        q = abs(a) // abs(b)
        return -q if (a < 0) != (b < 0) else q
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def saturating_rounding_multiply_by_pot(x: ArrayLike, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT<exponent> for int32: a saturating left
    shift for exponent > 0, a rounding right shift for exponent < 0."""
    if type(x) is int:
        if exponent <= 0:
            return rounding_divide_by_pot(x, -exponent) if exponent else x
        threshold = (1 << (31 - exponent)) - 1
        return INT32_MAX if x > threshold else (INT32_MIN if x < -threshold else x << exponent)
    x = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def rounding_half_sum(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp RoundingHalfSum for int32: (a + b + sign) / 2, truncating."""
    if type(a) is int and type(b) is int:
        total = a + b
        return c_div(total + (1 if total >= 0 else -1), 2)
    s = np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64)
    return c_div(s + np.where(s >= 0, 1, -1), 2)


def _exp_on_quarter_interval(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0) (FixedPoint<int32, 0> in and out): Taylor series
    around -1/8 (gemmlowp exp_on_interval_between_negative_one_quarter_and_0_excl)."""
    srdhm = saturating_rounding_doubling_high_mul
    exp_minus_one_eighth, one_third = 1895147668, 715827883
    x = wrap_int32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(
        wrap_int32(srdhm(wrap_int32(x4_over_4 + x3), one_third) + x2), 1)
    return wrap_int32(exp_minus_one_eighth + srdhm(exp_minus_one_eighth, wrap_int32(x + poly)))


# exp(-2^k) as FixedPoint<int32, 0> raws, for k = -2 .. 4 (gemmlowp's barrel shifter)
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def exp_on_negative_values(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp exp_on_negative_values: exp(a) for a <= 0 given as FixedPoint<int32,
    integer_bits>; result FixedPoint<int32, 0> (exp(0) = INT32_MAX)."""
    a = np.asarray(a, dtype=np.int64)
    frac_bits = 31 - integer_bits
    quarter = 1 << (frac_bits - 2)
    a_mod_quarter_minus_quarter = (a & (quarter - 1)) - quarter
    result = _exp_on_quarter_interval(
        saturating_rounding_multiply_by_pot(a_mod_quarter_minus_quarter, integer_bits))
    remainder = wrap_int32(a_mod_quarter_minus_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = (remainder >> (frac_bits + exponent)) & 1
            result = np.where(bit != 0, saturating_rounding_doubling_high_mul(result, multiplier), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal_half_denominator(a: np.ndarray) -> np.ndarray:
    """x ~= 1 / ((1 + a) / 2) as FixedPoint<int32, 2> (a in [0, 1) as FixedPoint<int32,
    0>): 48/17 - 32/17 * d, then three Newton-Raphson steps."""
    srdhm = saturating_rounding_doubling_high_mul
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap_int32(1515870810 + srdhm(half_denominator, -1010580540))
    one_f2 = 1 << 29
    for _ in range(3):
        one_minus = wrap_int32(one_f2 - srdhm(half_denominator, x))
        x = wrap_int32(x + saturating_rounding_multiply_by_pot(srdhm(x, one_minus), 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: ArrayLike) -> np.ndarray:
    """gemmlowp one_over_one_plus_x_for_x_in_0_1 (FixedPoint<int32, 0> in and out)."""
    x = _newton_reciprocal_half_denominator(a if type(a) is int else np.asarray(a, dtype=np.int64))
    return saturating_rounding_multiply_by_pot(x, 1)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: ArrayLike) -> np.ndarray:
    """gemmlowp one_minus_x_over_one_plus_x_for_x_in_0_1 (FixedPoint<int32, 0>)."""
    x = _newton_reciprocal_half_denominator(np.asarray(a, dtype=np.int64))
    return saturating_rounding_multiply_by_pot(wrap_int32(x - (1 << 29)), 2)


def fixed_point_logistic(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp logistic of FixedPoint<int32, integer_bits>; FixedPoint<int32, 0> out."""
    a = np.asarray(a, dtype=np.int64)
    positive = a > 0
    abs_a = np.where(positive, a, wrap_int32(-a))
    if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(wrap_int32(-abs_a), integer_bits))
    if_negative = wrap_int32(INT32_MAX - if_positive)
    return np.where(a == 0, 1 << 30, np.where(positive, if_positive, if_negative))


def fixed_point_tanh(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp tanh of FixedPoint<int32, integer_bits>; FixedPoint<int32, 0> out."""
    a = np.asarray(a, dtype=np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap_int32(-a))
    # exp(2n): the same raw value read with one more integer bit
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, wrap_int32(-t), t))


def count_leading_zeros_u32(x: ArrayLike) -> np.ndarray:
    """CountLeadingZeros of the values as uint32 (32 for 0)."""
    if type(x) is int:
        return 32 - (x & 0xFFFFFFFF).bit_length()
    u = np.asarray(x, dtype=np.int64) & 0xFFFFFFFF
    return 32 - np.frexp(u.astype(np.float64))[1].astype(np.int64)


def get_reciprocal(x: ArrayLike, x_integer_digits: int) -> Tuple[np.ndarray, np.ndarray]:
    """TFLM's GetReciprocal: (1 / x as FixedPoint<int32, 0> raw scaled into [0.5, 1),
    num_bits_over_unit) for positive FixedPoint<int32, x_integer_digits> ``x``."""
    if type(x) is not int:
        x = np.asarray(x, dtype=np.int64)
    headroom_plus_one = count_leading_zeros_u32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_minus_one = wrap_int32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_minus_one), num_bits_over_unit


def c_shl64(value: int, count: int) -> int:
    """``(int64_t)value << count`` as the CPU computes it (:func:`c_shift_count64`: x86
    shifts by count & 63, RV32 by 32 + (count & 31) from 32 on), keeping the low 64
    bits; on Arm a count outside 0..63 is refused (undefined in C, not emulated)."""
    count = int(count)
    if not 0 <= count <= 63:
        count = int(c_shift_count64(count))
    v = (int(value) << count) & ((1 << 64) - 1)
    return v - (1 << 64) if v >= 1 << 63 else v


def calculate_input_radius(input_integer_bits: int, input_left_shift: int,
                           total_signed_bits: int = 31) -> int:
    """TFLM's CalculateInputRadius: the largest |input| whose rescaled value fits (in
    double, the 64-bit shifts and the final int conversion as C runs them)."""
    value = (float((1 << input_integer_bits) - 1) * float(c_shl64(1, total_signed_bits - input_integer_bits))
             / float(c_shl64(1, input_left_shift)))
    return c_float_to_int32(math.floor(value))


# --------------------------------------------- gemmlowp primitives on int16 raw values
def wrap_int16(x: ArrayLike) -> np.ndarray:
    """Two's-complement wrap to int16 (C++ conversion to int16_t)."""
    return ((np.asarray(x, dtype=np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def saturating_rounding_doubling_high_mul_int16(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul<int16_t>."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    q = c_div(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 1 << 15)
    return np.where((a == b) & (a == -(1 << 15)), (1 << 15) - 1, wrap_int16(q))


def rounding_divide_by_pot_int16(x: ArrayLike, exponent: int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT<int16_t>, including what the C++ computes for
    exponents of 16 and more (the mask then truncates to int16 -1)."""
    x = np.asarray(x, dtype=np.int64)
    mask = int(wrap_int16((1 << exponent) - 1))
    remainder = wrap_int16(x & mask)
    threshold = wrap_int16((mask >> 1) + (x < 0))
    return wrap_int16((x >> min(exponent, 63)) + (remainder > threshold))


# ------------------------------------------ input rescaling of LOGISTIC / TANH (TFLM)
def checked_log2(x: float) -> Tuple[bool, int]:
    """TFLM's CheckedLog2 (float32 arithmetic): (whether x is within 1e-3 of a power of
    two in log2 terms, the rounded log2)."""
    f = np.float32
    with np.errstate(all="ignore"):     # log of 0, a negative or nan scale: C gives -inf / nan
        log2 = f(np.log(np.float64(f(x)))) * (f(1.0) / f(np.log(np.float64(f(2.0)))))
        rounded = f(round_half_away(np.asarray(log2, dtype=np.float32)))
        fraction = abs(f(log2 - rounded))
    return bool(fraction < f(1e-3)), c_float_to_int32(rounded)


def fixed_point_input_rescale(input_scale: float, input_integer_bits: int) -> Tuple[int, int, int]:
    """The int8 LOGISTIC / TANH input rescale to Q(integer_bits): (multiplier, left
    shift, input range radius) from frexp(scale * 2^(31 - integer_bits)), as TFLM."""
    real = float(np.float32(input_scale)) * float(1 << (31 - input_integer_bits))
    q, shift = math.frexp(real)                 # inf / nan: (inf / nan, 0), as glibc
    scaled = q * float(1 << 31)
    multiplier = c_float_to_int32(round_half_away_scalar(scaled) if math.isfinite(scaled) else scaled)
    return multiplier, shift, calculate_input_radius(input_integer_bits, shift, 31)


# ------------------------------------------------ int32 activation bounds, sign bits
def activation_bounds_int32(activation: int) -> Tuple[int, int]:
    """TFLM's CalculateActivationRange<int32_t> (unquantized int32 kernels): RELU gives
    [0, INT32_MAX], RELU6 [0, 6], RELU_N1_TO_1 [-1, 1], anything else the full range."""
    if activation == ACT_RELU:
        return 0, INT32_MAX
    if activation == ACT_RELU6:
        return 0, 6
    if activation == ACT_RELU_N1_TO_1:
        return -1, 1
    return INT32_MIN, INT32_MAX


def count_leading_sign_bits_int32(x: ArrayLike) -> np.ndarray:
    """CountLeadingSignBits of int32 values (31 for 0 and -1, 0 for INT32_MIN)."""
    x = np.asarray(x, dtype=np.int64)
    return count_leading_zeros_u32(x ^ (x >> 63)) - 1


# ------------------------------------ inverse square root and log (L2 norm, RSQRT, LOG_SOFTMAX)
def get_inv_sqrt_quantized_multiplier_exp(x: ArrayLike, reverse_shift: int) -> Tuple[np.ndarray, np.ndarray]:
    """TFLM's GetInvSqrtQuantizedMultiplierExp, element-wise: (multiplier, shift) with
    1/sqrt(x) ~= multiplier * 2^(shift - 31) for reverse_shift = -1 (kReverseShift).
    x <= 1 gives (INT32_MAX, 0); otherwise x is brought into [2^27, 2^29) by steps of
    4, and five Newton-Raphson steps in Q3.28 give the inverse square root."""
    x = np.asarray(x, dtype=np.int64)
    small = x <= 1
    v = np.where(small, 1 << 28, x)
    shift = np.full(v.shape, 11, dtype=np.int64)
    while True:                         # at most 2 steps for int32 inputs
        big = v >= (1 << 29)
        if not big.any():
            break
        v = np.where(big, v // 4, v)
        shift += big
    pairs = (count_leading_zeros_u32(v) - 1) // 2 - 1
    shift -= pairs
    v = v << (2 * pairs)
    srdhm = saturating_rounding_doubling_high_mul
    fp_input = v >> 1
    half_input = rounding_divide_by_pot(fp_input, 1)
    half_three = (1 << 28) + (1 << 27)
    est = np.full(v.shape, 1 << 28, dtype=np.int64)        # F3 one
    for _ in range(5):
        x3 = saturating_rounding_multiply_by_pot(srdhm(srdhm(est, est), est), 6)
        est = saturating_rounding_multiply_by_pot(
            wrap_int32(srdhm(half_three, est) - srdhm(half_input, x3)), 3)
    est = srdhm(est, 1518500250)
    negative = shift < 0
    est = np.where(negative, wrap_int32(est << np.where(negative, -shift, 0)), est)
    shift = np.where(negative, 0, shift)
    est = np.where(small, INT32_MAX, est)
    shift = np.where(small, 0, shift)
    return est, shift * reverse_shift


def _srmpot_param(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOTParam for exponents >= 0 (element-wise exponents)."""
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    threshold = (np.int64(1) << (31 - e)) - 1
    shifted = wrap_int32(x << e)
    out = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))
    return np.where(e == 0, x, out)


def log_x_for_x_greater_than_or_equal_to_1(x: ArrayLike, output_integer_bits: int,
                                           input_integer_bits: int) -> np.ndarray:
    """TFLM's log_x_for_x_greater_than_or_equal_to_1<output_integer_bits,
    input_integer_bits> on raw int32 fixed-point values: returns raw
    FixedPoint<int32, output_integer_bits> values."""
    srdhm = saturating_rounding_doubling_high_mul
    x = np.asarray(x, dtype=np.int64)
    accum_bits = output_integer_bits + 1
    log_2, sqrt_sqrt_half, sqrt_half, one_quarter = 1488522236, 1805811301, 1518500250, 536870912
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    shifted_quarter = saturating_rounding_multiply_by_pot(one_quarter, -accum_bits)
    z_a = x
    z_a_headroom_plus_1 = count_leading_zeros_u32(z_a)
    r_a_tmp = _srmpot_param(z_a, z_a_headroom_plus_1 - 1)
    r_a_raw = _srmpot_param(srdhm(r_a_tmp, sqrt_half), 1)
    z_a_pow_2_adj = np.clip(_srmpot_param(input_integer_bits - z_a_headroom_plus_1, 31 - accum_bits)
                            + shifted_quarter, INT32_MIN, INT32_MAX)
    z_b = srdhm(z_a, sqrt_half)
    z_b_headroom = count_leading_zeros_u32(z_b) - 1
    r_b_raw = _srmpot_param(z_a, z_b_headroom)
    z_b_pow_2_adj = np.clip(_srmpot_param(input_integer_bits - z_b_headroom, 31 - accum_bits)
                            - shifted_quarter, INT32_MIN, INT32_MAX)
    r = np.minimum(r_a_raw, r_b_raw)
    z_pow_2_adj = np.maximum(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, sqrt_sqrt_half)
    q = wrap_int32(r - sqrt_sqrt_half)
    q = wrap_int32(q + q)
    common_sq = srdhm(q, q)
    num = wrap_int32(srdhm(q, r) + srdhm(srdhm(q, common_sq), alpha_n))
    denom_minus_one = wrap_int32(
        srdhm(p, wrap_int32(wrap_int32(alpha_i + q) + srdhm(alpha_d, common_sq))) + srdhm(alpha_f, q))
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = saturating_rounding_multiply_by_pot(num, -accum_bits)
    total = wrap_int32(srdhm(z_pow_2_adj, log_2) + srdhm(num_scaled, recip_denom))
    return saturating_rounding_multiply_by_pot(total, accum_bits - output_integer_bits)


def preprocess_log_softmax_scaling_exp(beta: float, input_scale: float,
                                       input_integer_bits: int) -> Tuple[int, int, int, int]:
    """TFLM's PreprocessLogSoftmaxScalingExp: (input multiplier, input left shift,
    reverse scaling divisor, reverse scaling left shift)."""
    real = min(beta * input_scale * float(1 << (31 - input_integer_bits)), float((1 << 31) - 1))
    multiplier, left_shift = quantize_multiplier_greater_than_one(real)
    reverse = float(1 << (31 - left_shift)) / float(multiplier)
    divisor, reverse_shift = quantize_multiplier_smaller_than_one_exp(reverse)
    return multiplier, left_shift, divisor, reverse_shift
