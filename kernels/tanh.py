"""TANH: float32, int8 and int16, as TFLM's reference kernels.

* float32: the C library's tanhf (glibc's; newlib's on Cortex-M), element by element.
* int8: the input, minus its zero point, is rescaled to Q4.27 (inputs beyond the
  representable radius saturate to -128 / 127), gemmlowp's fixed-point tanh gives Q0.31,
  rounded to Q0.7. TFLM checks nothing about the output quantization and writes the
  result as if it were scale 1/128, zero point 0.
* int16: zero points 0, output scale 2^-15. The input is rescaled by 3 * 2^12 * scale
  (3x or 6x for 2^-12 / 2^-11 input scales) and TFLM's sigmoid table is interpolated,
  tanh(x) = 2 sigmoid(2x) - 1 (:func:`kernels.internal.lut.tanh_int16`).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.float_math import math_for
from .internal.lut import apply_int8_table, int8_table, sigmoid_table_input_multiplier, tanh_int16
from .logistic import int8_fixed_point_activation
from .internal.quantization import checked_log2, fixed_point_input_rescale, fixed_point_tanh
from .internal.tensor_utils import FLOAT32, INT8, INT16, flat_size, type_name

_INT8_INPUT_INTEGER_BITS = 4
_INT16_OUTPUT_FRACTIONAL_BITS = 15


class OpData:
    """TFLM's tanh OpData."""
    input_zero_point = 0
    input_range_radius = 0
    input_multiplier = 0
    input_left_shift = 0
    table = None        # host cache: the int8 output for each of the 256 int8 inputs


@register
class Tanh(Kernel):
    op = "TANH"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("tanh.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        # TFLM's TanhPrepare holds the input while CalculateArithmeticOpData takes its own
        outer = ctx.input(node, 0)
        if outer is None:
            raise ctx.error("needs an input tensor")
        data.input_zero_point = outer.zero_point
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.input(node, 0)
        out = ctx.output(node, 0)
        if out is None:
            raise ctx.error("needs an output tensor")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if inp.type not in (FLOAT32, INT8, INT16):
            raise ctx.error(f"Input {type_name(inp.type)}, output {type_name(out.type)} not supported.")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"output shape {out.shape} does not match input shape {inp.shape}")
        if inp.type == INT8:
            try:
                (data.input_multiplier, data.input_left_shift,
                 data.input_range_radius) = fixed_point_input_rescale(inp.scale, _INT8_INPUT_INTEGER_BITS)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            data.table = int8_table(lambda v: int8_fixed_point_activation(
                v, data, fixed_point_tanh, 7, 0))
        elif inp.type == INT16:
            if inp.zero_point != 0 or out.zero_point != 0:
                raise ctx.error("int16 tanh needs zero points of 0, got "
                                f"{inp.zero_point} and {out.zero_point}")
            data.input_multiplier, data.input_left_shift = sigmoid_table_input_multiplier(
                inp.scale, power_of_two_shifts=(0, 1))
            is_pot, log2 = checked_log2(out.scale)
            if not is_pot or log2 != -_INT16_OUTPUT_FRACTIONAL_BITS:
                raise ctx.error(f"int16 output scale must be 2^-15, got {out.scale}")
        ctx.release(inp, out)
        ctx.release(outer)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            result = math_for(ctx.target).tanhf(x)
        elif x.dtype == np.int8:
            apply_int8_table(data.table, x, out=y)
            return
        else:
            result = tanh_int16(x, data.input_multiplier, data.input_left_shift)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
