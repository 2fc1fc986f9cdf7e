"""Pooling geometry and the window plan of TFLM's float pooling loops (average, L2).

:func:`pool_geometry` checks Pool2DOptions and computes padding and output size, as every
pooling kernel's prepare does.

TFLM's reference pooling visits, for each output position, only the filter taps that
fall inside the input, row by row (filter y outer, filter x inner). :func:`pooling_taps`
turns that into one whole-tensor step per tap: for tap (fy, fx), the block of output
positions it reaches and the matching strided block of the input. Adding tap by tap in
this order gives each output the same sequence of float32 additions as TFLM's loop.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from .padding import SAME, VALID, PaddingValues, compute_padding_height_width, padding_mode

Tap = Tuple[slice, slice, slice, slice]   # output rows, output cols, input rows, input cols


def tap_positions(out_size: int, stride: int, offset: int, in_size: int) -> Optional[Tuple[slice, slice]]:
    """(output slice, input slice) of the outputs o with 0 <= o*stride + offset < in_size,
    or None when there are none."""
    first = max(0, -(offset // stride))                 # ceil(-offset / stride)
    end = min(out_size, -((offset - in_size) // stride))  # ceil((in_size - offset) / stride)
    if end <= first:
        return None
    start = first * stride + offset
    return slice(first, end), slice(start, (end - 1) * stride + offset + 1, stride)


def pooling_taps(in_h: int, in_w: int, out_h: int, out_w: int, filter_h: int, filter_w: int,
                 stride_h: int, stride_w: int, pad_h: int, pad_w: int) -> Tuple[List[Tap], np.ndarray]:
    """The taps in TFLM's order and the (out_h, out_w) int64 count of taps inside the
    input for every output position (TFLM's ``filter_count``)."""
    taps: List[Tap] = []
    count = np.zeros((out_h, out_w), dtype=np.int64)
    for fy in range(filter_h):
        rows = tap_positions(out_h, stride_h, fy - pad_h, in_h)
        if rows is None:
            continue
        for fx in range(filter_w):
            cols = tap_positions(out_w, stride_w, fx - pad_w, in_w)
            if cols is None:
                continue
            taps.append((rows[0], cols[0], rows[1], cols[1]))
            count[rows[0], cols[0]] += 1
    return taps, count


def pool_geometry(ctx, params, in_h: int, in_w: int) -> Tuple[PaddingValues, int, int, Tuple[int, int, int, int]]:
    """Pool2DOptions checked (a known padding, strides and filter >= 1) and TFLM's
    ComputePaddingHeightWidth: (padding, out_h, out_w, (filter_h, filter_w, stride_h,
    stride_w))."""
    mode = padding_mode(params)
    if mode not in (SAME, VALID):
        raise ctx.error("missing or unknown padding in Pool2DOptions")
    sh, sw = int(params.stride_h), int(params.stride_w)
    fh, fw = int(params.filter_height), int(params.filter_width)
    if sh < 1 or sw < 1 or fh < 1 or fw < 1:
        raise ctx.error(f"strides ({sh}, {sw}) and filter size ({fh}, {fw}) must be >= 1")
    padding, out_h, out_w = compute_padding_height_width(sh, sw, 1, 1, in_h, in_w, fh, fw, mode)
    return padding, out_h, out_w, (fh, fw, sh, sw)
