"""DIV: float32, int32 (C++ truncating division) and int8 (reciprocal-based quantized
division), with broadcasting up to 6-D, as TFLM's reference kernel.

int8: per element, with both operands offset by their zero points and the divisor made
positive, TFLM multiplies the dividend (normalised by its sign-bit headroom) by the fixed
point reciprocal of the divisor, then applies the output multiplier with a shift of
``output_shift - reciprocal_shift - headroom``. That final rounding shift exceeds 31 when
the quotient is small (for instance 1 / 127); TFLM then relies on what x86 does with
such shift counts (64-bit mask shift by ``e & 63``, 32-bit arithmetic shift by
``e & 31``), which gives large values instead of zero. :func:`_rounding_divide_by_pot_x86`
reproduces that, so the results match the tflite-micro package bit for bit.

The output multiplier is ``s1 / (s2 * s_out)`` in double, as the package computes it
(the 2026-08 source rounds it through float32, and so do the Cortex-M targets,
``Target.float32_expressions``; scales exist where the results differ).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.float_math import math_for
from .internal.broadcast import check_broadcast_output
from .internal.quantization import (TfliteCheckError, c_shift_count64, current_cpu, debug_asserts, activation_bounds_float32, activation_bounds_int32,
                           activation_range_quantized, clamp_float32, count_leading_sign_bits_int32,
                           get_reciprocal, quantize_multiplier, saturating_rounding_doubling_high_mul,
                           wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT32, type_name

INT32_MIN = -(1 << 31)


class OpData:
    """TFLM's OpDataDiv (plus a host-side table of all 65536 int8 quotients)."""
    input1_zero_point = input2_zero_point = output_zero_point = 0
    output_multiplier = output_shift = 0
    act_min = act_max = None
    table = None

#: from this many output elements on, int8 DIV looks results up in a 256 x 256 table
TABLE_THRESHOLD = 16384


def _rounding_divide_by_pot_x86(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT on int32 ``x`` for any exponent, as compiled for
    x86-64: the mask is ``(1 << (e & 63)) - 1`` truncated to int32 and the shift of
    ``x`` uses ``e & 31`` (equal to the exact rounding division for 0 <= e <= 31); RV32
    builds shift the mask by ``32 + (e & 31)`` from 32 on (:func:`c_shift_count64`)."""
    e = np.asarray(exponent, dtype=np.int64)
    if debug_asserts() and e.size and (e.min() < 0 or e.max() > 31):
        raise TfliteCheckError("a rounding shift by a count outside 0..31: gemmlowp's "
                               "RoundingDivideByPOT assertion fails (the build aborts)")
    # the 64-bit shift's count as the CPU takes it (RV32: 32 + (e & 31) from 32 on); the
    # Cortex-M builds' is not measured and stays x86's
    count = c_shift_count64(e) if current_cpu() == "riscv" else e & 63
    mask = wrap_int32((np.int64(1) << count) - 1)
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> (e & 31)) + (remainder > threshold)


def quantized_div(x1: np.ndarray, x2: np.ndarray, data: OpData) -> np.ndarray:
    """TFLM's DivElementwise for int8 values (broadcast arrays); int64 result, clamped."""
    v1 = x1.astype(np.int64) - data.input1_zero_point
    v2 = x2.astype(np.int64) - data.input2_zero_point
    v1, v2 = np.broadcast_arrays(v1, v2)
    negative = v2 < 0
    v1 = np.where(negative, -v1, v1)
    v2 = np.where(negative, -v2, v2)
    reciprocal, reciprocal_shift = get_reciprocal(v2, 31)
    headroom = count_leading_sign_bits_int32(v1)
    unscaled = saturating_rounding_doubling_high_mul(wrap_int32(v1 << headroom), reciprocal)
    total_shift = data.output_shift - reciprocal_shift - headroom
    # MultiplyByQuantizedMultiplierSmallerThanOneExp with exponent -total_shift
    scaled = _rounding_divide_by_pot_x86(
        saturating_rounding_doubling_high_mul(unscaled, data.output_multiplier), -total_shift)
    return np.clip(wrap_int32(scaled + data.output_zero_point), data.act_min, data.act_max)


@register
class Div(Kernel):
    op = "DIV"
    supported_types = ("float32", "int8", "int32")

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("div.OpDataDiv"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        data.table = None
        in1 = ctx.required_input(node, 0)
        in2 = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if not (in1.type == in2.type == out.type):
            raise ctx.error(f"input types {type_name(in1.type)}, {type_name(in2.type)} and output "
                            f"type {type_name(out.type)} must match")
        if out.type not in (FLOAT32, INT32, INT8):
            raise ctx.error(f"DIV only supports FLOAT32, INT32, quantized INT8 now, got type "
                            f"{type_name(out.type)} ({out.type}).")
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape, extended_equal=True)
        activation = node.params.fused_activation_function
        if out.type == INT8:
            for name, t in (("input 0", in1), ("input 1", in2), ("output", out)):
                if t.quantization is None or not t.scale > 0:
                    raise ctx.error(f"quantized int8 DIV needs a positive scale on {name}")
            # the package computes this in double, the 2026-08 source (Cortex-M targets) in
            # float32 widened to double
            if ctx.target.float32_expressions:
                f32 = np.float32
                real = float(f32(in1.scale) / (f32(in2.scale) * f32(out.scale)))
            else:
                f64 = np.float64
                real = float(f64(in1.scale) / (f64(in2.scale) * f64(out.scale)))
            try:
                data.act_min, data.act_max = activation_range_quantized(
                    activation, out.dtype, out.scale, out.zero_point)
                data.output_multiplier, data.output_shift = quantize_multiplier(real)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            data.input1_zero_point = in1.zero_point
            data.input2_zero_point = in2.zero_point
            data.output_zero_point = out.zero_point
        elif out.type == INT32:
            for name, t in (("input 0", in1), ("input 1", in2)):
                if t.quantization is not None:
                    raise ctx.error(f"int32 DIV supports unquantized inputs only ({name} is quantized)")
            data.act_min, data.act_max = activation_bounds_int32(activation)
        else:
            data.act_min, data.act_max = activation_bounds_float32(activation)
        ctx.release(in1, in2, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        if out.dtype == np.float32:
            with np.errstate(all="ignore"):
                quotient = math_for(ctx.target).div(x1, x2)    # the build's NaN rules
            result = clamp_float32(quotient, data.act_min, data.act_max)
        elif out.dtype == np.int32:
            a = x1.astype(np.int64)
            b = x2.astype(np.int64)
            if not np.all(b):
                raise ctx.error("integer division by zero (TFLM crashes here)")
            if np.any((b == -1) & (a == INT32_MIN)):
                raise ctx.error("integer overflow: INT32_MIN / -1 (TFLM crashes here)")
            q = np.abs(a) // np.abs(b)
            q = np.where((a < 0) != (b < 0), -q, q)
            result = np.clip(q, data.act_min, data.act_max)
        else:
            result = self._quantized(x1, x2, out.size, data)
        np.copyto(out, np.asarray(result).reshape(out.shape).astype(out.dtype, copy=False))

    @staticmethod
    def _quantized(x1, x2, size, data):
        if size < TABLE_THRESHOLD and data.table is None:
            return quantized_div(x1, x2, data)
        if data.table is None:
            a = np.repeat(np.arange(-128, 128, dtype=np.int8), 256)
            b = np.tile(np.arange(-128, 128, dtype=np.int8), 256)
            data.table = quantized_div(a, b, data).astype(np.int8)
        index = (x1.astype(np.intp) + 128) * 256 + (x2.astype(np.intp) + 128)
        return data.table[index]
