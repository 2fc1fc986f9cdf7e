"""CMSIS-NN's precomputed kernel sums and its 16-bit-activation accumulators.

* :func:`vector_sum_s8` / :func:`vector_sum_s8_s64` — ``arm_vector_sum_s8`` /
  ``arm_vector_sum_s8_s64``: per weight row, bias + lhs_offset * (sum of the row), the
  "effective bias" that lets a kernel multiply raw int8 activations and still account
  for their zero point (TFLM's CMSIS-NN LSTM computes them in Prepare on every core;
  fully connected / SVDF / batch matmul on MVE cores);
* :func:`requantize_s64` — ``arm_nn_requantize_s64`` with ``REDUCE_MULTIPLIER``: the
  16-bit multiplier requantisation CMSIS-NN uses for int64 accumulators; TFLM's 64-bit
  MultiplyByQuantizedMultiplier rounds the same way, but CMSIS-NN truncates
  (acc x m) >> (14 - shift) to int32 first (a wrap on huge accumulators);
* :func:`accumulate_s16_s8` — the int16 x int8 dot products of
  ``arm_nn_vec_mat_mul_result_acc_s16`` with the core's accumulator widths.

CMSIS-NN's ``arm_nn_requantize`` (the default build: no single rounding, no inline
assembly) is TFLM's double-rounding MultiplyByQuantizedMultiplier: (x * 2^left * m +
2^30) >> 31, then a rounding (half away from zero) right shift; use
:func:`kernels.internal.quantization.multiply_by_quantized_multiplier`. Its MVE form
(vqrdmulh, then a fixed-up rounding shift) gives the same values.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from kernels.internal.matmul import exact_int_matmul
from kernels.internal.quantization import wrap_int32

#: ``MAX_COL_COUNT``: DSP / MVE int16 dot products sum this many columns in 32 bits
#: before switching to a 64-bit accumulator
MAX_COL_COUNT = 512


def vector_sum_s8(weights: np.ndarray, lhs_offset: int,
                  bias: Optional[np.ndarray] = None, rhs_offset: int = 0) -> np.ndarray:
    """``arm_vector_sum_s8``: for each row of ``weights`` (rows, cols; int8 values),
    ``bias[row] + lhs_offset * (sum(row) + cols * rhs_offset)`` with int32
    wrap-around; int64 array of int32 values. A zero ``lhs_offset`` leaves the bias (or
    zeros)."""
    rows = weights.shape[0]
    base = (np.zeros(rows, np.int64) if bias is None
            else np.asarray(bias, np.int64).reshape(-1))
    if not lhs_offset:
        return wrap_int32(base)
    matrix = np.asarray(weights, np.int64).reshape(rows, -1)
    sums = wrap_int32(matrix.sum(axis=1) + matrix.shape[1] * int(rhs_offset))
    return wrap_int32(base + wrap_int32(sums * int(lhs_offset)))


def vector_sum_s8_s64(weights: np.ndarray, lhs_offset: int,
                      bias: Optional[np.ndarray] = None, mve: bool = False) -> np.ndarray:
    """``arm_vector_sum_s8_s64``: ``bias[row] + lhs_offset * sum(row)`` in int64; on
    MVE cores the product sum * lhs_offset is formed in a wrapping int32 before the
    64-bit add (it overflows for rows longer than about 512 at large offsets); int64
    array."""
    rows = weights.shape[0]
    base = (np.zeros(rows, np.int64) if bias is None
            else np.asarray(bias, np.int64).reshape(-1))
    if not lhs_offset:
        return base
    sums = np.asarray(weights, np.int64).reshape(rows, -1).sum(axis=1)
    scaled = sums * int(lhs_offset)
    return base + (wrap_int32(scaled) if mve else scaled)


def reduce_multiplier(multiplier) -> np.ndarray:
    """``REDUCE_MULTIPLIER``: Q31 multipliers rounded to Q15 (0x7FFF from 0x7FFF0000 up);
    int64 array (or scalar array) of the same shape."""
    multiplier = np.asarray(multiplier, np.int64)
    return np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)


def requantize_s64(acc: np.ndarray, multiplier, shift) -> np.ndarray:
    """``arm_nn_requantize_s64(acc, REDUCE_MULTIPLIER(multiplier), shift)``: acc * the
    Q15 multiplier, shifted right by 14 - shift, truncated to int32, then one rounding
    bit: ((r + 1) >> 1). ``acc`` int64 (|acc| < 2^47 as CMSIS-NN assumes);
    ``multiplier`` / ``shift`` scalars or arrays broadcasting against ``acc`` (per
    output column); int64 array of int32 values."""
    reduced = reduce_multiplier(multiplier)
    product = np.asarray(acc, np.int64) * reduced
    truncated = wrap_int32(product >> (14 - np.asarray(shift, np.int64)))
    return wrap_int32(truncated + 1) >> 1


def accumulate_s16_s8(lhs: np.ndarray, weights_t: np.ndarray, effective_bias: np.ndarray,
                      dsp: bool, mve: bool) -> np.ndarray:
    """The accumulators of ``arm_nn_vec_mat_mul_result_acc_s16``: ``lhs`` (batches,
    cols) int16 values times ``weights_t`` (cols, rows) int8 values, plus the int64
    ``effective_bias`` per row; int64 (batches, rows).

    * no DSP (Cortex-M0/M3): every product and the bias in 64 bits;
    * DSP: the first ``MAX_COL_COUNT`` columns summed in a wrapping int32 (SMLAD), the
      rest and the bias in 64 bits;
    * MVE: the bias truncated to int32 starts the wrapping int32 sum of the first
      ``MAX_COL_COUNT`` columns, the rest in 64 bits."""
    lhs = np.asarray(lhs, np.float64)
    weights_t = np.asarray(weights_t, np.float64)
    bias = np.asarray(effective_bias, np.int64)
    cols = lhs.shape[-1]
    if not dsp and not mve:
        return exact_int_matmul(lhs, weights_t) + bias
    fast = min(cols, MAX_COL_COUNT)
    head = exact_int_matmul(lhs[:, :fast], weights_t[:fast])
    tail = exact_int_matmul(lhs[:, fast:], weights_t[fast:]) if cols > fast else 0
    if mve:
        return wrap_int32(head + wrap_int32(bias)) + tail
    return wrap_int32(head) + tail + bias
