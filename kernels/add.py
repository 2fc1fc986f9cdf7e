"""ADD: float32, int32, int8 and int16 (general rescaling path), with broadcasting, as
TFLM's reference kernel."""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.float_math import math_for
from .internal.broadcast import broadcast_shape, check_binary_shapes
from .internal.lut import apply_int8_pair_table, int8_pair_table
from .internal.quantization import (ieee_div, activation_range_float, activation_range_quantized,
                           multiply_by_quantized_multiplier_smaller_than_one_exp,
                           quantize_multiplier_smaller_than_one_exp, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, type_name


class RescaleParams:
    """Quantized add/sub parameters (TFLM's ArithmeticParams subset)."""

    def __init__(self, in1, in2, out, activation, left_shift: int, float32: bool = False):
        """``float32``: the three real multipliers are float32 expressions widened to
        double (TFLM 90b983c2's SUB) instead of double ones (ADD; the package's SUB)."""
        self.left_shift = left_shift
        # int32 as in C: a zero point outside the type's range is not checked by TFLM
        self.input1_offset = int(wrap_int32(-int(wrap_int32(in1.zero_point))))
        self.input2_offset = int(wrap_int32(-int(wrap_int32(in2.zero_point))))
        self.output_offset = int(wrap_int32(out.zero_point))
        if float32:
            f = np.float32
            twice = f(2) * max(f(in1.scale), f(in2.scale))
            real1 = float(f(in1.scale) / twice)
            real2 = float(f(in2.scale) / twice)
            real_out = float(twice / (f(1 << left_shift) * f(out.scale)))
        else:
            twice_max = 2.0 * float(max(np.float32(in1.scale), np.float32(in2.scale)))
            real1 = ieee_div(float(in1.scale), twice_max)
            real2 = ieee_div(float(in2.scale), twice_max)
            real_out = ieee_div(twice_max, (1 << left_shift) * float(out.scale))
        self.input1_multiplier, self.input1_shift = quantize_multiplier_smaller_than_one_exp(real1)
        self.input2_multiplier, self.input2_shift = quantize_multiplier_smaller_than_one_exp(real2)
        self.output_multiplier, self.output_shift = quantize_multiplier_smaller_than_one_exp(real_out)
        self.act_min, self.act_max = activation_range_quantized(
            activation, out.dtype, out.scale, out.zero_point)


def rescaled_inputs(x1: np.ndarray, x2: np.ndarray, p: RescaleParams):
    """Both inputs brought to the common scale (TFLM's scaled_input{1,2}_val), in int32
    arithmetic that wraps as C's does (only zero points outside the type's range reach
    it: TFLM checks none)."""
    factor = 1 << p.left_shift
    v1 = wrap_int32(wrap_int32(x1.astype(np.int64) + p.input1_offset) * factor)
    v2 = wrap_int32(wrap_int32(x2.astype(np.int64) + p.input2_offset) * factor)
    s1 = multiply_by_quantized_multiplier_smaller_than_one_exp(v1, p.input1_multiplier, p.input1_shift)
    s2 = multiply_by_quantized_multiplier_smaller_than_one_exp(v2, p.input2_multiplier, p.input2_shift)
    return s1, s2


def requantize_sum(raw: np.ndarray, p: RescaleParams) -> np.ndarray:
    out = multiply_by_quantized_multiplier_smaller_than_one_exp(
        wrap_int32(raw), p.output_multiplier, p.output_shift) + p.output_offset
    return np.clip(out, p.act_min, p.act_max)


class OpData:
    requires_broadcast = False
    quant = None
    act_min_f = act_max_f = None
    pair_table = None       # int8: every (input1, input2) pair's result, from the routine above


@register
class Add(Kernel):
    op = "ADD"
    supported_types = ("float32", "int8", "int16", "int32")

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("add.OpDataAdd"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        in1, in2 = ctx.input(node, 0), ctx.input(node, 1)
        out = ctx.output(node, 0)
        if in1 is None or in2 is None or out is None:
            raise ctx.error("needs two inputs and one output")
        data.requires_broadcast = check_binary_shapes(ctx, in1.shape, in2.shape, out.shape)
        activation = node.params.fused_activation_function
        if out.type in (INT8, INT16):
            if out.quantization is None:
                raise ctx.error("quantized output needs quantization parameters")
            try:
                data.quant = RescaleParams(in1, in2, out, activation, 15 if out.type == INT16 else 20)
            except ValueError as e:
                raise ctx.error(str(e)) from None
        elif out.type == FLOAT32:
            data.act_min_f, data.act_max_f = activation_range_float(activation)
        elif out.type == INT32:
            if in1.quantization is not None or in2.quantization is not None:
                raise ctx.error("int32 add supports unquantized inputs only")
        else:
            raise ctx.error(f"Type {type_name(out.type)} ({out.type}) not supported.")
        if not (in1.type == in2.type == out.type):
            raise ctx.error(f"input types {type_name(in1.type)}, {type_name(in2.type)} and output "
                            f"type {type_name(out.type)} must match")
        data.shape = broadcast_shape(in1.shape, in2.shape)
        if out.type == INT8:
            quant = data.quant
            data.pair_table = int8_pair_table(
                lambda a, b: requantize_sum(sum(rescaled_inputs(a, b, quant)), quant))
        ctx.release(in1, in2, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        if out.dtype == np.float32:
            c_math = math_for(ctx.target)                  # the build's NaN rules
            commuted = c_math.input2_first("ADD", x1.shape, x2.shape)
            total = c_math.add(x2, x1) if commuted else c_math.add(x1, x2)
            result = np.minimum(np.maximum(total, data.act_min_f), data.act_max_f)
        elif out.dtype == np.int32:
            result = wrap_int32(x1.astype(np.int64) + x2.astype(np.int64))
        elif data.pair_table is not None:
            apply_int8_pair_table(data.pair_table, x1, x2, out)
            return
        else:
            s1, s2 = rescaled_inputs(x1, x2, data.quant)
            result = requantize_sum(s1 + s2, data.quant)
        np.copyto(out, np.asarray(result).reshape(out.shape).astype(out.dtype, copy=False))
