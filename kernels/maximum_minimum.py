"""MAXIMUM and MINIMUM (one TFLM source, two registrations): float32, int8, int16,
int32 and int64, with broadcasting up to 6-D, as TFLM's reference kernel.

TFLM's kernel has no init and no prepare: it allocates nothing, not even temporary
tensors, so the checks here read the tensors' specs directly. The comparison is on the
raw values (quantization parameters are ignored, as in TFLM); ``a > b ? a : b`` picks
the second operand when either is NaN, which ``np.where`` reproduces.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.broadcast import check_broadcast_output
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, INT64, type_name

SUPPORTED = (FLOAT32, INT8, INT16, INT32, INT64)


class _MaximumMinimum(Kernel):
    pick_first = None   # ufunc: True where the first operand is returned

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def prepare(self, ctx, node):
        ctx.check_counts(node, 2, 1)
        in1, in2 = (ctx.eval_tensor(i).spec for i in node.inputs[:2])
        out = ctx.eval_tensor(node.outputs[0]).spec
        if out.type not in SUPPORTED:
            raise ctx.error(f"Type {type_name(out.type)} ({out.type}) is not supported by Maximum/Minimum.")
        if not (in1.type == in2.type == out.type):
            raise ctx.error(f"input types {type_name(in1.type)}, {type_name(in2.type)} and output "
                            f"type {type_name(out.type)} must match")
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        result = np.where(self.pick_first(x1, x2), x1, x2)
        np.copyto(out, result.reshape(out.shape))


@register
class Maximum(_MaximumMinimum):
    op = "MAXIMUM"
    supported_types = ("float32", "int8", "int16", "int32", "int64")
    pick_first = staticmethod(np.greater)


@register
class Minimum(_MaximumMinimum):
    op = "MINIMUM"
    supported_types = ("float32", "int8", "int16", "int32", "int64")
    pick_first = staticmethod(np.less)
