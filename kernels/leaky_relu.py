"""LEAKY_RELU: float32, int8 and int16, as TFLM's reference kernels.

* float32: x > 0 ? x : x * alpha (float32 multiply).
* int8 / int16: the centred input is requantised with one of two multipliers from
  TFLM's QuantizeMultiplier: input_scale / output_scale for x >= 0, and
  input_scale * alpha / output_scale for x < 0, both in double from the float32 values
  (the tflite-micro package does so), or, on targets built from the 2026-08 source
  (``Target.float32_expressions``: Cortex-M), as float32 expressions cast to double. A
  negative alpha is applied as the magnitude's multiplier followed by a negation.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.lut import apply_int8_table, int8_table
from .internal.quantization import multiply_by_quantized_multiplier, quantize_multiplier
from .internal.tensor_utils import FLOAT32, INT8, INT16, flat_size, type_name

_RANGES = {np.dtype(np.int8): (-128, 127), np.dtype(np.int16): (-32768, 32767)}


class LeakyReluOpData:
    """TFLM's LeakyReluOpData."""
    output_multiplier_alpha = 0
    output_shift_alpha = 0
    output_multiplier_identity = 0
    output_shift_identity = 0
    input_zero_point = 0
    output_zero_point = 0
    alpha = np.float32(0.0)
    table = None        # host cache for int8: the output for each of the 256 inputs


def leaky_relu_quantized(x: np.ndarray, data: LeakyReluOpData, out_dtype) -> np.ndarray:
    """reference_ops::QuantizeLeakyRelu (returns int64 values)."""
    centred = x.astype(np.int64) - data.input_zero_point
    non_negative = centred >= 0
    identity = multiply_by_quantized_multiplier(np.where(non_negative, centred, 0),
                                                data.output_multiplier_identity,
                                                data.output_shift_identity)
    alpha_negative = data.output_multiplier_alpha < 0
    scaled = multiply_by_quantized_multiplier(np.where(non_negative, 0, centred),
                                              abs(data.output_multiplier_alpha), data.output_shift_alpha)
    if alpha_negative:
        scaled = -scaled
    lo, hi = _RANGES[np.dtype(out_dtype)]
    return np.clip(data.output_zero_point + np.where(non_negative, identity, scaled), lo, hi)


@register
class LeakyRelu(Kernel):
    op = "LEAKY_RELU"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("leaky_relu.LeakyReluOpData"))
        return LeakyReluOpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
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
            raise ctx.error(f"Only float32, int8 and int16 are supported by LEAKY_RELU, got "
                            f"{type_name(inp.type)}.")
        if flat_size(out.shape) != flat_size(inp.shape):
            raise ctx.error(f"output shape {out.shape} does not match input shape {inp.shape}")
        f = np.float32
        data.alpha = f(node.params.alpha)
        if inp.type in (INT8, INT16):
            if not (f(inp.scale) > 0 and f(out.scale) > 0):
                raise ctx.error("quantized LEAKY_RELU needs positive input and output scales")
            data.input_zero_point = inp.zero_point
            data.output_zero_point = out.zero_point
            with np.errstate(all="ignore"):
                if ctx.target.float32_expressions:    # TFLM's float expression, cast to double
                    alpha_multiplier = float(f(f(inp.scale) * data.alpha) / f(out.scale))
                    identity_multiplier = float(f(inp.scale) / f(out.scale))
                else:
                    alpha_multiplier = float(inp.scale) * float(data.alpha) / float(out.scale)
                    identity_multiplier = float(inp.scale) / float(out.scale)
            try:
                data.output_multiplier_alpha, data.output_shift_alpha = quantize_multiplier(alpha_multiplier)
                data.output_multiplier_identity, data.output_shift_identity = quantize_multiplier(
                    identity_multiplier)
            except (ValueError, OverflowError) as e:
                raise ctx.error(str(e)) from None
            if inp.type == INT8:
                data.table = int8_table(lambda v: leaky_relu_quantized(v, data, np.int8))
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            with np.errstate(all="ignore"):
                result = np.where(x > 0, x, x * data.alpha)
        elif x.dtype == np.int8:
            apply_int8_table(data.table, x, out=y)
            return
        else:
            result = leaky_relu_quantized(x, data, y.dtype)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
