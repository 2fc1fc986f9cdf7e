"""EXPAND_DIMS: float32, int8 and int16, as TFLM's reference kernel.

Prepare takes the input, the axis and the output as temporary tensors (in that order).
The axis must be a constant int32 tensor of at most one dimension; a negative axis
counts from the end of the output shape. The output shape must be the input shape
with a 1 inserted at the axis. Eval copies the elements.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_copy_rows
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, copy_flat, type_name

SUPPORTED = (FLOAT32, INT8, INT16)


@register
class ExpandDims(Kernel):
    op = "EXPAND_DIMS"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """A copy of the bytes; the block inserts its unit axis where the block output
        shape has it."""
        axis = block.constant(1)
        if not flat_copy_rows(block) or axis is None or len(block.outputs) != 1:
            return False
        shape_in, shape_out = block.shape(block.input(0)), block.shape(block.output(0))
        for a in range(len(shape_in) + 1):
            if shape_in[:a] + (1,) + shape_in[a:] == shape_out:
                block.rewrite_constant(1, np.full(axis.shape, a, dtype=axis.dtype))
                return True
        return False

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        axis_t = ctx.required_input(node, 1, "the axis tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if axis_t.data is None:
            raise ctx.error("Non-constant >axis< tensor is not supported")
        if len(axis_t.shape) > 1:
            raise ctx.error(f"the axis must be a single value, got a tensor of shape {tuple(axis_t.shape)}")
        if axis_t.type != INT32:
            raise ctx.error(f"Axis type {type_name(axis_t.type)} ({axis_t.type}) not supported by Expand_Dims.")
        if axis_t.num_elements < 1:
            raise ctx.error("the axis tensor is empty")
        in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
        axis = int(axis_t.data.reshape(-1)[0])
        if axis < 0:
            axis += len(in_shape) + 1
        if not 0 <= axis <= len(in_shape):
            raise ctx.error(f"axis {int(axis_t.data.reshape(-1)[0])} is out of range for an "
                            f"input of {len(in_shape)} dimensions")
        expected = in_shape[:axis] + (1,) + in_shape[axis:]
        if out_shape != expected:
            raise ctx.error(f"output shape {out_shape} is not the input shape {in_shape} with "
                            f"a 1 inserted at axis {axis} ({expected})")
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Expand_Dims only currently supports int8, int16 and float32, got "
                            f"{type_name(inp.type)}.")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        ctx.release(inp, axis_t, out)

    def invoke(self, ctx, node):
        copy_flat(node.output_arrays[0], node.input_arrays[0])
