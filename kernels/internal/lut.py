"""Lookup tables as TFLM builds and reads them.

* :func:`populate_int16_lut` / :func:`lut_lookup_int16` — TFLM's 513-entry int16 tables
  (``LUTPopulate<int16_t>`` / ``LUTLookup``): 512 segments over the int16 input range,
  each entry nudged so that linear interpolation is unbiased at the segment midpoint;
  the lookup takes the high 9 bits of the input as the segment and the low 7 bits to
  interpolate. All table arithmetic is float32, the transform included (softmax's exp
  table uses glibc's ``expf``, see :mod:`kernels.internal.libm_float`).
* :data:`SIGMOID_TABLE_UINT16` — TFLM's 256-entry table of sigmoid(i / 24) in unsigned
  0.16 fixed point (saturated at 65535), interpolated by the int16 LOGISTIC and TANH
  kernels (tanh(x) = 2 sigmoid(2x) - 1): :func:`logistic_int16`, :func:`tanh_int16`, and
  the input rescale to the table's scale, :func:`sigmoid_table_input_multiplier`.
* :func:`int8_table` / :func:`apply_int8_table` — host-side caches (no arena memory):
  an element-wise int8 kernel evaluates its exact integer function once on all 256
  inputs in Prepare and indexes the table in Invoke.
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import numpy as np

from .quantization import (TfliteCheckError, debug_asserts, c_float_to_int32, c_shift_factor, c_shift_right, checked_log2, round_half_away,
                           wrap_int16, wrap_int32)

LUT_INT16_SIZE = 513
_INT16_MIN, _INT16_MAX = -32768, 32767


def populate_int16_lut(input_scale: float, input_zero_point: int, output_scale: float,
                       output_zero_point: int,
                       transform: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """TFLM's LUTPopulate<int16_t> (float32 arithmetic): returns the 513 int16 entries.

    ``transform`` maps a float32 array to a float32 array, as the C++ float function
    would (element by element)."""
    f = np.float32
    in_scale, out_scale = f(input_scale), f(output_scale)
    input_min = in_scale * f(_INT16_MIN - int(input_zero_point))
    input_max = in_scale * f(_INT16_MAX - int(input_zero_point))
    output_min = out_scale * f(_INT16_MIN - int(output_zero_point))
    output_max = out_scale * f(_INT16_MAX - int(output_zero_point))
    steps = LUT_INT16_SIZE - 1
    step = (input_max - input_min) / f(steps)
    half_step = step / f(2)
    scaling_inv = f(_INT16_MAX - _INT16_MIN + 1) / (output_max - output_min)

    i = np.arange(steps, dtype=np.float32)
    start = input_min + i * step
    val = np.asarray(transform(start), dtype=np.float32)
    val_mid = np.asarray(transform(start + half_step), dtype=np.float32)
    val_next = np.asarray(transform(input_min + (i + f(1)) * step), dtype=np.float32)

    sample = round_half_away(val * scaling_inv)
    midpoint_interp = round_half_away((val_next * scaling_inv + sample) / f(2))
    midpoint = round_half_away(val_mid * scaling_inv)
    bias = round_half_away((midpoint_interp - midpoint) / f(2))
    table = np.empty(LUT_INT16_SIZE, dtype=np.int16)
    table[:steps] = np.clip(sample - bias, f(_INT16_MIN), f(_INT16_MAX)).astype(np.int16)
    last = np.asarray(transform(np.asarray([input_max], np.float32)), np.float32)
    last = round_half_away(last * scaling_inv)
    table[steps] = np.clip(last, f(_INT16_MIN), f(_INT16_MAX)).astype(np.int16)[0]
    return table


def lut_lookup_int16(value: np.ndarray, table: np.ndarray) -> np.ndarray:
    """TFLM's LUTLookup for int16: segment = high 9 bits, interpolate with the low 7
    (int16 wrap-around as in the C++). ``value`` holds int16 values; returns int64."""
    v = np.asarray(value, dtype=np.int64)
    lut = np.asarray(table, dtype=np.int64)
    index = 256 + (v >> 7)
    offset = v & 0x7F
    base = lut[index]
    slope = wrap_int16(lut[index + 1] - base)
    delta = (slope * offset + 64) >> 7
    return wrap_int16(base + delta)


# sigmoid(i / 24) * 2^16 for i = 0..255, saturated at 65535. The values are TFLM's data:
# they are within about one unit of the rounded real values but follow no rounding rule
# (44 entries differ from round-to-nearest), so they are kept as numbers.
_SIGMOID_TABLE_VALUES = (
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
)

#: TFLM's sigmoid_table_uint16 (unsigned 0.16 fixed point), as int64.
SIGMOID_TABLE_UINT16 = np.array(_SIGMOID_TABLE_VALUES, dtype=np.int64)


# ------------------------------------------- int16 LOGISTIC / TANH: sigmoid-table reads
def sigmoid_table_input_multiplier(input_scale: float, power_of_two_shifts) -> Tuple[int, int]:
    """(multiplier, left shift) bringing an int16 input (3 integer bits expected) to the
    table's scale of 1 / (3 * 2^12), as TFLM's int16 LOGISTIC / TANH Prepare: a
    multiplier of 0 marks a power-of-two input scale whose shift is in
    ``power_of_two_shifts`` (the kernels then multiply by 3 << shift); otherwise
    scale * 3 * 2^12 doubled until it exceeds 32767 / 2 (at most 31 times), truncated."""
    is_pot, log2 = checked_log2(input_scale)
    left_shift = (15 - 3) + log2
    if is_pot and left_shift in power_of_two_shifts:
        return 0, left_shift
    multiplier = float(np.float32(input_scale)) * 4096.0 * 3.0
    left_shift = 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    multiplier = c_float_to_int32(multiplier)            # C's int32 conversion (huge: UB)
    if multiplier > 32767 and debug_asserts():
        raise TfliteCheckError(f"int16 input multiplier {multiplier} of input scale {input_scale}: "
                               "TFLM's debug check input_multiplier <= 32767 fails (the build aborts)")
    return multiplier, left_shift


def _table_input(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """The int16 input on the table's scale: (x * multiplier + round) >> shift in int32
    arithmetic (wrapping), with shift counts of 32 or more as the CPU evaluates them (an
    LSTM whose cell scale is far from 2^-15 reaches them)."""
    if multiplier == 0:
        multiplier, left_shift = int(wrap_int32(3 * int(c_shift_factor(left_shift)))), 0
    rounding = int(c_shift_factor(left_shift - 1)) if left_shift > 0 else 0
    value = wrap_int32(wrap_int32(np.asarray(x, dtype=np.int64) * multiplier) + rounding)
    return c_shift_right(value, left_shift)


def _interpolate(magnitude: np.ndarray, fraction_bits: int, saturated: int) -> np.ndarray:
    """Sigmoid table at |input| with ``fraction_bits`` bits between entries (saturated
    value from the last segment on)."""
    segment = magnitude >> fraction_bits
    seg = np.minimum(segment, 254)
    lo = SIGMOID_TABLE_UINT16[seg]
    hi = SIGMOID_TABLE_UINT16[seg + 1]
    value = (lo << fraction_bits) + (magnitude & ((1 << fraction_bits) - 1)) * (hi - lo)
    return np.where(segment < 255, value, saturated)


def logistic_int16(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """TFLM's int16 LOGISTIC (reference_integer_ops::Logistic): int64 results."""
    value = _table_input(x, multiplier, left_shift)
    result = _interpolate(np.abs(value), 9, 0x7FFF << 10)
    result = np.where(value >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
    return result >> 10


def tanh_int16(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """TFLM's int16 TANH (reference_integer_ops::Tanh), tanh(x) = 2 sigmoid(2x) - 1:
    int64 results."""
    value = _table_input(x, multiplier, left_shift)
    result = _interpolate(np.abs(value), 8, 0xFFFF << 8)
    result = np.where(value >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return result >> 8


# ------------------------------------------------ host-side tables for int8 inputs
def int8_table(fn: Callable[[np.ndarray], np.ndarray], dtype=np.int8) -> np.ndarray:
    """``fn`` evaluated once on all 256 int8 values, ordered by the values' byte (a
    host-side cache, not an arena table): element-wise int8 kernels compute their table
    in Prepare and index it in Invoke with :func:`apply_int8_table`."""
    values = np.arange(256, dtype=np.uint8).view(np.int8)
    return np.asarray(fn(values)).astype(dtype)


def apply_int8_table(table: np.ndarray, x: np.ndarray, out: Optional[np.ndarray] = None):
    """``table[x]`` for an int8 array (indexing by the byte of each value); with ``out``
    (x's element count), written there (converted to its dtype) and None returned."""
    index = np.asarray(x).view(np.uint8)
    if out is None:
        return table[index]
    _take_into(table, index, out)


def _take_into(table: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = table[index]``: one gather straight into a contiguous ``out`` of the
    table's dtype (every index is in range: the table covers the index type), else a
    gather and a converting copy."""
    if (out.dtype == table.dtype and out.flags.c_contiguous and out.size == index.size
            and table.size == 1 << (8 * index.itemsize)):
        np.take(table, index.reshape(-1), out=out.reshape(-1), mode="wrap")
    else:
        np.copyto(out, table[index].reshape(out.shape).astype(out.dtype))


def int16_table(fn: Callable[[np.ndarray], np.ndarray], dtype=np.int32) -> np.ndarray:
    """``fn`` evaluated once on all 65536 int16 values, ordered by the values' two-byte
    pattern (a host-side cache, not an arena table); index it with
    :func:`apply_int16_table`. For element-wise int16 functions evaluated many times
    (the gates of a recurrent cell), one lookup replaces a chain of fixed-point steps."""
    values = np.arange(65536, dtype=np.uint16).view(np.int16)
    return np.asarray(fn(values)).astype(dtype)


def apply_int16_table(table: np.ndarray, x: np.ndarray, out: Optional[np.ndarray] = None):
    """``table[x]`` for int16 values (any integer dtype holding values in the int16
    range); with ``out``, written there as :func:`apply_int8_table` does."""
    index = np.asarray(x).astype(np.int16, copy=False).view(np.uint16)
    if out is None:
        return table[index]
    _take_into(table, index, out)


# ------------------------------------------- host-side tables for pairs of int8 inputs
def int8_pair_table(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], dtype=np.int8) -> np.ndarray:
    """``fn(a, b)`` evaluated once on all 65536 pairs of int8 values (64 KiB host-side
    cache), entry ``byte(a) * 256 + byte(b)``: an element-wise int8 x int8 -> int8 kernel
    whose quantization is fixed at Prepare computes it with its own exact routine and
    reads it with :func:`apply_int8_pair_table` (bit-exact by construction)."""
    values = np.arange(256, dtype=np.uint8).view(np.int8)
    a = np.repeat(values, 256)
    b = np.tile(values, 256)
    return np.asarray(fn(a, b)).astype(dtype)


def apply_int8_pair_table(table: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = table[pair(a, b)]`` with ``a`` and ``b`` broadcast together (their
    broadcast shape has ``out``'s element count), or, when they have equal shapes,
    taken element by element over the flat output."""
    from .quantization import work_buffer
    if a.shape == b.shape:
        a, b, shape = a.reshape(-1), b.reshape(-1), (out.size,)
    else:
        shape = np.broadcast_shapes(a.shape, b.shape)
    # two-byte indices: a quarter of intp's memory traffic, and np.take reads them as is
    index = work_buffer("int8-pair-index", (1, out.size), np.uint16).reshape(shape)
    np.left_shift(a.view(np.uint8), 8, out=index, dtype=np.uint16)
    np.bitwise_or(index, b.view(np.uint8), out=index)
    np.take(table, index, out=out.reshape(shape))
