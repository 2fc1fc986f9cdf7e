"""PRELU: float32, int8 (int8 alpha) and int16 (int8 alpha), with alpha broadcast against
the input (typically one alpha per channel), as TFLM's kernel.

* float32 (TFLM's BroadcastPrelu4DSlowFloat, at most 4-D): x >= 0 ? x : x * alpha.
* int8 / int16 (BroadcastBinaryOpSimple): x + input offset; non-negative values are
  requantised by input scale / output scale, negative ones are multiplied by
  (alpha - alpha zero point) and requantised by input scale * alpha scale / output
  scale (both multipliers in double, QuantizeMultiplier); plus the output zero point,
  clamped. Per-tensor scales: a per-channel alpha uses its first scale and zero point
  (TfLiteTensor.params), as TFLM. Any multiplier QuantizeMultiplier gives runs, as in
  TFLM's prepare, which checks none (left shifts of 31 or more as the CPU evaluates
  them, :func:`~kernels.internal.quantization.c_shift_factor`).

TFLM does not check the shapes; here the inputs must broadcast and the output must be
their broadcast shape (TFLM would read or write out of bounds otherwise).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.broadcast import broadcast_shape
from .internal.quantization import ieee_div, multiply_by_quantized_multiplier, quantize_multiplier
from .internal.tensor_utils import FLOAT32, INT8, INT16, type_name

_F32 = np.float32
_RANGES = {INT8: (-128, 127), INT16: (-32768, 32767)}


class PreluParams:
    input_offset = 0
    alpha_offset = 0
    output_offset = 0
    output_multiplier_1 = 0
    output_shift_1 = 0
    output_multiplier_2 = 0
    output_shift_2 = 0


@register
class Prelu(Kernel):
    op = "PRELU"
    supported_types = ("float32", "int8", "int16 x int8")
    weights_input = 1

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("prelu.PreluParams"))
        return PreluParams()

    def prepare(self, ctx, node):
        p = node.user_data
        ctx.check_counts(node, 2, 1)
        inp = ctx.required_input(node, 0, "the input tensor")
        alpha = ctx.required_input(node, 1, "the alpha tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if inp.type not in (FLOAT32, INT8, INT16):
            raise ctx.error(f"Input type '{type_name(inp.type)}' is not supported.")
        if out.type != inp.type:
            raise ctx.error(f"output type {type_name(out.type)} differs from the input's {type_name(inp.type)}")
        want_alpha = FLOAT32 if inp.type == FLOAT32 else INT8
        if alpha.type != want_alpha:
            raise ctx.error(f"alpha must be {type_name(want_alpha)} for a {type_name(inp.type)} input, "
                            f"got {type_name(alpha.type)}")
        if out.type in (INT8, INT16):
            try:
                p.output_multiplier_1, p.output_shift_1 = quantize_multiplier(
                    ieee_div(float(_F32(inp.scale)), float(_F32(out.scale))))
                p.output_multiplier_2, p.output_shift_2 = quantize_multiplier(
                    ieee_div(float(_F32(inp.scale)) * float(_F32(alpha.scale)), float(_F32(out.scale))))
            except (ValueError, ZeroDivisionError, OverflowError) as e:
                raise ctx.error(f"bad quantization scales: {e}") from None
            p.input_offset = -inp.zero_point
            p.alpha_offset = -alpha.zero_point
            p.output_offset = out.zero_point
        shape = broadcast_shape(inp.shape, alpha.shape)
        if shape is None:
            raise ctx.error(f"input shape {tuple(inp.shape)} and alpha shape {tuple(alpha.shape)} do not broadcast")
        max_dims = 4 if inp.type == FLOAT32 else 6
        rank = max(len(shape), len(out.shape))
        if rank > max_dims:
            raise ctx.error(f"{type_name(inp.type)} PRELU supports at most {max_dims} dimensions, got {rank}")
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        padded_out = (1,) * (rank - len(out.shape)) + tuple(out.shape)
        if padded != padded_out:
            raise ctx.error(f"input {tuple(inp.shape)} and alpha {tuple(alpha.shape)} broadcast to "
                            f"{tuple(shape)} but the output has shape {tuple(out.shape)}")
        ctx.release(inp, alpha, out)

    def invoke(self, ctx, node):
        p = node.user_data
        x, alpha = node.input_arrays[:2]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            with np.errstate(all="ignore"):
                result = np.where(x >= _F32(0.0), x, x * alpha)
        else:
            lo, hi = (-128, 127) if x.dtype == np.int8 else (-32768, 32767)
            value = x.astype(np.int64) + p.input_offset
            a = alpha.astype(np.int64) + p.alpha_offset
            value, a = np.broadcast_arrays(value, a)
            positive = multiply_by_quantized_multiplier(value, p.output_multiplier_1, p.output_shift_1)
            negative = multiply_by_quantized_multiplier(value * a, p.output_multiplier_2, p.output_shift_2)
            result = np.clip(np.where(value >= 0, positive, negative) + p.output_offset, lo, hi)
        np.copyto(y, np.asarray(result).reshape(y.shape).astype(y.dtype))
