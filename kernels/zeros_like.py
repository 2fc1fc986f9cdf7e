"""ZEROS_LIKE: int64, int32, int8 and float32, as TFLM's kernel (no OpData): the output
is filled with zeros of the input's type. The output must have the input's element
size and count (TFLM writes the input's element count in the input's type into it)."""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.tensor_utils import FLOAT32, INT8, INT32, INT64, flat_size, type_name


@register
class ZerosLike(Kernel):
    op = "ZEROS_LIKE"
    supported_types = ("float32", "int8", "int32", "int64")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if inp.type not in (INT64, INT32, INT8, FLOAT32):
            raise ctx.error(f"ZerosLike only currently supports int64, int32, int8 and float32, "
                            f"got {type_name(inp.type)}.")
        if out.dtype.itemsize != inp.dtype.itemsize:
            raise ctx.error(f"output type {type_name(out.type)} has a different element size than "
                            f"the input's {type_name(inp.type)}")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"output shape {tuple(out.shape)} does not match input shape {tuple(inp.shape)}")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        y = node.output_arrays[0]
        y.reshape(-1).view(np.uint8)[...] = 0
