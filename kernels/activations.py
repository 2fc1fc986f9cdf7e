"""RELU and RELU6 (TFLM registers both from one activations kernel): float32, int8 and
int16, as TFLM's reference kernels.

* RELU float32: x < 0 ? 0 : x. Quantized: the centred input is requantised to the output
  (input_scale / output_scale in double, TFLM's QuantizeMultiplier) and clamped below at
  the output zero point (int16 needs zero points of 0).
* RELU6 float32: x > 6 ? 6 : (x < 0 ? 0 : x). Quantized: a clamp in the input's own
  quantization, between its zero point and round(6 / scale) + zero point; TFLM ignores
  the output quantization (the output is assumed to share the input's).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.lut import apply_int8_table, int8_table
from .internal.quantization import (c_float_to_int32, multiply_by_quantized_multiplier, quantize_multiplier,
                                    round_half_away, round_half_away_scalar)
from .internal.tensor_utils import FLOAT32, INT8, INT16, flat_size, type_name

_RANGES = {INT8: (-128, 127), INT16: (-32768, 32767)}


class ReluOpData:
    """TFLM's ReluOpData (ReluParams)."""
    quantized_activation_min = 0
    quantized_activation_max = 0
    input_offset = 0
    output_offset = 0
    output_multiplier = 0
    output_shift = 0
    table = None        # host cache for int8: the output for each of the 256 inputs


def relu_quantized(x: np.ndarray, data: ReluOpData) -> np.ndarray:
    """TFLM's ReluQuantized (returns int64 values)."""
    scaled = multiply_by_quantized_multiplier(np.asarray(x, dtype=np.int64) - data.input_offset,
                                              data.output_multiplier, data.output_shift)
    return np.clip(data.output_offset + scaled, data.quantized_activation_min,
                   data.quantized_activation_max)


class Relu6OpData:
    """TFLM's Relu6OpData."""
    six = 0
    zero = 0


def _check_elementwise(ctx, inp, out):
    if inp.type not in (FLOAT32, INT8, INT16):
        raise ctx.error(f"Only float32/int8/int16 is supported currently, got {type_name(inp.type)}")
    if out.type != inp.type:
        raise ctx.error(f"input type {type_name(inp.type)} and output type "
                        f"{type_name(out.type)} differ")
    if flat_size(out.shape) != flat_size(inp.shape):
        raise ctx.error(f"output shape {out.shape} does not match input shape {inp.shape}")


def _positive_scale(ctx, tensor, what):
    if not np.float32(tensor.scale) > 0:
        raise ctx.error(f"quantized {what} needs a positive scale, got {tensor.scale}")


@register
class Relu(Kernel):
    op = "RELU"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("activations.ReluOpData"))
        return ReluOpData()

    def prepare(self, ctx, node):
        data = node.user_data
        inp = ctx.input(node, 0)
        if inp is None:
            raise ctx.error("needs an input tensor")
        out = ctx.output(node, 0)
        if out is None:
            raise ctx.error("needs an output tensor")
        _check_elementwise(ctx, inp, out)
        if inp.type in (INT8, INT16):
            if inp.type == INT16 and (inp.zero_point != 0 or out.zero_point != 0):
                raise ctx.error("int16 RELU needs zero points of 0, got "
                                f"{inp.zero_point} and {out.zero_point}")
            _positive_scale(ctx, inp, "input")
            _positive_scale(ctx, out, "output")
            real_multiplier = float(inp.scale) / float(out.scale)      # in double, as the package
            data.output_multiplier, data.output_shift = quantize_multiplier(real_multiplier)
            qmin, qmax = _RANGES[inp.type]
            zero = int(round_half_away_scalar(float(np.float32(0.0) / np.float32(out.scale))))
            data.quantized_activation_min = max(qmin, out.zero_point + zero)
            data.quantized_activation_max = qmax
            data.input_offset = inp.zero_point
            data.output_offset = out.zero_point
            if inp.type == INT8:
                data.table = int8_table(lambda v: relu_quantized(v, data))
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            result = np.where(x < np.float32(0.0), np.float32(0.0), x)
        elif x.dtype == np.int8:
            apply_int8_table(data.table, x, out=y)
            return
        else:
            result = relu_quantized(x, data)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))


@register
class Relu6(Kernel):
    op = "RELU6"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("activations.Relu6OpData"))
        return Relu6OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        inp = ctx.input(node, 0)            # TFLM's Relu6Prepare only takes the input
        if inp is None:
            raise ctx.error("needs an input tensor")
        out = ctx.eval_tensor(node.outputs[0]) if node.outputs and node.outputs[0] >= 0 else None
        if out is None:
            raise ctx.error("needs an output tensor")
        _check_elementwise(ctx, inp, out)
        if inp.type in (INT8, INT16):
            _positive_scale(ctx, inp, "input")
            qmin, qmax = _RANGES[inp.type]
            # TFLM's FloatToQuantizedType: round(6 / scale) + zero point in float, the C
            # conversion to int32 (a tiny scale overflows it: see c_float_to_int32), clamp
            with np.errstate(all="ignore"):
                six = np.float32(round_half_away(np.float32(6.0) / np.float32(inp.scale))) \
                    + np.float32(inp.zero_point)
            data.zero = inp.zero_point
            data.six = min(max(c_float_to_int32(six), qmin), qmax)
        ctx.release(inp)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            f = np.float32
            result = np.where(x > f(6.0), f(6.0), np.where(x < f(0.0), f(0.0), x))
        else:
            lower, upper = np.asarray(data.zero).astype(x.dtype), np.asarray(data.six).astype(x.dtype)
            result = np.where(x > upper, upper, np.where(x < lower, lower, x))
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
