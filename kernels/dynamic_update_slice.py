"""DYNAMIC_UPDATE_SLICE: float32, int8, int16 and int32 operands with int32 or int64
start indices, as TFLM's kernel.

No init / OpData: prepare takes the operand, the update, the start indices and the output
as temporary tensors, and checks (TFLM's order) operand and update types equal, indices
int32 or int64, 1-D with one value per operand dimension, update of the operand's rank
and no larger in any dimension. Here the output must also match the operand's type and
element count (TFLM copies the operand's bytes into it unchecked), and the rank is at most
6 (TFLM's fixed stack arrays).

Invoke: when the update has as many elements as the operand, the output is the update;
else the output is the operand with the update written at the start indices, each clamped
to [0, operand dim - update dim] (in int64, so any index is valid).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import (FLOAT32, INT16, INT32, INT64, INT8, check_io_count, copy_flat,
                                    flat_size, type_name)

SUPPORTED = (FLOAT32, INT8, INT16, INT32)
MAX_DIMS = 6


@register
class DynamicUpdateSlice(Kernel):
    op = "DYNAMIC_UPDATE_SLICE"
    supported_types = ("float32", "int8", "int16", "int32")

    def prepare(self, ctx, node):
        check_io_count(ctx, node, 3)
        operand = ctx.required_input(node, 0, "the operand tensor")
        update = ctx.required_input(node, 1, "the update tensor")
        indices = ctx.required_input(node, 2, "the start indices tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if operand.type != update.type:
            raise ctx.error(f"operand type {type_name(operand.type)} and update type "
                            f"{type_name(update.type)} differ")
        if indices.type not in (INT32, INT64):
            raise ctx.error(f"start indices of type {type_name(indices.type)} are not supported "
                            "(int32 or int64)")
        rank = len(operand.shape)
        if len(indices.shape) != 1:
            raise ctx.error(f"the start indices must be 1-D, got shape {tuple(indices.shape)}")
        if indices.shape[0] != rank:
            raise ctx.error(f"{indices.shape[0]} start indices for an operand of {rank} dimensions")
        if len(update.shape) != rank:
            raise ctx.error(f"update {tuple(update.shape)} and operand {tuple(operand.shape)} "
                            "must have the same number of dimensions")
        for i, (u, d) in enumerate(zip(update.shape, operand.shape)):
            if u > d:
                raise ctx.error(f"update dimension {i} ({u}) exceeds the operand's ({d})")
        if rank > MAX_DIMS:
            raise ctx.error(f"operand has {rank} dimensions, at most {MAX_DIMS} are supported")
        if operand.type not in SUPPORTED:
            raise ctx.error(f"DYNAMIC_UPDATE_SLICE: Operand type {type_name(operand.type)} not supported.")
        if out.type != operand.type or flat_size(out.shape) != flat_size(operand.shape):
            raise ctx.error(f"output {type_name(out.type)} {tuple(out.shape)} must have the operand's "
                            f"type and size ({type_name(operand.type)} {tuple(operand.shape)})")
        node.user_data = (tuple(operand.shape), tuple(update.shape))
        ctx.release(operand, update, indices, out)

    def invoke(self, ctx, node):
        operand_shape, update_shape = node.user_data
        operand, update, indices = node.input_arrays[:3]
        out = node.output_arrays[0].reshape(operand_shape)
        if update.size == operand.size:
            copy_flat(out, update)
            return
        copy_flat(out, operand)
        if update.size == 0:
            return
        limit = np.asarray(operand_shape, np.int64) - np.asarray(update_shape, np.int64)
        start = np.minimum(np.maximum(indices.astype(np.int64).reshape(-1), 0), limit)
        box = tuple(slice(int(s), int(s) + u) for s, u in zip(start, update_shape))
        out[box] = update
