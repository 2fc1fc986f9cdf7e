"""QUANTIZE: float32 -> int8 / int16 (affine quantization) and the requantizations
int8 -> int8 / uint8 / int16 / int32, int16 -> int8 / int16 / int32, uint8 -> int8 and
int32 -> int8 / int16, as TFLM's reference kernel (per-tensor output quantization).

float32: ``round(x / scale) + zero_point`` with the division and std::round in float32,
then clamped. The float -> int32 conversion of the rounded value (NaN and values outside
the int32 range are undefined in C) follows the target's CPU
(:func:`~kernels.internal.quantization.c_float_to_int32_array`): x86's ``cvttss2si`` gives
INT32_MIN, so huge inputs quantize to the bottom of the range when the zero point is >= 0,
as in the tflite-micro package; RV32 and Arm saturate.

Requantization: ``MultiplyByQuantizedMultiplier(x - input_zero_point) +
output_zero_point`` (32-bit, double rounding), clamped to the output type.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.lut import apply_int8_table, apply_int16_table, int8_table, int16_table
from .internal.sample_rows import flat_elementwise_rows
from .internal.quantization import (c_float_to_int32_array, multiply_by_quantized_multiplier, quantize_multiplier, round_half_away,
                           wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, UINT8, flat_size, type_name

INT32_MIN = -(1 << 31)

#: input type -> output types TFLM's EvalQuantizeReference handles
SUPPORTED = {
    FLOAT32: (INT8, INT16),
    INT32: (INT8, INT16),
    INT16: (INT8, INT16, INT32),
    INT8: (INT8, UINT8, INT16, INT32),
    UINT8: (INT8,),
}
#: input/output pairs for which TFLM's prepare computes the requantize multiplier
REQUANTIZE_PAIRS = {(INT16, INT8), (INT8, INT8), (INT8, UINT8), (UINT8, INT8), (INT8, INT16),
                    (INT8, INT32), (INT16, INT16), (INT16, INT32), (INT32, INT8), (INT32, INT16)}


class OpData:
    """TFLM's OpDataQuantizeReference."""
    zero_point = 0
    scale = 0.0
    requantize_multiplier = 0
    requantize_shift = 0
    input_zero_point = 0
    table = None        # int8 / int16 inputs: the result for every input value


def affine_quantize(x: np.ndarray, scale: float, zero_point: int, dtype) -> np.ndarray:
    """TFLM's AffineQuantize of float32 values (int64 result, clamped to ``dtype``)."""
    with np.errstate(all="ignore"):
        q = round_half_away(np.divide(x, np.float32(scale), dtype=np.float32))
    info = np.iinfo(dtype)
    return np.clip(wrap_int32(c_float_to_int32_array(q) + int(zero_point)), info.min, info.max)


def requantize(x: np.ndarray, multiplier: int, shift: int, input_zero_point: int,
               output_zero_point: int, dtype) -> np.ndarray:
    """TFLM's Requantize (int64 result, clamped to ``dtype``)."""
    v = wrap_int32(x.astype(np.int64) - int(input_zero_point))
    out = wrap_int32(multiply_by_quantized_multiplier(v, multiplier, shift) + int(output_zero_point))
    info = np.iinfo(dtype)
    return np.clip(out, info.min, info.max)


@register
class Quantize(Kernel):
    op = "QUANTIZE"
    supported_types = ("float32->int8", "float32->int16", "int8->int8", "int8->int16", "int8->int32",
                       "int8->uint8", "int16->int8", "int16->int16", "int16->int32", "int32->int8",
                       "int32->int16", "uint8->int8")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("quantize.OpDataQuantizeReference"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        q = out.quantization
        if q is None:
            raise ctx.error("the output needs (affine) quantization parameters")
        if q.scales.size != 1:
            raise ctx.error(f"the output has {q.scales.size} scales; only per-tensor quantization "
                            "is supported")
        if inp.type not in SUPPORTED or out.type not in (INT8, INT16, INT32, UINT8):
            raise ctx.error(f"Input {type_name(inp.type)}, output {type_name(out.type)} not supported.")
        if out.type not in SUPPORTED[inp.type]:
            raise ctx.error(f"Input {type_name(inp.type)}, output {type_name(out.type)} not supported.")
        if not out.scale > 0:
            raise ctx.error(f"output scale {out.scale} must be positive")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"input shape {inp.shape} and output shape {out.shape} differ in size")
        if (inp.type, out.type) in REQUANTIZE_PAIRS:
            effective = float(np.float64(inp.scale) / np.float64(out.scale))
            try:
                data.requantize_multiplier, data.requantize_shift = quantize_multiplier(effective)
            except ValueError as e:
                raise ctx.error(str(e)) from None
        data.zero_point = out.zero_point
        data.scale = float(np.float32(out.scale))
        data.input_zero_point = inp.zero_point
        if (inp.type, out.type) in REQUANTIZE_PAIRS and inp.type in (INT8, INT16):
            # Requantize of every possible input value, computed once by the routine itself
            routine = (lambda v: requantize(v, data.requantize_multiplier, data.requantize_shift,
                                            data.input_zero_point, data.zero_point, out.dtype))
            data.table = (int8_table(routine, out.dtype) if inp.type == INT8
                          else int16_table(routine, out.dtype))
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        if data.table is not None:
            table_lookup = apply_int8_table if x.dtype == np.int8 else apply_int16_table
            table_lookup(data.table, x, out=out)
            return
        if x.dtype == np.float32:
            result = affine_quantize(x, data.scale, data.zero_point, out.dtype)
        else:
            result = requantize(x, data.requantize_multiplier, data.requantize_shift,
                                data.input_zero_point, data.zero_point, out.dtype)
        np.copyto(out, result.reshape(out.shape).astype(out.dtype, copy=False))

