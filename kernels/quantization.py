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
from typing import Tuple, Union

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


def quantize_multiplier(real_multiplier: float) -> Tuple[int, int]:
    """TFLM's QuantizeMultiplier: significand in [2^30, 2^31) and a power-of-two shift
    (positive = left shift) with real_multiplier ~= significand * 2^(shift - 31)."""
    if real_multiplier == 0.0:
        return 0, 0
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
    """:func:`quantize_multiplier` for each element (per-channel scales)."""
    pairs = [quantize_multiplier(float(m)) for m in np.asarray(real_multipliers, dtype=np.float64).ravel()]
    mult = np.array([p[0] for p in pairs], dtype=np.int32)
    shift = np.array([p[1] for p in pairs], dtype=np.int32)
    return mult, shift


def quantize_multiplier_smaller_than_one_exp(real_multiplier: float) -> Tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: requires 0 < m < 1; shift <= 0."""
    if not 0.0 < real_multiplier < 1.0:
        raise ValueError(f"multiplier {real_multiplier} must be in (0, 1)")
    return quantize_multiplier(real_multiplier)


def quantize_multiplier_greater_than_one(real_multiplier: float) -> Tuple[int, int]:
    """QuantizeMultiplierGreaterThanOne: requires m > 1; shift >= 0."""
    if not real_multiplier > 1.0:
        raise ValueError(f"multiplier {real_multiplier} must be > 1")
    m, s = quantize_multiplier(real_multiplier)
    if s < 0:
        raise ValueError(f"multiplier {real_multiplier}: negative shift")
    return m, s


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to the int32 range (C++ int32 overflow)."""
    return ((np.asarray(x, dtype=np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def saturating_rounding_doubling_high_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values (given as int64)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    # C++ integer division truncates toward zero
    q = np.where(s >= 0, s >> 31, -((-s) >> 31))
    overflow = (a == b) & (a == INT32_MIN)
    return np.where(overflow, INT32_MAX, q)


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """TFLM's double-rounding MultiplyByQuantizedMultiplier for int32 ``x``.

    ``multiplier`` / ``shift`` may be scalars or arrays broadcastable to ``x``
    (per-channel). The left shift wraps like C++ int32 arithmetic."""
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    if np.any(left):
        x = wrap_int32(x << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), right)


def multiply_by_quantized_multiplier_64(x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """TFLM's MultiplyByQuantizedMultiplier for int64 ``x`` (16x8 kernels): the
    multiplier is reduced to 16 bits, then one rounding shift; result cast to int32."""
    x = np.asarray(x, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    total_shift = 15 - shift
    result = (x * reduced + (np.int64(1) << (total_shift - 1))) >> total_shift
    return wrap_int32(result)


def multiply_by_quantized_multiplier_smaller_than_one_exp(x: ArrayLike, multiplier: int, left_shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (left_shift <= 0)."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -left_shift)


def multiply_by_quantized_multiplier_greater_than_one(x: ArrayLike, multiplier: int, left_shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierGreaterThanOne (left_shift >= 0)."""
    x = wrap_int32(np.asarray(x, dtype=np.int64) << left_shift)
    return saturating_rounding_doubling_high_mul(x, multiplier)


# ----------------------------------------------------------------- activations
_TYPE_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def _quantize_float(value: float, scale: float, zero_point: int) -> int:
    """TFLM's kernel_util Quantize: round(f / scale) in float32, then + zero point."""
    tmp = np.float32(value) / np.float32(scale)
    tmp = round_half_away(np.asarray(tmp, dtype=np.float32))
    if not (np.float32(INT32_MIN) <= tmp <= np.float32(INT32_MAX)):
        raise ValueError("activation bound does not fit int32 after quantization")
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
    """CalculateActivationRange for float: (min, max) as float32 values."""
    lo, hi = -np.inf, np.inf
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
    the product taken in float32 as TFLM does; with a bias, its scale must be within
    2 % of an output step of the product (TFLM rejects the model otherwise)."""
    if bias_scale is not None:
        product64 = float(np.float64(input_scale) * np.float64(filter_scale))
        diff = abs(product64 - float(bias_scale))
        if not diff / float(output_scale) <= 0.02:
            raise ValueError(f"bias scale {bias_scale} does not match input_scale * filter_scale "
                             f"({product64}) within 2% of the output scale")
    product = float(np.float32(input_scale) * np.float32(filter_scale))
    if not product >= 0:
        raise ValueError("input_scale * filter_scale must be >= 0")
    return product / float(output_scale)
