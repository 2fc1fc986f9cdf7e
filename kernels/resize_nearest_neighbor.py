"""RESIZE_NEAREST_NEIGHBOR: float32, int8 and int16 NHWC tensors, align_corners and
half_pixel_centers, as TFLM's reference kernel.

Prepare takes the input, the size and the output as temporary tensors (in that order):
the input must be 4-D and the size a constant 1-D int32 tensor of 2 values (new height,
width); the output must be (batches, height, width, depth). Each output row / column
takes the input row / column

    scale = (in - 1) / (out - 1) if align_corners and out > 1 else in / out
    index = round((o + offset) * scale) if align_corners else floor((o + offset) * scale)

(float32 arithmetic, round = std::round, offset 0.5 with half_pixel_centers), clamped to
in - 1 (and to 0 with half_pixel_centers).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import batch_axis_rows
from .internal.quantization import round_half_away
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, items, type_name

SUPPORTED = (FLOAT32, INT8, INT16)


def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """The input index each of ``out_size`` output positions reads (TFLM's GetNearestNeighbor)."""
    if align_corners and out_size > 1:
        scale = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale = np.float32(in_size) / np.float32(out_size)
    offset = np.float32(0.5 if half_pixel else 0.0)
    pos = (np.arange(out_size, dtype=np.float32) + offset) * np.float32(scale)
    idx = (round_half_away(pos) if align_corners else np.floor(pos)).astype(np.int64)
    idx = np.minimum(idx, in_size - 1)
    if half_pixel:
        idx = np.maximum(idx, 0)
    return idx


class OpData:
    rows = cols = None


@register
class ResizeNearestNeighbor(Kernel):
    op = "RESIZE_NEAREST_NEIGHBOR"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Batch rows are independent (constant size)."""
        return batch_axis_rows(block)

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        tensors = [ctx.input(node, 0), ctx.input(node, 1), ctx.output(node, 0)]
        inp, size, out = tensors
        if any(t is None for t in tensors):
            raise ctx.error("the input, size or output tensor is missing")
        if len(inp.shape) != 4:
            raise ctx.error(f"the input must be 4-D (NHWC), got shape {tuple(inp.shape)}")
        if len(size.shape) != 1:
            raise ctx.error(f"the size must be 1-D, got shape {tuple(size.shape)}")
        if size.type != INT32:
            raise ctx.error(f"the size must be int32, got {type_name(size.type)}")
        if size.shape[0] != 2:
            raise ctx.error(f"the size must hold 2 values (height, width), got {size.shape[0]}")
        if size.data is None:
            raise ctx.error("Non-constant >size< tensor is not supported")
        height, width = (int(v) for v in size.data.reshape(-1))
        if height < 1 or width < 1:
            raise ctx.error(f"the new size ({height}, {width}) must be positive")
        batches, in_h, in_w, depth = inp.shape
        expected = (batches, height, width, depth)
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} is not (batches, height, width, "
                            f"depth) = {expected}")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if out.type not in SUPPORTED:
            raise ctx.error(f"Output tensor type {type_name(out.type)} ({out.type}) not supported.")
        align = bool(node.params.align_corners)
        half = bool(node.params.half_pixel_centers)
        data = node.user_data
        data.rows = nearest_indices(in_h, height, align, half)
        data.cols = nearest_indices(in_w, width, align, half)
        ctx.release(*tensors)

    def invoke(self, ctx, node):
        data = node.user_data
        # each pixel's depth values move as one item: rows first, then columns
        x = items(node.input_arrays[0])
        out = items(node.output_arrays[0])
        np.take(np.take(x, data.rows, axis=1), data.cols, axis=2, out=out)
