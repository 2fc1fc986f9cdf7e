"""PACK: float32, int8, int16, int32 and int64, as TFLM's reference kernel.

TFLM's PACK has no prepare (no temporary tensors, no allocations): eval stacks the first
``values_count`` inputs along ``axis`` (negative counts from the end of the output
shape), reading each input as a flat block. The shape and type checks TFLM leaves out
(which would otherwise make it read or write outside the tensors) are made here in
prepare, from the run-time tensors only, so the arena sees nothing TFLM does not do.
"""
from __future__ import annotations

from .base import Kernel, register
from .internal.tensor_utils import (FLOAT32, INT8, INT16, INT32, INT64, copy_rows, flat_size, normalize_axis,
                           type_name)

SUPPORTED = (FLOAT32, INT8, INT16, INT32, INT64)


class OpData:
    count = 0
    outer = copy = 0


@register
class Pack(Kernel):
    op = "PACK"
    supported_types = ("float32", "int8", "int16", "int32", "int64")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        ctx.check_counts(node, 0, 1)
        out = ctx.eval_tensor(node.outputs[0])
        count = int(node.params.values_count)
        if not 1 <= count <= len(node.inputs):
            raise ctx.error(f"values_count {count} must be between 1 and the number of inputs "
                            f"({len(node.inputs)})")
        if any(i < 0 for i in node.inputs[:count]):
            raise ctx.error("an input tensor is missing")
        inputs = [ctx.eval_tensor(i) for i in node.inputs[:count]]
        if out.type not in SUPPORTED:
            raise ctx.error(f"Type '{type_name(out.type)}' is not supported by pack.")
        out_shape = tuple(out.shape)
        axis = normalize_axis(int(node.params.axis), len(out_shape))
        if not 0 <= axis < len(out_shape):
            raise ctx.error(f"axis {node.params.axis} is out of range for an output of "
                            f"{len(out_shape)} dimensions")
        outer = flat_size(out_shape[:axis])
        copy = flat_size(out_shape[axis + 1:])
        if out_shape[axis] != count:
            raise ctx.error(f"output dimension {axis} is {out_shape[axis]}, expected values_count "
                            f"{count}")
        for i, t in enumerate(inputs):
            if t.type != out.type:
                raise ctx.error(f"input {i} type {type_name(t.type)} differs from the output type "
                                f"{type_name(out.type)}")
            if flat_size(t.shape) != outer * copy:
                raise ctx.error(f"input {i} of shape {tuple(t.shape)} does not match the output shape "
                                f"{out_shape} without axis {axis}")
        data.count, data.outer, data.copy = count, outer, copy

    def invoke(self, ctx, node):
        data = node.user_data
        n = data.copy
        out = node.output_arrays[0].reshape(data.outer, data.count * n)
        for i, x in enumerate(node.input_arrays[: data.count]):
            copy_rows(out[:, i * n:(i + 1) * n], x.reshape(data.outer, n))
