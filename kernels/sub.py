"""SUB: float32, int32, int8 and int16 (general rescaling path), with broadcasting up to
6-D, as TFLM's reference kernel.

The quantized formula is ADD's with a difference instead of a sum: the parameters and
the rescale / requantize helpers of :mod:`kernels.add` are shared. (The 2026-08 source
derives SUB's three multipliers in float32, as the Cortex-M targets do
(``Target.float32_expressions``); the tflite-micro package uses double arithmetic as ADD
does: scales exist for which the two differ.)
"""
from __future__ import annotations

import numpy as np

from .add import RescaleParams, rescaled_inputs, requantize_sum
from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.float_math import math_for
from .internal.broadcast import check_broadcast_output
from .internal.quantization import (activation_bounds_float32, activation_bounds_int32, clamp_float32,
                           wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, type_name


class OpData:
    requires_broadcast = False
    quant = None
    act_min = act_max = None


@register
class Sub(Kernel):
    op = "SUB"
    supported_types = ("float32", "int8", "int16", "int32")

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("sub.OpDataSub"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        in1 = ctx.required_input(node, 0)
        in2 = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if out.type not in (FLOAT32, INT32, INT8, INT16):
            raise ctx.error(f"Type {type_name(out.type)} ({out.type}) not supported.")
        if not (in1.type == in2.type == out.type):
            raise ctx.error(f"input types {type_name(in1.type)}, {type_name(in2.type)} and output "
                            f"type {type_name(out.type)} must match")
        data.requires_broadcast = check_broadcast_output(ctx, in1.shape, in2.shape, out.shape)
        activation = node.params.fused_activation_function
        if out.type in (INT8, INT16):
            for name, t in (("input 0", in1), ("input 1", in2), ("output", out)):
                if t.quantization is None or not t.scale > 0:
                    raise ctx.error(f"quantized {type_name(out.type)} SUB needs a positive scale on "
                                    f"{name}")
            try:
                data.quant = RescaleParams(in1, in2, out, activation, 15 if out.type == INT16 else 20,
                                           float32=ctx.target.float32_expressions)
            except ValueError as e:
                raise ctx.error(f"scales {in1.scale}, {in2.scale} -> {out.scale}: {e}") from None
        elif out.type == INT32:
            for name, t in (("input 0", in1), ("input 1", in2), ("output", out)):
                if t.quantization is not None:
                    raise ctx.error(f"int32 SUB supports unquantized tensors only ({name} is quantized)")
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
                diff = math_for(ctx.target).sub(x1, x2)    # the build's NaN rules
            result = clamp_float32(diff, data.act_min, data.act_max)
        elif out.dtype == np.int32:
            diff = wrap_int32(x1.astype(np.int64) - x2.astype(np.int64))
            result = np.clip(diff, data.act_min, data.act_max)
        else:
            s1, s2 = rescaled_inputs(x1, x2, data.quant)
            result = requantize_sum(s1 - s2, data.quant)
        np.copyto(out, np.asarray(result).reshape(out.shape).astype(out.dtype, copy=False))
