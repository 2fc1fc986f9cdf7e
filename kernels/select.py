"""SELECT_V2: ``condition ? x : y`` elementwise, float32, int8 and int16 (values copied
raw, quantization ignored), with three-way broadcasting up to 6-D, as TFLM's reference
kernel.

TFLM's prepare: the condition must be bool and x, y of one type. When the three inputs
do not all have the same shape (and are not all single-element tensors, which TFLM
treats as one scalar select whatever their ranks), the output's rank must be the largest
input rank and each output dimension the broadcast of the inputs' (numpy rules; a 0 among
them makes it 0). Arena: init allocates the OpData (``requires_broadcast``); prepare takes
all four tensors as temporaries.

Refused here where TFLM would read or write out of bounds: an output type other than
x's, unsupported types (TFLM fails at eval), ranks above 6, and same-shape inputs whose
element count differs from the output's.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.tensor_utils import BOOL, FLOAT32, INT8, INT16, flat_size, type_name

MAX_DIMS = 6
SUPPORTED = (FLOAT32, INT8, INT16)


class OpData:
    requires_broadcast = False


def _check_broadcast(ctx, shapes, out_shape):
    """TFLM's CheckBroadcastShape for three inputs."""
    rank = max(len(s) for s in shapes)
    if rank != len(out_shape):
        raise ctx.error(f"inputs of shapes {', '.join(str(tuple(s)) for s in shapes)} broadcast to "
                        f"rank {rank} but the output has shape {tuple(out_shape)}")
    for i in range(rank):
        dims = [s[len(s) - 1 - i] if i < len(s) else 1 for s in shapes]
        top = 0 if min(dims) == 0 else max(dims)
        if any(d != 1 and d != top for d in dims):
            raise ctx.error(f"Given shapes are not broadcastable: "
                            f"{', '.join(str(tuple(s)) for s in shapes)}")
        if out_shape[rank - 1 - i] != top:
            raise ctx.error(f"inputs of shapes {', '.join(str(tuple(s)) for s in shapes)} broadcast "
                            f"to size {top} in dimension {rank - 1 - i} but the output has shape "
                            f"{tuple(out_shape)}")


@register
class SelectV2(Kernel):
    op = "SELECT_V2"
    supported_types = ("float32", "int8", "int16")
    type_input = 1

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("select.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 3 or len(node.outputs) != 1:
            raise ctx.error(f"needs three inputs and one output, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        cond = ctx.required_input(node, 0, "condition")
        x = ctx.required_input(node, 1, "input x")
        y = ctx.required_input(node, 2, "input y")
        out = ctx.required_output(node, 0)
        if cond.type != BOOL:
            raise ctx.error(f"the condition must be BOOL, got {type_name(cond.type)}")
        if x.type != y.type:
            raise ctx.error(f"x and y types {type_name(x.type)} and {type_name(y.type)} must match")
        if x.type not in SUPPORTED:
            raise ctx.error(f"Does not support type other than int8|int16|float32, but got "
                            f"{type_name(x.type)}")
        if out.type != x.type:
            raise ctx.error(f"output type {type_name(out.type)} must be the inputs' type "
                            f"{type_name(x.type)}")
        shapes = [tuple(cond.shape), tuple(x.shape), tuple(y.shape)]
        rank = max(len(s) for s in shapes + [tuple(out.shape)])
        if rank > MAX_DIMS:
            raise ctx.error(f"supports at most {MAX_DIMS} dimensions, got {rank}")
        mixed_scalar = all(flat_size(s) == 1 for s in shapes + [tuple(out.shape)])
        same = shapes[0] == shapes[1] == shapes[2]
        data.requires_broadcast = False
        if not same and not mixed_scalar:
            _check_broadcast(ctx, shapes, tuple(out.shape))
            data.requires_broadcast = True
        elif same and flat_size(shapes[0]) != flat_size(out.shape):
            raise ctx.error(f"inputs have {flat_size(shapes[0])} elements but the output of shape "
                            f"{tuple(out.shape)} has {flat_size(out.shape)}")
        ctx.release(cond, x, y, out)

    def invoke(self, ctx, node):
        cond, x, y = node.input_arrays[:3]
        out = node.output_arrays[0]
        if node.user_data.requires_broadcast:
            result = np.where(cond, x, y)
        else:
            n = out.size
            result = np.where(cond.reshape(-1)[:n], x.reshape(-1)[:n], y.reshape(-1)[:n])
        np.copyto(out, result.reshape(out.shape).astype(out.dtype, copy=False))
