"""RESIZE_BILINEAR: float32 and int8 NHWC tensors, align_corners and half_pixel_centers
(not both), as TFLM's reference kernels.

No init / OpData: prepare takes input, size and output as temporary tensors and checks
(TFLM's order) a 4-D input, a 1-D int32 constant size, not both flags. Here the output
must also be (batch, height, width, depth) of the input's type, float32 or int8 (TFLM
fails at invoke for other types and writes unchecked otherwise).

float32 (TFLM's ResizeBilinear, every step a float32 operation):
    scale = in / out (align_corners, out > 1: (in - 1) / (out - 1))
    y = (o + 0.5) * scale - 0.5 (half_pixel_centers) or o * scale
    y0 = max(floor(y), 0), y1 = min(ceil(y), in - 1), dy = y - y0
    out = v00 (1-dy)(1-dx) + v10 dy (1-dx) + v01 (1-dy) dx + v11 dy dx + 0.0f
(products left to right, sums in that order).

int8 (TFLM's ResizeBilinearInteger, no float at all): positions in 1/1024 steps,
    scale_10 = (1024 * in + out / 2) / out (align_corners: (1024 (in - 1) + (out - 1) / 2)
    / (out - 1)), y = o * scale_10 (+ scale_10 / 2 - 512 with half_pixel_centers),
    y0 = max(y / 1024, 0), y1 = min((y + 1023) / 1024, in - 1) (C division);
the four int64 products with weights (1024 - (y - 1024 y0)) and (y - 1024 y0) sum to
out_20, and the result is (out_20 +- 2^19) / 2^20 (sign of out_20, truncating), TFLM's
double-rounding build (TFLITE_SINGLE_ROUNDING off). out_20 is an exact integer, so it is
computed separably (columns of each input row, then rows) in int32.

For extreme upsampling the rounded integer scale can put y0 past the last row; TFLM then
reads outside the input. That is refused here (as is an output size < 1).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.quantization import c_div
from .internal.tensor_utils import FLOAT32, INT32, INT8, check_io_count, type_name

SUPPORTED = (FLOAT32, INT8)


def float_positions(out_size: int, in_size: int, align_corners: bool, half_pixel: bool):
    """(y0, y1, weight of y0, weight of y1) per output position, float32 weights."""
    if align_corners and out_size > 1:
        scale = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale = np.float32(in_size) / np.float32(out_size)
    value = np.arange(out_size, dtype=np.float32)
    if half_pixel:
        scaled = (value + np.float32(0.5)) * scale - np.float32(0.5)
    else:
        scaled = value * scale
    lower = np.maximum(np.floor(scaled).astype(np.int64), 0)
    upper = np.minimum(np.ceil(scaled).astype(np.int64), in_size - 1)
    frac = scaled - lower.astype(np.float32)
    return lower, upper, np.float32(1) - frac, frac


def integer_positions(out_size: int, in_size: int, align_corners: bool, half_pixel: bool):
    """(y0, y1, weight of y0, weight of y1) per output position, int64 weights in 1/1024."""
    if align_corners and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = ((1 << 10) * in_size + out_size // 2) // out_size
    value = np.arange(out_size, dtype=np.int64)
    scaled = value * scale + (scale // 2 - (1 << 9) if half_pixel else 0)
    lower = np.maximum(c_div(scaled, 1 << 10), 0)
    upper = np.minimum(c_div(scaled + (1 << 10) - 1, 1 << 10), in_size - 1)
    frac = scaled - (lower << 10)
    return lower, upper, (1 << 10) - frac, frac


class OpData:
    rows = cols = None       # (lower, upper, weight lower, weight upper)
    rows_weight = cols_weight = None     # integer path: int32 weights shaped to broadcast


@register
class ResizeBilinear(Kernel):
    op = "RESIZE_BILINEAR"
    supported_types = ("float32", "int8")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        check_io_count(ctx, node, 2)
        inp = ctx.required_input(node, 0, "the input tensor")
        size = ctx.required_input(node, 1, "the size tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if len(inp.shape) != 4:
            raise ctx.error(f"the input must be 4-D (NHWC), got shape {tuple(inp.shape)}")
        if len(size.shape) != 1:
            raise ctx.error(f"the size must be 1-D, got shape {tuple(size.shape)}")
        if size.type != INT32:
            raise ctx.error(f"the size must be int32, got {type_name(size.type)}")
        if size.data is None:
            raise ctx.error("Non-constant >size< tensor is not supported")
        align, half = bool(node.params.align_corners), bool(node.params.half_pixel_centers)
        if align and half:
            raise ctx.error("If half_pixel_centers is True, align_corners must be False.")
        if size.num_elements < 2:
            raise ctx.error(f"the size must hold 2 values (height, width), got {size.num_elements}")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if out.type not in SUPPORTED:
            raise ctx.error(f"Output type is {out.type}, requires float or int8.")
        height, width = (int(v) for v in size.data.reshape(-1)[:2])
        if height < 1 or width < 1:
            raise ctx.error(f"the new size ({height}, {width}) must be positive")
        batch, in_h, in_w, depth = inp.shape
        expected = (batch, height, width, depth)
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} is not (batch, height, width, depth) "
                            f"= {expected}")
        positions = integer_positions if inp.type == INT8 else float_positions
        data.rows = positions(height, in_h, align, half)
        data.cols = positions(width, in_w, align, half)
        for name, (lower, _, _, _), limit in (("row", data.rows, in_h), ("column", data.cols, in_w)):
            if lower.size and lower.max() >= limit:
                raise ctx.error(f"resizing {limit} to {height if name == 'row' else width} puts an "
                                f"interpolation {name} at {int(lower.max())}, outside the input "
                                "(TFLM's integer scale rounding; it would read past the tensor)")
        if inp.type == INT8:
            data.rows_weight = tuple(w.astype(np.int32)[:, None, None] for w in data.rows[2:])
            data.cols_weight = tuple(w.astype(np.int32)[:, None] for w in data.cols[2:])
        ctx.release(inp, size, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        y0, y1, wy0, wy1 = data.rows
        x0, x1, wx0, wx1 = data.cols
        if x.dtype == np.float32:
            # (v * wy) is taken on the gathered rows, before the column gather: the same
            # float32 products as TFLM's, on fewer elements when the width grows
            top = np.take(x, y0, axis=1)
            top *= wy0[:, None, None]
            bottom = np.take(x, y1, axis=1)
            bottom *= wy1[:, None, None]
            wx0, wx1 = wx0[:, None], wx1[:, None]
            total = np.take(top, x0, axis=2)
            total *= wx0
            term = np.take(bottom, x0, axis=2)
            term *= wx0
            total += term
            for rows in (top, bottom):
                np.take(rows, x1, axis=2, out=term)
                term *= wx1
                total += term
            total += np.float32(0)
            np.copyto(out, total)
            return
        # the four int64 products of TFLM summed in any order are one exact integer:
        # interpolate the columns of every input row, then the rows (int32 cannot
        # overflow: |v| <= 128, weights < 2^11, their sums of products < 2^30)
        xi = x.astype(np.int32)
        across = np.take(xi, x0, axis=2)
        across *= data.cols_weight[0]
        term = np.take(xi, x1, axis=2)
        term *= data.cols_weight[1]
        across += term
        acc = np.take(across, y0, axis=1)
        acc *= data.rows_weight[0]
        term = np.take(across, y1, axis=1)
        term *= data.rows_weight[1]
        acc += term
        # (acc + 2^19) / 2^20 for acc > 0, (acc - 2^19) / 2^20 otherwise, truncating
        rounded = np.abs(acc)
        rounded += 1 << 19
        rounded >>= 20
        rounded *= np.sign(acc)
        np.copyto(out, rounded, casting="unsafe")
