"""FILL: float32, int32 and int8 values, as TFLM's kernel (no OpData). The dims input
must be a constant 1-D integer tensor (int8, int16, int32 or int64) equal to the
output's shape; the value input a scalar of the output's type. Eval copies the value
into every output element."""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, INT64, type_name


@register
class Fill(Kernel):
    op = "FILL"
    supported_types = ("float32", "int8", "int32")
    type_input = 1

    def prepare(self, ctx, node):
        ctx.check_counts(node, 2, 1)
        dims = ctx.required_input(node, 0, "the dims tensor")
        value = ctx.required_input(node, 1, "the value tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if len(value.shape) != 0:
            raise ctx.error(f"the value must be a scalar, got shape {tuple(value.shape)}")
        if value.type != out.type:
            raise ctx.error(f"value type {type_name(value.type)} and output type {type_name(out.type)} differ")
        if dims.spec.data is None:
            raise ctx.error("Non-constant >dims< tensor is not supported")
        if len(dims.shape) != 1:
            raise ctx.error(f"the dims tensor must be 1-D, got shape {tuple(dims.shape)}")
        if dims.shape[0] != len(out.shape):
            raise ctx.error(f"the dims tensor has {dims.shape[0]} entries but the output has "
                            f"{len(out.shape)} dimensions")
        if dims.type not in (INT8, INT16, INT32, INT64):
            raise ctx.error(f"cannot compare int array to tensor of type {type_name(dims.type)}.")
        given = [int(v) for v in np.asarray(dims.spec.data).reshape(-1)[: len(out.shape)]]
        if given != [int(d) for d in out.shape]:
            raise ctx.error(f"dims {given} do not match the output shape {tuple(out.shape)}")
        if value.type not in (FLOAT32, INT32, INT8):
            raise ctx.error(f"Fill only currently supports float32, int32 and int8, got {type_name(value.type)}.")
        ctx.release(dims, value, out)

    def invoke(self, ctx, node):
        value = node.input_arrays[1]
        y = node.output_arrays[0]
        y[...] = np.asarray(value).reshape(-1)[0]
