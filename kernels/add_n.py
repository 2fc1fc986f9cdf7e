"""ADD_N: the elementwise sum of N >= 2 same-shape tensors, float32 and int8, as TFLM's
reference kernel.

* float32: per element ``acc = 0.0f; acc += in_j`` for j in order (so an all ``-0.0`` sum
  is ``+0.0``).
* int8 (all inputs share one scale and zero point): each input becomes
  ``((x - zp) << 20) * 0.5`` (quantized multiplier of ``scale / (2 * scale)``); the
  accumulator does not start at 0 but at that transform of ``-zp`` (TFLM's kernel seeds
  it with the input offset); the int32 sum (wrapping) is requantized with the multiplier
  of ``2 * scale / (2^20 * output_scale)``, which must be below 1 (TFLM aborts
  otherwise), offset by the output zero point and clamped to int8.

Arena, as TFLM's prepare: the first input and the output as temporaries, then each other
input as a temporary in turn; float32 requests a scratch buffer of one data pointer per
input; int8 allocates its OpData, then requests that scratch buffer. TFLM sums as many
elements as the output has without checking it against the inputs: a different count is
refused here.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.float_math import math_for
from .internal.quantization import (ieee_div, multiply_by_quantized_multiplier_smaller_than_one_exp,
                           quantize_multiplier_smaller_than_one_exp, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, flat_size, type_name

LEFT_SHIFT = 20


class OpData:
    quant = None


class QuantParams:
    def __init__(self, inp, out):
        self.input_offset = -inp.zero_point
        self.output_offset = out.zero_point
        scale = float(np.float32(inp.scale))
        twice = 2.0 * scale
        self.input_multiplier, self.input_shift = quantize_multiplier_smaller_than_one_exp(
            ieee_div(scale, twice))
        self.output_multiplier, self.output_shift = quantize_multiplier_smaller_than_one_exp(
            ieee_div(twice, (1 << LEFT_SHIFT) * float(np.float32(out.scale))))

    def scaled(self, x):
        shifted = (np.asarray(x, dtype=np.int64) + self.input_offset) << LEFT_SHIFT
        return multiply_by_quantized_multiplier_smaller_than_one_exp(
            shifted, self.input_multiplier, self.input_shift)


@register
class AddN(Kernel):
    op = "ADD_N"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        n = len(node.inputs)
        if n < 2:
            raise ctx.error(f"needs at least two inputs, got {n}")
        if len(node.outputs) != 1:
            raise ctx.error(f"needs one output, got {len(node.outputs)}")
        first = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        if out.type != first.type:
            raise ctx.error(f"output type {type_name(out.type)} must be the inputs' type "
                            f"{type_name(first.type)}")
        for i in range(1, n):
            t = ctx.required_input(node, i)
            if tuple(t.shape) != tuple(first.shape):
                raise ctx.error(f"input {i} has shape {tuple(t.shape)}, input 0 {tuple(first.shape)}: "
                                "all inputs must have the same shape")
            if t.type != first.type:
                raise ctx.error(f"input {i} has type {type_name(t.type)}, input 0 "
                                f"{type_name(first.type)}: all inputs must have the same type")
            if first.type == INT8 and (t.zero_point != first.zero_point or
                                       np.float32(t.scale) != np.float32(first.scale)):
                raise ctx.error(f"int8 input {i} has scale {t.scale} and zero point "
                                f"{t.zero_point}, input 0 {first.scale} and {first.zero_point}: "
                                "all inputs must share them")
            ctx.release(t)
        if flat_size(out.shape) != flat_size(first.shape):
            raise ctx.error(f"the inputs have {flat_size(first.shape)} elements but the output of "
                            f"shape {tuple(out.shape)} has {flat_size(out.shape)}")
        pointers = ctx.sizeof("pointer") * n
        if out.type == FLOAT32:
            ctx.request_scratch(pointers)
        elif out.type == INT8:
            ctx.allocate_persistent(ctx.sizeof("add_n.OpData"))
            ctx.request_scratch(pointers)
            for name, t in (("input", first), ("output", out)):
                if not (t.scale > 0 and np.isfinite(t.scale)):
                    raise ctx.error(f"int8 ADD_N needs a positive {name} scale, got {t.scale} "
                                    "(TFLM aborts)")
            try:
                data.quant = QuantParams(first, out)
            except ValueError:
                raise ctx.error(f"input scale {first.scale} / output scale {out.scale} must be "
                                f"below 2^19 (TFLM aborts otherwise)") from None
        else:
            raise ctx.error(f"ADD_N only supports FLOAT32 and INT8, got {type_name(out.type)}.")
        ctx.release(first, out)

    def invoke(self, ctx, node):
        inputs = node.input_arrays
        out = node.output_arrays[0]
        p = node.user_data.quant
        if p is None:
            add = math_for(ctx.target).add             # the build's NaN rules
            acc = np.zeros(out.size, dtype=np.float32)
            for x in inputs:
                acc = add(acc, x.reshape(-1))
            np.copyto(out, acc.reshape(out.shape))
            return
        acc = np.full(out.size, int(p.scaled(0)), dtype=np.int64)   # seeded with scaled(-zp)
        for x in inputs:
            acc = wrap_int32(acc + p.scaled(x.reshape(-1)))
        raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
            acc, p.output_multiplier, p.output_shift) + p.output_offset
        np.copyto(out, np.clip(raw, -128, 127).astype(np.int8).reshape(out.shape))
