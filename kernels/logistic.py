"""LOGISTIC: float32, int8 and int16, as TFLM's reference kernels.

* float32: 1 above 16.619047, exp(x) below -9, else 1 / (1 + exp(-x)), with glibc's
  expf in float32.
* int8: the input, minus its zero point, is rescaled to Q4.27 (inputs beyond the
  representable radius saturate to -128 / 127), gemmlowp's fixed-point logistic gives
  Q0.31, rounded to Q0.8 and offset by -128 (the output zero point must be -128; its
  scale is taken to be 1/256 whatever the tensor says).
* int16: zero points 0, output scale 2^-15. The input is rescaled by 3 * 2^12 * scale
  (exactly 3x for a 2^-12 input scale) and TFLM's 256-entry sigmoid table is
  interpolated in unsigned arithmetic (:data:`kernels.internal.lut.SIGMOID_TABLE_UINT16`).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.float_math import c_expf
from .internal.libm_float import sigmoid_reference_float
from .internal.lut import apply_int8_table, int8_table, logistic_int16, sigmoid_table_input_multiplier
from .internal.quantization import (checked_log2, fixed_point_input_rescale, fixed_point_logistic,
                           multiply_by_quantized_multiplier, rounding_divide_by_pot)
from .internal.tensor_utils import FLOAT32, INT8, INT16, flat_size, type_name

_INT8_INPUT_INTEGER_BITS = 4
_INT16_OUTPUT_FRACTIONAL_BITS = 15


class OpData:
    """TFLM's OpDataLogistic."""
    input_zero_point = 0
    input_range_radius = 0
    input_multiplier = 0
    input_left_shift = 0
    table = None        # host cache: the int8 output for each of the 256 int8 inputs


def int8_fixed_point_activation(x: np.ndarray, data, fixed_point_fn, output_fraction_bits: int,
                                output_offset: int) -> np.ndarray:
    """TFLM's int8 LOGISTIC / TANH (returns int64 values): the input minus its zero point,
    rescaled to Q4.27 (beyond the representable radius it saturates to -128 / 127), through
    ``fixed_point_fn`` (Q4.27 -> Q0.31), rounded to ``output_fraction_bits`` fractional
    bits and offset."""
    centred = x.astype(np.int64) - data.input_zero_point
    inside = np.abs(centred) < data.input_range_radius
    q4 = multiply_by_quantized_multiplier(np.where(inside, centred, 0), data.input_multiplier,
                                          data.input_left_shift)
    q0 = fixed_point_fn(q4, _INT8_INPUT_INTEGER_BITS)
    out = np.clip(rounding_divide_by_pot(q0, 31 - output_fraction_bits) + output_offset, -128, 127)
    out = np.where(centred >= data.input_range_radius, 127, out)
    return np.where(centred <= -data.input_range_radius, -128, out)


@register
class Logistic(Kernel):
    op = "LOGISTIC"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("logistic.OpDataLogistic"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        inp = ctx.input(node, 0)
        if inp is None:
            raise ctx.error("needs an input tensor")
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
            if out.zero_point != -128:
                raise ctx.error(f"int8 output zero point must be -128, got {out.zero_point}")
            data.input_zero_point = inp.zero_point
            try:
                (data.input_multiplier, data.input_left_shift,
                 data.input_range_radius) = fixed_point_input_rescale(inp.scale, _INT8_INPUT_INTEGER_BITS)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            data.table = int8_table(lambda v: int8_fixed_point_activation(
                v, data, fixed_point_logistic, 8, -128))
        elif inp.type == INT16:
            if inp.zero_point != 0 or out.zero_point != 0:
                raise ctx.error("int16 logistic needs zero points of 0, got "
                                f"{inp.zero_point} and {out.zero_point}")
            data.input_multiplier, data.input_left_shift = sigmoid_table_input_multiplier(
                inp.scale, power_of_two_shifts=(0,))
            is_pot, log2 = checked_log2(out.scale)
            if not is_pot or log2 != -_INT16_OUTPUT_FRACTIONAL_BITS:
                raise ctx.error(f"int16 output scale must be 2^-15, got {out.scale}")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            result = sigmoid_reference_float(x, c_expf(ctx.target))
        elif x.dtype == np.int8:
            apply_int8_table(data.table, x, out=y)
            return
        else:
            result = logistic_int16(x, data.input_multiplier, data.input_left_shift)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
