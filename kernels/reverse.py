"""REVERSE_V2: float32, int8, uint8, int16, int32, int64 and bool tensors of rank 1 to 6,
reversed along a contiguous run of axes given by an int32 axis tensor, as TFLM's kernel.

No init / OpData: prepare takes input, axis and output as temporary tensors and checks
(TFLM's order) a 1-D axis tensor, rank <= 6, no more axes than dimensions, the value type,
an int32 axis tensor and equal input / output types. TFLM checks the axes themselves at
invoke: negative values count from the end, each must be in [0, rank), and once sorted
they must be consecutive ("Non-contiguous `axes` not supported"); constant axes are
checked in prepare here. An empty axis tensor is refused (TFLM reads before its axis
array then). The output takes the reversed values in flat order (its element count must
be the input's).
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import (BOOL, FLOAT32, INT16, INT32, INT64, INT8, UINT8,
                                    check_io_count, flat_size, type_name)

SUPPORTED = (INT32, FLOAT32, UINT8, INT8, INT16, INT64, BOOL)
MAX_DIMS = 6


def normalized_axes(axes: np.ndarray, rank: int) -> Tuple[Optional[Tuple[int, ...]], Optional[str]]:
    """(sorted axes, None), or (None, TFLM's complaint)."""
    values = [int(a) + rank if int(a) < 0 else int(a) for a in np.asarray(axes).reshape(-1)]
    for a in values:
        if not 0 <= a < rank:
            return None, f"axis {a - rank if a < 0 else a} is out of range for rank {rank}"
    values.sort()
    if any(b != a + 1 for a, b in zip(values, values[1:])):
        return None, "Non-contiguous `axes` not supported"
    return tuple(values), None


class OpData:
    rank = 0
    axes: Optional[Tuple[int, ...]] = None


@register
class ReverseV2(Kernel):
    op = "REVERSE_V2"
    supported_types = ("float32", "int8", "int16", "int32", "int64", "uint8", "bool")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        check_io_count(ctx, node, 2)
        inp = ctx.required_input(node, 0, "the input tensor")
        axis = ctx.required_input(node, 1, "the axis tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if len(axis.shape) != 1:
            raise ctx.error(f"the axis tensor must be 1-D, got shape {tuple(axis.shape)}")
        rank = len(inp.shape)
        if rank > MAX_DIMS:
            raise ctx.error(f"input has {rank} dimensions, at most {MAX_DIMS} are supported")
        if axis.num_elements > rank:
            raise ctx.error(f"{axis.num_elements} axes for an input of {rank} dimensions")
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Type '{type_name(inp.type)}' is not supported by reverse.")
        if axis.type != INT32:
            raise ctx.error(f"Axis Type '{type_name(axis.type)}' is not supported by reverse.")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if axis.num_elements == 0:
            raise ctx.error("the axis tensor is empty")
        if flat_size(out.shape) != flat_size(inp.shape):
            raise ctx.error(f"output {tuple(out.shape)} and input {tuple(inp.shape)} hold different "
                            "numbers of elements")
        data.rank = rank
        if axis.data is not None:
            data.axes, problem = normalized_axes(axis.data, rank)
            if problem:
                raise ctx.error(problem)
        ctx.release(inp, axis, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x, axis = node.input_arrays[:2]
        axes = data.axes
        if axes is None:
            axes, problem = normalized_axes(axis, data.rank)
            if problem:
                raise ctx.error(problem)
        out = node.output_arrays[0]
        np.copyto(out.reshape(x.shape), np.flip(x, axes))
