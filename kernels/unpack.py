"""UNPACK: float32, int32, int16 and int8, as TFLM's reference kernel.

TFLM's UNPACK has no prepare (no temporary tensors, no allocations): eval splits the
input along ``axis`` (negative counts from the end of the input shape) into ``num``
outputs. The checks TFLM leaves out (``num`` = the number of outputs = the input's size
along the axis, output shapes and types) are made here in prepare, from the run-time
tensors only.
"""
from __future__ import annotations

from .base import Kernel, register
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, copy_rows, flat_size, normalize_axis, type_name

SUPPORTED = (FLOAT32, INT32, INT16, INT8)


class OpData:
    num = 0
    outer = copy = 0


@register
class Unpack(Kernel):
    op = "UNPACK"
    supported_types = ("float32", "int8", "int16", "int32")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        ctx.check_counts(node, 1, 0)
        inp = ctx.eval_tensor(node.inputs[0])
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Type '{type_name(inp.type)}' is not supported by unpack.")
        num = int(node.params.num)
        if num < 1 or num != len(node.outputs):
            raise ctx.error(f"num {num} must be the number of outputs ({len(node.outputs)})")
        in_shape = tuple(inp.shape)
        axis = normalize_axis(int(node.params.axis), len(in_shape))
        if not 0 <= axis < len(in_shape):
            raise ctx.error(f"axis {node.params.axis} is out of range for an input of "
                            f"{len(in_shape)} dimensions")
        if in_shape[axis] != num:
            raise ctx.error(f"input dimension {axis} is {in_shape[axis]}, expected num {num}")
        outer, copy = flat_size(in_shape[:axis]), flat_size(in_shape[axis + 1:])
        for i, t in enumerate(node.outputs):
            if t < 0:
                raise ctx.error(f"output {i} is missing")
            o = ctx.eval_tensor(t)
            if o.type != inp.type:
                raise ctx.error(f"output {i} type {type_name(o.type)} differs from the input type "
                                f"{type_name(inp.type)}")
            if flat_size(o.shape) != outer * copy:
                raise ctx.error(f"output {i} of shape {tuple(o.shape)} does not match the input "
                                f"shape {in_shape} without axis {axis}")
        data.num, data.outer, data.copy = num, outer, copy

    def invoke(self, ctx, node):
        data = node.user_data
        n = data.copy
        x = node.input_arrays[0].reshape(data.outer, data.num * n)
        for i, out in enumerate(node.output_arrays):
            copy_rows(out.reshape(data.outer, n), x[:, i * n:(i + 1) * n])
