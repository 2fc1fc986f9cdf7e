"""DEQUANTIZE: int8 / int16 / uint8 -> float32, as TFLM's reference kernel:
``float(double(scale) * (x - zero_point))`` (per-tensor parameters)."""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.lut import apply_int8_table, apply_int16_table, int8_table, int16_table
from .internal.sample_rows import flat_elementwise_rows
from .internal.tensor_utils import FLOAT32, INT8, INT16, UINT8, flat_size, type_name


class OpData:
    """TFLM's DequantizeOpData (the fields the reference kernel uses)."""
    scale = 0.0
    zero_point = 0
    table = None        # int8 / int16 inputs: the value of every input, computed once


@register
class Dequantize(Kernel):
    op = "DEQUANTIZE"
    supported_types = ("int8->float32", "int16->float32", "uint8->float32")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("dequantize.DequantizeOpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        if inp.type not in (INT8, INT16, UINT8):
            raise ctx.error(f"input type {type_name(inp.type)} not supported (int8, int16 or uint8)")
        if out.type != FLOAT32:
            raise ctx.error(f"output type {type_name(out.type)} not supported (float32 only)")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"input shape {inp.shape} and output shape {out.shape} differ in size")
        data.zero_point = inp.zero_point
        data.scale = float(np.float32(inp.scale))
        if inp.type in (INT8, INT16):
            make = int8_table if inp.type == INT8 else int16_table
            data.table = make(lambda v: self._dequantize(data, v), np.float32)
        ctx.release(inp, out)

    @staticmethod
    def _dequantize(data, x: np.ndarray) -> np.ndarray:
        values = np.float64(data.scale) * (x.astype(np.int64) - data.zero_point).astype(np.float64)
        return values.astype(np.float32)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        if data.table is not None:
            lookup = apply_int8_table if x.dtype == np.int8 else apply_int16_table
            lookup(data.table, x, out=out)
            return
        np.copyto(out, self._dequantize(data, x).reshape(out.shape))
