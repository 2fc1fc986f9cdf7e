"""GATHER_ND: float32 and int8 params, int32 indices, as TFLM's kernel.

No init: prepare takes params, indices and output as temporary tensors, checks TFLM's
conditions (messages as TFLM's) and moves the output's dims into a persistent
TfLiteIntArray (the model's output rank); the output shape must be
indices.shape[:-1] + params.shape[indices.shape[-1]:].

Each row of the last indices axis (nd values) picks the slice that starts at the flat
position sum(index[j] * stride[j]) of params (stride[j] = product of params dims after
j), computed in wrapping int32 as TFLM does. TFLM checks only that whole slice lies
inside params ("gather_nd index out of bounds"), not each index against its dimension:
[0, 5] in a 3x4 params reads row 1, column 1. Constant indices are checked in prepare.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.quantization import wrap_int32
from .internal.tensor_utils import (FLOAT32, INT32, INT8, check_io_count, flat_size, items,
                                    make_output_dims_writable, type_name)

MAX_INDICES_ND = 5


class OpData:
    nd = 0
    slices = 0              # number of index rows
    strides = None          # int64 (nd,): params elements per step of each indexed dim
    slice_size = 0
    params_size = 0
    checked = False


def slice_starts(indices: np.ndarray, data) -> np.ndarray:
    """Flat start of every slice (int64 holding TFLM's wrapped int32 sums)."""
    idx = indices.reshape(data.slices, data.nd).astype(np.int64)
    return wrap_int32((idx * data.strides).sum(axis=1))     # int64 sums wrap mod 2^64 first


def check_starts(starts: np.ndarray, data):
    bad = (starts < 0) | (starts + data.slice_size > data.params_size)
    if bad.any():
        return f"gather_nd index out of bounds (slice {int(np.argmax(bad))} starts at {int(starts[bad][0])})"
    return None


@register
class GatherNd(Kernel):
    op = "GATHER_ND"
    supported_types = ("float32", "int8")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        check_io_count(ctx, node, 2)
        params = ctx.required_input(node, 0, "the params tensor")
        indices = ctx.required_input(node, 1, "the indices tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if params.type not in (FLOAT32, INT8):
            raise ctx.error(f"Params of type '{type_name(params.type)}' are not supported by gather_nd.")
        if indices.type != INT32:
            raise ctx.error(f"Indices of type '{type_name(indices.type)}' are not supported by gather_nd.")
        p_shape, i_shape = tuple(params.shape), tuple(indices.shape)
        if len(p_shape) < 1:
            raise ctx.error("Params must be at least a vector.")
        if len(i_shape) < 1:
            raise ctx.error("Indices must be at least a vector.")
        nd = i_shape[-1]
        if nd > len(p_shape):
            raise ctx.error("Index innermost dimension length must be <= params rank.")
        if nd > MAX_INDICES_ND:
            raise ctx.error(f"Index innermost dimension length must not exceed {MAX_INDICES_ND}.")
        make_output_dims_writable(ctx, len(out.shape))
        expected = i_shape[:-1] + p_shape[nd:]
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} is not the gathered shape {expected}")
        if out.type != params.type:
            raise ctx.error(f"output type {type_name(out.type)} differs from the params type "
                            f"{type_name(params.type)}")
        if any(d == 0 for d in p_shape[:nd]):
            raise ctx.error(f"params shape {p_shape} has an empty indexed dimension (TFLM divides by it)")
        data.nd = nd
        data.slices = flat_size(i_shape[:-1])
        data.strides = np.array([flat_size(p_shape[j + 1:]) for j in range(nd)], dtype=np.int64)
        data.slice_size = flat_size(p_shape[nd:])
        data.params_size = flat_size(p_shape)
        data.checked = indices.data is not None
        if data.checked and data.slice_size:
            problem = check_starts(slice_starts(indices.data, data), data)
            if problem:
                raise ctx.error(problem)
        ctx.release(params, indices, out)

    def invoke(self, ctx, node):
        data = node.user_data
        params, indices = node.input_arrays[:2]
        out = node.output_arrays[0]
        if out.size == 0:
            return
        starts = slice_starts(indices, data)
        if not data.checked:
            problem = check_starts(starts, data)
            if problem:
                raise ctx.error(problem)
        rows = out.reshape(-1, data.slice_size)
        if np.any(starts % data.slice_size):
            # a start wrapped in int32 off the slice grid: gather element by element
            flat = params.reshape(-1)
            np.take(flat, starts[:, None] + np.arange(data.slice_size), out=rows)
            return
        # starts are multiples of the slice size: gather whole slices as items
        slices = items(params.reshape(-1, data.slice_size))
        np.take(slices, starts // data.slice_size, out=items(rows))
