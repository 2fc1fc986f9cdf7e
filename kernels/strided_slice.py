"""STRIDED_SLICE: float32, int8, int16, int32 and bool on 1-D to 4-D tensors, as TFLM's
reference kernel.

Init allocates TFLM's StridedSliceParams. Prepare takes the input, begin, end, strides
and output as temporary tensors (in that order); begin, end and strides must be
constant, and TFLM reads one int32 word per input dimension from each, whatever their
type. Of the options TFLM uses begin_mask, end_mask and shrink_axis_mask; it ignores
ellipsis_mask, new_axis_mask and offset (they are ignored here too). Each output
dimension must be ceil((end - begin) / stride) (computed in float32 as TFLM does) for
every axis that is not shrunk, with the usual negative-index and clamping rules.

A shrunk axis whose begin falls outside the axis, or whose stride is negative, makes
TFLM's eval write nothing at all (it iterates from begin to begin + 1 with the stride's
sign, and the output keeps stale memory); such models are refused here.
"""
from __future__ import annotations

import math

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import BOOL, FLOAT32, INT8, INT16, INT32, int32_words, type_name

MAX_DIMS = 4
SUPPORTED = (FLOAT32, INT8, INT16, INT32, BOOL)


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else lo if v < lo else v


def axis_start(begin: int, stride: int, size: int, masked: bool) -> int:
    """First index along an axis: in [0, size] for stride > 0, [-1, size - 1] else."""
    if masked:
        return 0 if stride > 0 else size - 1
    if begin < 0:
        begin += size
    return _clamp(begin, 0, size) if stride > 0 else _clamp(begin, -1, size - 1)


def axis_stop(end: int, stride: int, size: int, masked: bool) -> int:
    """One past the last index along an axis (not shrunk)."""
    if masked:
        return size if stride > 0 else -1
    if end < 0:
        end += size
    return _clamp(end, 0, size) if stride > 0 else _clamp(end, -1, size - 1)


class OpData:
    index = None      # tuple of slices into the input
    shape = None      # output shape


@register
class StridedSlice(Kernel):
    op = "STRIDED_SLICE"
    supported_types = ("float32", "int8", "int16", "int32", "bool")

    def sample_rows(self, block):
        """The block slice takes every sample: a prepended sample axis gets a full-range
        entry; a merged one (the unit batch axis) is taken whole with stride 1. Prepare
        checks the block output shape."""
        if not block.only_vary((0,)) or block.params.ellipsis_mask or block.params.new_axis_mask:
            return False
        inp = block.input(0)
        dims = len(inp.shape)
        constants = [block.constant(i) for i in (1, 2, 3)]
        if any(c is None or c.dtype != np.int32 for c in constants):
            return False
        vectors = [int32_words(c, dims) for c in constants]
        if any(v is None for v in vectors):
            return False
        begins, ends, strides = ([int(x) for x in v] for v in vectors)
        p = block.params
        begin_mask, end_mask = int(p.begin_mask) & 0xFFFF, int(p.end_mask) & 0xFFFF
        shrink = int(p.shrink_axis_mask)
        if block.merged(inp):
            if shrink & 1:
                return False
            strides[0], begin_mask, end_mask = 1, begin_mask | 1, end_mask | 1
        else:
            begins, ends, strides = [0] + begins, [0] + ends, [1] + strides
            begin_mask, end_mask, shrink = begin_mask << 1 | 1, end_mask << 1 | 1, shrink << 1
        for i, values in ((1, begins), (2, ends), (3, strides)):
            block.rewrite_constant(i, np.asarray(values, dtype=np.int32))
        block.rewrite_params(begin_mask=begin_mask, end_mask=end_mask, shrink_axis_mask=shrink)
        return True

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("strided_slice.StridedSliceParams"))
        return OpData()

    def prepare(self, ctx, node):
        if len(node.inputs) != 4 or len(node.outputs) != 1:
            raise ctx.error(f"needs 4 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        tensors = [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.input(node, 3),
                   ctx.output(node, 0)]
        inp, begin_t, end_t, strides_t, out = tensors
        if any(t is None for t in tensors):
            raise ctx.error("the input, begin, end, strides or output tensor is missing")
        in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
        dims = len(in_shape)
        if dims > MAX_DIMS:
            raise ctx.error(f"input dim should not exceed {MAX_DIMS}")
        for name, t in (("begin", begin_t), ("end", end_t), ("strides", strides_t)):
            if t.data is None:
                raise ctx.error(f"Non-constant >{name}< tensor is not supported")
        vectors = []
        for name, t in (("begin", begin_t), ("end", end_t), ("strides", strides_t)):
            words = int32_words(t.data, dims)
            if words is None:
                raise ctx.error(f"{name} tensor of shape {tuple(t.shape)} and type "
                                f"{type_name(t.type)} holds fewer than {dims} int32 values")
            vectors.append([int(v) for v in words])
        begins, ends, strides = vectors
        p = node.params
        begin_mask, end_mask = int(p.begin_mask) & 0xFFFF, int(p.end_mask) & 0xFFFF
        shrink_mask = int(p.shrink_axis_mask)
        index, expected = [], []
        for axis in range(dims):
            stride, size = strides[axis], in_shape[axis]
            if stride == 0:
                raise ctx.error("stride value has to be non-zero")
            start = axis_start(begins[axis], stride, size, bool(begin_mask >> axis & 1))
            if shrink_mask >> axis & 1:
                if not 0 <= start < size:
                    raise ctx.error(f"shrunk axis {axis} begins at {begins[axis]}, outside its "
                                    f"size {size}")
                if stride < 0:
                    raise ctx.error(f"shrunk axis {axis} has a negative stride ({stride}): TFLM "
                                    "writes no output then")
                index.append(slice(start, start + 1))
                continue
            stop = axis_stop(ends[axis], stride, size, bool(end_mask >> axis & 1))
            count = math.ceil(np.float32(stop - start) / np.float32(stride))
            expected.append(max(count, 0))
            if stride > 0 or start >= 0:
                index.append(slice(start, stop if stop >= 0 else None, stride))
            else:
                index.append(slice(0, 0))
        if out_shape != tuple(expected):
            raise ctx.error(f"output shape {out_shape} differs from the slice's shape "
                            f"{tuple(expected)}")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if out.type not in SUPPORTED:
            raise ctx.error(f"Type {type_name(inp.type)} ({inp.type}) not supported.")
        node.user_data.index = tuple(index)
        node.user_data.shape = out_shape
        ctx.release(*tensors)

    def invoke(self, ctx, node):
        data = node.user_data
        out = node.output_arrays[0]
        out[...] = node.input_arrays[0][data.index].reshape(data.shape)
