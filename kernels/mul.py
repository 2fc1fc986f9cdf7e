"""MUL: float32, int32 (wrapping product), int8 and int16 (zero points 0), with
broadcasting up to 6-D, as TFLM's reference kernel."""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.float_math import math_for
from .internal.broadcast import check_broadcast_output
from .internal.quantization import (activation_bounds_float32, activation_bounds_int32,
                           activation_range_quantized, clamp_float32,
                           multiply_by_quantized_multiplier, quantize_multiplier, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, type_name


class OpData:
    """TFLM's OpDataMul."""
    input1_zero_point = input2_zero_point = output_zero_point = 0
    output_multiplier = output_shift = 0
    act_min = act_max = None


@register
class Mul(Kernel):
    op = "MUL"
    supported_types = ("float32", "int8", "int16", "int32")

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("mul.OpDataMul"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        in1 = ctx.required_input(node, 0)
        in2 = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        if in1.type != in2.type:
            raise ctx.error(f"input types {type_name(in1.type)} and {type_name(in2.type)} differ")
        if in1.type not in (FLOAT32, INT32, INT8, INT16):
            raise ctx.error(f"Type {type_name(in1.type)} ({in1.type}) not supported.")
        if out.type != in1.type:
            raise ctx.error(f"output type {type_name(out.type)} differs from the input type "
                            f"{type_name(in1.type)}")
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape, extended_equal=True)
        activation = node.params.fused_activation_function
        if out.type in (INT8, INT16):
            for name, t in (("input 0", in1), ("input 1", in2), ("output", out)):
                if t.quantization is None or not t.scale > 0:
                    raise ctx.error(f"quantized {type_name(out.type)} MUL needs a positive scale on {name}")
            try:
                data.act_min, data.act_max = activation_range_quantized(
                    activation, out.dtype, out.scale, out.zero_point)
                real = float(np.float64(in1.scale) * np.float64(in2.scale) / np.float64(out.scale))
                data.output_multiplier, data.output_shift = quantize_multiplier(real)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            data.input1_zero_point = in1.zero_point
            data.input2_zero_point = in2.zero_point
            data.output_zero_point = out.zero_point
            if in1.type == INT16 and (in1.zero_point or in2.zero_point or out.zero_point):
                raise ctx.error(f"int16 MUL needs zero points of 0, got {in1.zero_point}, "
                                f"{in2.zero_point} and {out.zero_point}")
        elif out.type == INT32:
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
                c_math = math_for(ctx.target)                 # the build's NaN rules
                commuted = c_math.input2_first("MUL", x1.shape, x2.shape)
                product = c_math.mul(x2, x1) if commuted else c_math.mul(x1, x2)
            result = clamp_float32(product, data.act_min, data.act_max)
        elif out.dtype == np.int32:
            product = wrap_int32(np.multiply(x1, x2, dtype=np.int64))
            result = np.clip(product, data.act_min, data.act_max)
        else:
            v1 = x1.astype(np.int64) - data.input1_zero_point
            v2 = x2.astype(np.int64) - data.input2_zero_point
            scaled = multiply_by_quantized_multiplier(v1 * v2, data.output_multiplier, data.output_shift)
            result = np.clip(scaled + data.output_zero_point, data.act_min, data.act_max)
        np.copyto(out, np.asarray(result).reshape(out.shape).astype(out.dtype, copy=False))
