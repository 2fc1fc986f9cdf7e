"""SLICE: float32, int32, int8, int16 and bool on tensors of up to 5 dimensions, int32 or int64
begin / size, as TFLM's reference kernel.

Prepare takes the input, begin, size and output as temporary tensors (in that order) and
allocates nothing. Begin and size may be run-time tensors: TFLM reads them in eval (one
value per input dimension, int64 values narrowed to int32); a size of -1 means "to the
end of the axis". TFLM writes the slice's elements one after the other into the output,
so the output needs the slice's element count (its shape may differ). A slice that
leaves the input, or whose element count is not the output's, is refused (in prepare for
constant begin / size, else in invoke): TFLM would read outside the input or leave part
of the output unwritten.
"""
from __future__ import annotations

from typing import Tuple, Union

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import BOOL, FLOAT32, INT8, INT16, INT32, INT64, type_name

MAX_DIMS = 5
SUPPORTED = (FLOAT32, INT32, INT8, INT16, BOOL)


def slice_plan(begin: np.ndarray, size: np.ndarray, shape, out_count: int) -> Union[str, Tuple[slice, ...]]:
    """The input slices TFLM copies, or the reason the slice is refused."""
    dims = len(shape)
    b = np.asarray(begin).reshape(-1)[:dims].astype(np.int64).astype(np.int32).tolist()
    s = np.asarray(size).reshape(-1)[:dims].astype(np.int64).astype(np.int32).tolist()
    index, count = [], 1
    for axis, (start, n, d) in enumerate(zip(b, s, shape)):
        stop = d if n == -1 else start + n
        if stop > start and (start < 0 or stop > d):
            return (f"slice [{start}, {stop}) of axis {axis} leaves the input dimension of "
                    f"size {d}")
        count *= max(stop - start, 0)
        index.append(slice(start, stop) if stop > start else slice(0, 0))
    if count != out_count:
        return f"the slice has {count} elements, the output {out_count}"
    return tuple(index)


class OpData:
    plan = None         # constant begin / size: the slices
    dims = 0


@register
class Slice(Kernel):
    op = "SLICE"
    supported_types = ("float32", "int8", "int16", "int32", "bool")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 3 or len(node.outputs) != 1:
            raise ctx.error(f"needs 3 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        tensors = [ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2), ctx.output(node, 0)]
        inp, begin, size, out = tensors
        if any(t is None for t in tensors):
            raise ctx.error("the input, begin, size or output tensor is missing")
        in_shape = tuple(inp.shape)
        dims = len(in_shape)
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if begin.type not in (INT32, INT64) or size.type != begin.type:
            raise ctx.error(f"begin and size must both be int32 or both int64, got "
                            f"{type_name(begin.type)} and {type_name(size.type)}")
        if len(begin.shape) != 1 or len(size.shape) != 1 or begin.shape[0] != dims \
                or size.shape[0] != dims:
            raise ctx.error(f"begin {tuple(begin.shape)} and size {tuple(size.shape)} must be 1-D "
                            f"with one value per input dimension ({dims})")
        if dims > MAX_DIMS:
            raise ctx.error(f"input has {dims} dimensions, at most {MAX_DIMS} are supported")
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Input tensor type {type_name(inp.type)} ({inp.type}) not supported.")
        data.dims = dims
        data.out_count = out.num_elements
        data.in_shape = in_shape
        data.plan = None
        if begin.data is not None and size.data is not None:
            plan = slice_plan(begin.data, size.data, in_shape, out.num_elements)
            if isinstance(plan, str):
                raise ctx.error(plan)
            data.plan = plan
        ctx.release(*tensors)

    def invoke(self, ctx, node):
        data = node.user_data
        plan = data.plan
        if plan is None:
            plan = slice_plan(node.input_arrays[1], node.input_arrays[2], data.in_shape, data.out_count)
            if isinstance(plan, str):
                raise ctx.error(plan)
        out = node.output_arrays[0]
        out.reshape(-1)[...] = node.input_arrays[0][plan].reshape(-1)
