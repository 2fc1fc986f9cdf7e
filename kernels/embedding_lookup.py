"""EMBEDDING_LOOKUP: rows of a float32 or int8 table picked by int32 ids, as TFLM's
kernel; an int8 table with a float32 output is dequantized (the hybrid path).

No init: prepare takes the ids, the table and the output as temporary tensors (TFLM's
checks, in order: ids 1-D int32, table 2-D or more of float32 / int8, output float32 — or
int8 for an int8 table — of rank >= the table's), moves the output's dims into a
persistent TfLiteIntArray (the model's output rank), then allocates TFLM's OpData
(scale, num_columns) in prepare. The output shape must be (ids, table dims 1...) (TFLM
overwrites the first dims; trailing extra dims must be 1 here). Hybrid tables need zero
point 0: each value becomes float32(value) * float32(scale).

Ids must lie in [0, rows): TFLM checks them at invoke ("index out of bounds"); constant
ids are checked in prepare here.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import (FLOAT32, INT32, INT8, check_io_count, flat_size, items,
                                    make_output_dims_writable, type_name)


class OpData:
    scale = np.float32(0)
    hybrid = False
    rows = 0
    checked = False


def check_ids(ids: np.ndarray, rows: int):
    """None if every id is in [0, rows), else TFLM's message for the first bad one."""
    bad = (ids < 0) | (ids >= rows)
    if bad.any():
        return (f"EMBEDDING_LOOKUP: index out of bounds. Got {int(ids[np.argmax(bad)])}, and bounds "
                f"are [0, {rows - 1}]")
    return None


@register
class EmbeddingLookup(Kernel):
    op = "EMBEDDING_LOOKUP"
    supported_types = ("float32->float32", "int8->float32 (dequantized)", "int8->int8")
    type_input = 1

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        check_io_count(ctx, node, 2)
        ids = ctx.required_input(node, 0, "the ids tensor")
        if len(ids.shape) != 1:
            raise ctx.error(f"the ids must be 1-D, got shape {tuple(ids.shape)}")
        if ids.type != INT32:
            raise ctx.error(f"the ids must be int32, got {type_name(ids.type)}")
        table = ctx.required_input(node, 1, "the table tensor")
        if len(table.shape) < 2:
            raise ctx.error(f"the table must have 2 or more dimensions, got shape {tuple(table.shape)}")
        if table.type not in (FLOAT32, INT8):
            raise ctx.error(f"table type {type_name(table.type)} is not supported (float32 or int8)")
        out = ctx.required_output(node, 0, "the output tensor")
        allowed = (FLOAT32,) if table.type == FLOAT32 else (FLOAT32, INT8)
        if out.type not in allowed:
            raise ctx.error(f"output type {type_name(out.type)} is not supported for a "
                            f"{type_name(table.type)} table")
        rank = len(table.shape)
        if len(out.shape) < rank:
            raise ctx.error(f"the output has {len(out.shape)} dimensions, fewer than the table's {rank}")
        make_output_dims_writable(ctx, len(out.shape))
        expected = (ids.shape[0],) + tuple(table.shape[1:])
        if tuple(out.shape[:rank]) != expected or flat_size(out.shape[rank:]) != 1:
            raise ctx.error(f"output shape {tuple(out.shape)} is not (ids, table dims 1...) = {expected}")
        data.hybrid = table.type == INT8 and out.type == FLOAT32
        pointer = ctx.sizeof("pointer")       # num_columns (size_t) follows the float scale
        ctx.allocate_persistent(ctx.sizeof("embedding_lookup.OpData"),
                                written=((0, 4),) * data.hybrid + ((pointer, pointer),))
        if data.hybrid:
            if table.zero_point != 0:
                raise ctx.error(f"an int8 table read as float32 needs zero point 0, got {table.zero_point}")
            data.scale = np.float32(table.scale)
        data.rows = int(table.shape[0])
        if data.rows == 0:
            raise ctx.error("the table has no rows (TFLM divides by the row count)")
        if ids.data is not None:
            problem = check_ids(ids.data, data.rows)
            if problem:
                raise ctx.error(problem)
        data.checked = ids.data is not None
        ctx.release(ids, table, out)

    def invoke(self, ctx, node):
        data = node.user_data
        ids, table = node.input_arrays[:2]
        if not data.checked:
            problem = check_ids(ids, data.rows)
            if problem:
                raise ctx.error(problem)
        out = node.output_arrays[0]
        if out.size == 0:
            return
        rows = table.reshape(data.rows, -1)
        flat_out = out.reshape(ids.shape[0], -1)
        if data.hybrid:
            np.multiply(rows[ids].astype(np.float32), data.scale, out=flat_out)
        else:
            np.take(items(rows), ids, out=items(flat_out))
