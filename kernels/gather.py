"""GATHER: float32 and int8 values, int32 positions, with ``axis`` and ``batch_dims``
(negative values count from the end), as TFLM's reference kernel.

Prepare takes the input, the positions and the output as temporary tensors (in that
order) and, like TFLM, moves the output's dims into a persistent TfLiteIntArray (4 + 4
bytes per dimension of the model's output shape) before writing the gathered shape into
it; that shape must be the model's output shape here. Positions must lie in
[0, axis size): they are checked in prepare when constant, else in invoke (TFLM only
has debug checks and would read outside the input).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import outputs_match
from .internal.tensor_utils import FLOAT32, INT8, INT32, flat_size, items, make_output_dims_writable, type_name


class OpData:
    batch = outer = axis_size = inner = coord_size = 0
    shape4 = None


def check_positions(coords: np.ndarray, axis_size: int):
    """None if every position is valid, else the message."""
    if coords.size and (coords.min() < 0 or coords.max() >= axis_size):
        bad = coords[(coords < 0) | (coords >= axis_size)].reshape(-1)[0]
        return f"position {int(bad)} is outside [0, {axis_size})"
    return None


@register
class Gather(Kernel):
    op = "GATHER"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Either the positions are constant and the gathered axis is not the batch
        axis the samples replace, or the values are constant and the positions vary
        (axis 0, no batch dimensions); the block shapes must line up."""
        params, coords = block.input(0), block.input(1)
        if params is None or coords is None or int(block.params.batch_dims) != 0:
            return False
        axis = int(block.params.axis)
        if block.only_vary((0,)):
            new_axis = block.block_axis(params, axis)
            if new_axis is None:
                return False
            p = block.shape(params)
            shape = p[:new_axis] + tuple(coords.shape) + p[new_axis + 1:]
            block.rewrite_params(axis=new_axis)
        elif block.only_vary((1,)):
            if axis not in (0, -len(params.shape)):
                return False
            shape = block.shape(coords) + tuple(params.shape[1:])
        else:
            return False
        return outputs_match(block, [shape])

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        coords = ctx.required_input(node, 1, "the positions tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if coords.type != INT32:
            raise ctx.error(f"Positions of type '{type_name(coords.type)}' are not supported by gather.")
        if inp.type not in (FLOAT32, INT8):
            raise ctx.error(f"Type '{type_name(inp.type)}' is not supported by gather.")
        in_shape, c_shape = tuple(inp.shape), tuple(coords.shape)
        axis = int(node.params.axis)
        if axis < 0:
            axis += len(in_shape)
        if not 0 <= axis < len(in_shape):
            raise ctx.error(f"axis {node.params.axis} is out of range for an input of "
                            f"{len(in_shape)} dimensions")
        batch_dims = int(node.params.batch_dims)
        if batch_dims < 0:
            batch_dims += len(c_shape)
        if batch_dims > axis:
            raise ctx.error(f"batch_dims {node.params.batch_dims} exceeds the axis {axis}")
        if not 0 <= batch_dims < len(in_shape) or batch_dims > len(c_shape):
            raise ctx.error(f"batch_dims {node.params.batch_dims} is out of range for input "
                            f"{in_shape} and positions {c_shape}")
        for i in range(batch_dims):
            if in_shape[i] != c_shape[i]:
                raise ctx.error(f"batch dimension {i}: input has {in_shape[i]}, positions "
                                f"{c_shape[i]}")
        make_output_dims_writable(ctx, len(out.shape))
        expected = in_shape[:axis] + c_shape[batch_dims:] + in_shape[axis + 1:]
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} is not the gathered shape {expected}")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        data.batch = flat_size(in_shape[:batch_dims])
        data.outer = flat_size(in_shape[batch_dims:axis])
        data.axis_size = in_shape[axis]
        data.inner = flat_size(in_shape[axis + 1:])
        data.coord_size = flat_size(c_shape[batch_dims:])
        if coords.data is not None:
            problem = check_positions(coords.data, data.axis_size)
            if problem:
                raise ctx.error(problem)
        data.checked = coords.data is not None
        ctx.release(inp, coords, out)

    def invoke(self, ctx, node):
        d = node.user_data
        coords = node.input_arrays[1]
        if not d.checked:
            problem = check_positions(coords, d.axis_size)
            if problem:
                raise ctx.error(problem)
        out = node.output_arrays[0]
        if out.size == 0:
            return
        # whole rows of ``inner`` values move as single items
        x = items(node.input_arrays[0].reshape(d.batch, d.outer, d.axis_size, d.inner))
        c = coords.reshape(d.batch, d.coord_size)
        out = items(out.reshape(d.batch, d.outer, d.coord_size, d.inner))
        if d.batch == 1:
            np.take(x[0], c[0], axis=1, out=out[0])
        else:
            b = np.arange(d.batch)[:, None, None]
            o = np.arange(d.outer)[None, :, None]
            out[...] = x[b, o, c[:, None, :]]
