"""BROADCAST_TO: copy the input into the (larger) output shape given by a constant int32 /
int64 shape tensor, any fixed-size type (raw bytes are copied; quantization ignored), up
to 5-D, as TFLM's reference kernel.

TFLM's prepare takes the input, shape and output as temporaries and checks: input rank
<= 5, shape type int32/int64, equal input and output types, not string, a constant shape
tensor of rank 1 whose length is the output's rank, input rank <= output rank <= 5, each
input dimension 1 or equal to the matching (right-aligned) shape entry, and the output's
dimensions equal to the shape's. Nothing is allocated.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import INT32, INT64, type_name

MAX_DIMS = 5


@register
class BroadcastTo(Kernel):
    op = "BROADCAST_TO"
    supported_types = ("*",)

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs two inputs (input, shape) and one output, got "
                            f"{len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0)
        shape = ctx.required_input(node, 1, "shape")
        out = ctx.required_output(node, 0)
        in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
        if len(in_shape) > MAX_DIMS:
            raise ctx.error(f"BroadcastTo only supports 1-5D tensor (input has rank {len(in_shape)}).")
        if shape.type not in (INT32, INT64):
            raise ctx.error(f"the shape tensor must be INT32 or INT64, got {type_name(shape.type)}")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} must match")
        if inp.dtype.itemsize == 0 or type_name(inp.type) == "STRING":
            raise ctx.error(f"type {type_name(inp.type)} is not supported")
        if shape.data is None:
            raise ctx.error("Non-constant >shape< tensor is not supported")
        if len(shape.shape) != 1:
            raise ctx.error(f"the shape tensor must be 1-D, got shape {tuple(shape.shape)}")
        # TFLM reads each entry as int32 (an int64 entry is truncated)
        target = [int(v) for v in np.asarray(shape.data).reshape(-1).astype(np.int64).astype(np.int32)]
        if len(out_shape) != len(target):
            raise ctx.error(f"Output must match with the expected shape dimension: the output has "
                            f"rank {len(out_shape)}, the shape tensor {len(target)} entries.")
        if len(in_shape) > len(out_shape):
            raise ctx.error(f"Output shape must be broadcastable from input shape: input rank "
                            f"{len(in_shape)} > output rank {len(out_shape)}.")
        if len(out_shape) > MAX_DIMS:
            raise ctx.error(f"BroadcastTo only supports 1-5D tensor (output has rank {len(out_shape)}).")
        extend = len(out_shape) - len(in_shape)
        for i, d in enumerate(in_shape):
            if d != 1 and d != target[extend + i]:
                raise ctx.error(f"Output shape must be broadcastable from input shape: "
                                f"{in_shape} -> {tuple(target)}.")
        if tuple(out_shape) != tuple(target):
            raise ctx.error(f"the output has shape {out_shape} but the shape tensor says {tuple(target)}")
        ctx.release(inp, shape, out)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        np.copyto(out, np.broadcast_to(x, out.shape))
