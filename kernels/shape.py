"""SHAPE: the input's dimensions as int32, as TFLM's reference kernel (which has no
temporary tensors and checks nothing in prepare but the tensor counts; the int32 output
type, checked by TFLM's eval, is checked here in prepare)."""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import INT32, type_name


class OpData:
    shape = None


@register
class Shape(Kernel):
    op = "SHAPE"
    supported_types = ("*->int32",)

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        if node.inputs[0] < 0 or node.outputs[0] < 0:
            raise ctx.error("the input or output tensor is missing")
        inp = ctx.eval_tensor(node.inputs[0])
        out = ctx.eval_tensor(node.outputs[0])
        if out.type != INT32:
            raise ctx.error(f"Output type {type_name(out.type)} ({out.type}) not supported.")
        count = 1
        for d in out.shape:
            count *= d
        if count != len(inp.shape):
            raise ctx.error(f"output of shape {tuple(out.shape)} must hold exactly the "
                            f"{len(inp.shape)} dimensions of the input")
        node.user_data.shape = np.array(inp.shape, dtype=np.int32)

    def invoke(self, ctx, node):
        out = node.output_arrays[0]
        out.reshape(-1)[...] = node.user_data.shape
