"""CMSIS-NN arithmetic where it differs from TFLM's reference kernels (CMSIS-NN 4ab83cc3,
built by TFLM's Makefile with arm-none-eabi-gcc: no CMSIS_NN_USE_SINGLE_ROUNDING, no
inline-assembly requantisation).

What is the same as the reference kernels (and so reused from
:mod:`kernels.internal.quantization`): ``arm_nn_requantize`` is TFLM's double-rounding
MultiplyByQuantizedMultiplier; ``arm_nn_doubling_high_mult`` / ``_no_sat`` are gemmlowp's
SaturatingRoundingDoublingHighMul for every multiplier TFLM produces;
``arm_nn_divide_by_power_of_two`` is RoundingDivideByPOT for exponents 0..31;
``arm_nn_exp_on_negative_values`` and ``arm_nn_one_over_one_plus_x_for_x_in_0_1`` are
gemmlowp's. What differs is here:

* int16 accumulators: CMSIS-NN sums int16 x int8 products in a wrapping int32 for the
  first columns of a dot product and switches to int64 only after ``MAX_COL_COUNT``
  (512) columns (DSP / MVE) — :func:`split_accumulate_s16`;
* ``arm_nn_requantize_s64`` truncates to int32 before its last rounding shift
  (:func:`kernels.cmsis_nn.internal.kernel_sums.requantize_s64`);
* ``arm_softmax_s16``: no clamp of the reciprocal's table index (an int16 wrap instead)
  and an unclamped int16 store — :func:`softmax_s16`;
* ``arm_softmax_s8`` / ``arm_softmax_s8_s16``: rows whose sum of exponentials needs a
  shift of 32 or more bits (rows with 512+ values at the row maximum): the Cortex-M
  register shifts (LSL / ASR by 32..255) instead of an abort — :func:`softmax_s8`;
* ``arm_elementwise_mul_s16``: input and output offsets are ignored —
  :func:`elementwise_mul_s16`.
"""
from __future__ import annotations

import numpy as np

from kernels.internal.matmul import exact_int_matmul
from kernels.internal.quantization import (count_leading_zeros_u32, exp_on_negative_values,
                                           multiply_by_quantized_multiplier,
                                           multiply_by_quantized_multiplier_greater_than_one,
                                           one_over_one_plus_x_for_x_in_0_1, rounding_divide_by_pot,
                                           saturating_rounding_doubling_high_mul, wrap_int16,
                                           wrap_int32)
from .kernel_sums import MAX_COL_COUNT, requantize_s64

__all__ = ["MAX_COL_COUNT", "split_accumulate_s16", "divide_by_power_of_two_arm", "softmax_s8",
           "softmax_s16", "elementwise_mul_s16", "S64Requantizer"]

_SOFTMAX_ACCUM_BITS = 12
_SOFTMAX_DIFF_INTEGER_BITS = 5


# ------------------------------------------------------------------ int16 accumulators
def split_accumulate_s16(lhs: np.ndarray, rhs_t: np.ndarray, int32_cols: int) -> np.ndarray:
    """Dot products of ``lhs`` (N, K) int16 values with ``rhs_t`` (K, M) int8 values, the
    first ``int32_cols`` columns of each summed in a wrapping int32 and the rest added in
    int64; int64 (N, M). ``int32_cols`` >= K: the whole sum wraps in int32; 0: exact."""
    k = lhs.shape[-1]
    lhs = np.asarray(lhs, np.float64)
    rhs_t = np.asarray(rhs_t, np.float64)
    fast = max(0, min(int(int32_cols), k))
    if fast == 0:
        return exact_int_matmul(lhs, rhs_t)
    head = wrap_int32(exact_int_matmul(lhs[:, :fast], rhs_t[:fast]))
    if fast == k:
        return head
    return head + exact_int_matmul(lhs[:, fast:], rhs_t[fast:])


# ------------------------------------------------------------------------- softmax
def divide_by_power_of_two_arm(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``arm_nn_divide_by_power_of_two`` compiled for Cortex-M, element-wise exponents
    0..255: RoundingDivideByPOT below 32; from 32 on the register shifts saturate (LSL
    gives 0, so the remainder mask is -1; ASR gives the sign), which makes the result 1
    for x >= 0 and -1 for x < 0."""
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    small = e < 32
    regular = rounding_divide_by_pot(x, np.where(small, e, 0))
    return np.where(small, regular, np.where(x >= 0, 1, -1))


def softmax_s8(rows: np.ndarray, multiplier: int, shift: int, diff_min: int,
               out_bits: int) -> np.ndarray:
    """``arm_softmax_s8`` (``out_bits`` 8) / ``arm_softmax_s8_s16`` (16) on int8 ``rows``
    (R, D): exp of (x - row max) rescaled to Q5.26, exps below ``diff_min`` dropped, sum
    in Q12.19, reciprocal by one_over_one_plus_x, then a rounding shift by
    ``12 - clz(sum) + 31 - out_bits`` and the offset to the type minimum. int64 array."""
    values = np.asarray(rows, np.int64)
    diff = values - values.max(axis=1, keepdims=True)
    used = diff >= diff_min
    # every possible difference -255..0: the Q0.31 exp (a table instead of per element)
    table_diff = np.arange(-255, 1, dtype=np.int64)
    table = exp_on_negative_values(
        multiply_by_quantized_multiplier_greater_than_one(table_diff, multiplier, shift),
        _SOFTMAX_DIFF_INTEGER_BITS)
    exps = table[diff + 255]
    contributions = np.where(used, rounding_divide_by_pot(exps, _SOFTMAX_ACCUM_BITS), 0)
    total = wrap_int32(contributions.sum(axis=1, keepdims=True))
    headroom = count_leading_zeros_u32(total)
    normalised = np.where(total > 0, wrap_int32((total & 0xFFFFFFFF) << headroom), 0)
    shifted_scale = one_over_one_plus_x_for_x_in_0_1(wrap_int32(normalised - (1 << 31)))
    bits_over_unit = _SOFTMAX_ACCUM_BITS - headroom + 31 - out_bits
    low, high = -(1 << (out_bits - 1)), (1 << (out_bits - 1)) - 1
    scaled = divide_by_power_of_two_arm(saturating_rounding_doubling_high_mul(shifted_scale, exps),
                                        np.broadcast_to(bits_over_unit, exps.shape))
    return np.where(used, np.clip(scaled + low, low, high), low)


def _lut_interpolate(value: np.ndarray, table: np.ndarray) -> np.ndarray:
    """CMSIS-NN's 513-entry int16 table lookup: index 256 + (v >> 7), linear
    interpolation with the low 7 bits; the slope, delta and sum stored as int16."""
    lut = np.asarray(table, np.int64)
    index = 256 + (value >> 7)
    offset = value & 0x7F
    base = lut[index]
    slope = wrap_int16(lut[index + 1] - base)
    delta = wrap_int16((slope * offset + 64) >> 7)
    return wrap_int16(base + delta)


def softmax_s16(rows: np.ndarray, multiplier: int, shift: int, exp_lut: np.ndarray,
                one_over_one_plus_x_lut: np.ndarray) -> np.ndarray:
    """``arm_softmax_s16`` on int16 ``rows`` (R, D); int64 array of int16 values.

    x - row max requantised (``arm_nn_requantize``), offset by 32767 and saturated to
    int16, looked up in the exp table; the int32 sum normalised to 17 significant bits
    (``((sum << (clz - 1)) + 2^13) >> 14`` in int32, which wraps when the top 18 bits
    of the normalised sum are all ones), minus 98304 stored as int16 (no clamp), looked
    up in the 1/(1+x) table; each exp times that reciprocal shifted right by
    ``30 - clz`` then rounded by one bit, stored as int16."""
    values = np.asarray(rows, np.int64)
    diff = values - values.max(axis=1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, multiplier, shift)
    symmetric = np.clip(scaled + 32767, -32768, 32767)
    exps = _lut_interpolate(symmetric, exp_lut)
    total = wrap_int32(exps.sum(axis=1, keepdims=True))
    headroom = count_leading_zeros_u32(total)
    normalised = wrap_int32(wrap_int32(total << np.maximum(headroom - 1, 0)) + (1 << 13)) >> 14
    symmetric_sum = wrap_int16(normalised - 98304)
    reciprocal = _lut_interpolate(symmetric_sum, one_over_one_plus_x_lut)
    right_shift = 30 - headroom
    product = wrap_int32(exps * reciprocal) >> right_shift
    return wrap_int16((product + 1) >> 1)


# --------------------------------------------------------------------- elementwise
def elementwise_mul_s16(a: np.ndarray, b: np.ndarray, multiplier: int, shift: int,
                        act_min: int, act_max: int) -> np.ndarray:
    """``arm_elementwise_mul_s16``: a * b (no input offsets), ``arm_nn_requantize``, no
    output offset, clamp; int64 array."""
    product = np.asarray(a, np.int64) * np.asarray(b, np.int64)
    return np.clip(multiply_by_quantized_multiplier(product, multiplier, shift), act_min, act_max)


class S64Requantizer:
    """The int16 output stage of CMSIS-NN's convolutions with int64 accumulators, for
    fixed per-channel constants: acc + int64 bias, ``arm_nn_requantize_s64`` with the
    channel's REDUCE_MULTIPLIER'd multiplier, clamp (no output offset: int16 zero points
    are 0). Called on exact sums with the channels on axis 0 (any integral dtype);
    returns int64 (C, N)."""

    def __init__(self, multiplier, shift, bias, act_min: int, act_max: int):
        self.multiplier = np.asarray(multiplier, np.int64).reshape(-1, 1)
        self.shift = np.asarray(shift, np.int64).reshape(-1, 1)
        self.bias = None if bias is None else np.asarray(bias, np.int64).reshape(-1, 1)
        self.act_min, self.act_max = int(act_min), int(act_max)

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        acc = np.asarray(acc)
        total = acc.astype(np.int64).reshape(acc.shape[0], -1)
        if self.bias is not None:
            total = total + self.bias
        return np.clip(requantize_s64(total, self.multiplier, self.shift), self.act_min, self.act_max)


# ----------------------------------------------- int4 depthwise, odd input channels
def depthwise_s4_odd_channels(x: np.ndarray, packed: np.ndarray, filter_h: int, filter_w: int,
                              multiplier: int, stride_h: int, stride_w: int, dilation_h: int,
                              dilation_w: int, pad_h: int, pad_w: int, out_h: int, out_w: int,
                              input_offset: int) -> np.ndarray:
    """The int32 sums of ``arm_depthwise_conv_s4``'s generic kernel for an odd number of
    input channels, which walks the packed int4 filter with a running nibble state
    instead of each weight's own address. Returns int64 (B, out_h, out_w, C_out).

    For one output pixel whose window visits V taps (the taps inside the image, in
    row-major order; ordinal t, flat tap index f), output channel j starts with the low
    nibble when ``j * (V + 1 + [FH*FW odd])`` is even, the state flips after every tap,
    and tap t reads nibble ``2 * (f * B + j // 2 + u) + (1 - s)`` of the packed filter,
    with B = (C_in // 2) * multiplier bytes per tap, s the nibble state (1 = low) and u
    the high nibbles read before t in that channel. (The filter's true nibble is
    ``f * C_out + j``: the two agree only for some layouts.)"""
    batches, in_h, in_w, in_c = x.shape
    out_c = in_c * multiplier
    nibbles = np.empty(2 * packed.size, np.int64)
    raw = np.asarray(packed).view(np.int8).astype(np.int64)
    nibbles[0::2] = np.where((raw & 0x8) != 0, (raw & 0xF) - 16, raw & 0xF)
    nibbles[1::2] = raw >> 4
    bytes_per_tap = (in_c >> 1) * multiplier
    area_odd = (filter_h * filter_w) % 2
    channels = np.arange(out_c)
    xin = x.astype(np.int64) + input_offset
    result = np.zeros((batches, out_h, out_w, out_c), np.int64)
    # output pixels grouped by the taps their window visits
    for oy in range(out_h):
        base_y = oy * stride_h - pad_h
        rows = [ky for ky in range(filter_h) if 0 <= base_y + ky * dilation_h < in_h]
        for ox in range(out_w):
            base_x = ox * stride_w - pad_w
            cols = [kx for kx in range(filter_w) if 0 <= base_x + kx * dilation_w < in_w]
            taps = [(ky, kx) for ky in rows for kx in cols]
            visited = len(taps)
            if visited == 0:
                continue
            start_low = (channels * (visited + 1 + area_odd)) % 2 == 0
            t = np.arange(visited)
            state = np.where(start_low[:, None], 1 - (t[None, :] & 1), t[None, :] & 1)
            highs_before = np.where(start_low[:, None], t[None, :] // 2, (t[None, :] + 1) // 2)
            flat = np.array([ky * filter_w + kx for ky, kx in taps])
            index = 2 * (flat[None, :] * bytes_per_tap + (channels // 2)[:, None] + highs_before) \
                + (1 - state)
            if index.max() >= nibbles.size:
                raise ValueError("CMSIS-NN's int4 depthwise kernel reads past the packed filter")
            weights = nibbles[index]                                   # (C_out, V)
            iy = np.array([base_y + ky * dilation_h for ky, _ in taps])
            ix = np.array([base_x + kx * dilation_w for _, kx in taps])
            values = xin[:, iy, ix, :][..., channels // multiplier]     # (B, V, C_out)
            result[:, oy, ox, :] = np.einsum("bvc,cv->bc", values, weights)
    return result
