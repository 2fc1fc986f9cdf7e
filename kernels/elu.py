"""ELU: float32 and int8, as TFLM's kernel.

* float32: x for x >= 0 (and NaN), the C library's ``expm1f(x)`` for x < 0.
* int8: a 256-entry lookup table in the kernel's OpData (``int8_t table[256]``, the
  whole persistent buffer), filled in Prepare with float32 arithmetic: dequantise
  (input scale * (q - zero point)), ``expf(v) - 1`` for v < 0, times 1 / output scale,
  ``std::round``, plus the output zero point, converted to int32 as the target's CPU
  does (x86: NaN and out-of-range values become INT32_MIN, so they clamp to -128; RV32
  and Arm saturate), clamped to int8.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.float_math import c_expf, math_for
from .internal.libm_float import expf
from .internal.lut import apply_int8_table
from .internal.quantization import c_float_to_int32_array, round_half_away
from .internal.tensor_utils import FLOAT32, INT8, flat_size, type_name

_F32 = np.float32


def elu_int8_table(input_scale, input_zero_point, output_scale, output_zero_point,
                   exp=expf) -> np.ndarray:
    """TFLM's PopulateLookupTable<int8_t> with ELU's transform; indexed by the input byte.
    ``exp``: the C library's expf of the target's build (:func:`c_expf`)."""
    with np.errstate(all="ignore"):
        inverse_scale = _F32(1.0) / _F32(output_scale)
        q = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)
        dequantized = _F32(input_scale) * (q - int(input_zero_point)).astype(_F32)
        transformed = np.where(dequantized < _F32(0.0), exp(dequantized) - _F32(1.0), dequantized)
        rescaled = round_half_away((transformed * inverse_scale).astype(_F32)).astype(_F32)
        quantized = c_float_to_int32_array(rescaled + _F32(int(output_zero_point)))
    return np.clip(quantized, -128, 127).astype(np.int8)


class OpData:
    table = None


@register
class Elu(Kernel):
    op = "ELU"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        data = OpData()
        data.table = ctx.persistent_array(np.int8, 256, nbytes=ctx.sizeof("elu.OpData"))
        return data

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type {type_name(out.type)} differ")
        if inp.type not in (FLOAT32, INT8):
            raise ctx.error(f"ELU only supports float32 and int8 currently, got {type_name(inp.type)}.")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"output shape {tuple(out.shape)} does not match input shape {tuple(inp.shape)}")
        if inp.type == INT8:
            node.user_data.table[:] = elu_int8_table(inp.scale, inp.zero_point, out.scale, out.zero_point,
                                                     c_expf(ctx.target))
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.int8:
            apply_int8_table(node.user_data.table, x, out=y)
            return
        else:
            with np.errstate(all="ignore"):
                result = np.where(x < _F32(0.0), math_for(ctx.target).expm1f(x), x)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
