"""SPLIT_V: float32, int8, int16 and int32, as TFLM's reference kernel.

Inputs: the tensor to split, the size_splits (never read by TFLM: each output's own
size along the axis decides), the axis (constant; TFLM reads its first int32 word).
Prepare only takes the axis as a temporary tensor and checks it is constant. The checks
TFLM makes in eval (axis range, type) or not at all (output shapes, types, sizes adding
up to the input's) are made here in prepare.
"""
from __future__ import annotations

from .base import Kernel, register
from .split import OpData, split_invoke, split_prepare


@register
class SplitV(Kernel):
    op = "SPLIT_V"
    supported_types = ("float32", "int8", "int16", "int32")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        if len(node.inputs) != 3:
            raise ctx.error(f"needs 3 inputs, got {len(node.inputs)}")
        axis = ctx.input(node, 2)
        if axis is None:
            raise ctx.error("the axis tensor is missing")
        split_prepare(ctx, node, node.user_data, axis, 0, equal=False)
        ctx.release(axis)

    def invoke(self, ctx, node):
        split_invoke(node, node.user_data, node.input_arrays[0])
