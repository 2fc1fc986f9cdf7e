"""LOGICAL_AND, LOGICAL_OR (broadcasting up to 6-D) and LOGICAL_NOT, bool only, as TFLM's
reference kernels.

LOGICAL_AND / LOGICAL_OR have no init and no prepare in TFLM (nothing allocated, not
even temporary tensors) and never check their tensors' types: they read every operand as
bool. Anything but bool tensors is refused here. LOGICAL_NOT is one of TFLM's elementwise
kernels: its prepare takes the input and output as temporary tensors, requires equal
types and bool; it writes as many elements as the input has.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows, flat_elementwise_rows
from .internal.broadcast import check_broadcast_output
from .internal.tensor_utils import BOOL, flat_size, type_name


class _LogicalBinary(Kernel):
    func = None   # numpy ufunc

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def prepare(self, ctx, node):
        ctx.check_counts(node, 2, 1)
        in1, in2 = (ctx.eval_tensor(i).spec for i in node.inputs[:2])
        out = ctx.eval_tensor(node.outputs[0]).spec
        for name, t in (("input 0", in1), ("input 1", in2), ("output", out)):
            if t.type != BOOL:
                raise ctx.error(f"{name} has type {type_name(t.type)}; {self.op} supports BOOL "
                                "tensors only")
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        np.copyto(out, self.func(x1, x2).reshape(out.shape))


@register
class LogicalAnd(_LogicalBinary):
    op = "LOGICAL_AND"
    supported_types = ("bool",)
    func = staticmethod(np.logical_and)


@register
class LogicalOr(_LogicalBinary):
    op = "LOGICAL_OR"
    supported_types = ("bool",)
    func = staticmethod(np.logical_or)


@register
class LogicalNot(Kernel):
    op = "LOGICAL_NOT"
    supported_types = ("bool",)

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs one input and one output, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} must match")
        if inp.type != BOOL:
            raise ctx.error(f"Input data type {type_name(inp.type)} ({inp.type}) is not supported.")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"input of shape {tuple(inp.shape)} and output of shape "
                            f"{tuple(out.shape)} have different element counts")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        np.copyto(out, np.logical_not(x).reshape(out.shape))
