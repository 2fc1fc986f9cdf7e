"""Spatial padding as TFLM computes it (SAME / VALID, strides, dilations).

``padding_mode(params)`` maps the schema's Padding (SAME=0, VALID=1) to TFLM's
TfLitePadding; a model without options gives ``UNKNOWN`` (TFLM's zero-filled struct).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

UNKNOWN, SAME, VALID = 0, 1, 2  # TfLitePadding values

_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


@dataclass(frozen=True)
class PaddingValues:
    """TfLitePaddingValues: padding before (height/width) plus the extra padding after
    (offset) when the total is odd."""

    width: int = 0
    height: int = 0
    width_offset: int = 0
    height_offset: int = 0


def padding_mode(params) -> int:
    """TFLM's padding enum for an op's options (``params.padding`` is the schema value)."""
    if not params.present:
        return UNKNOWN
    return {0: SAME, 1: VALID}.get(int(params.padding), UNKNOWN)


def effective_filter_size(filter_size: int, dilation: int) -> int:
    return (filter_size - 1) * dilation + 1


def out_size(padding: int, image_size: int, filter_size: int, stride: int, dilation: int = 1) -> Optional[int]:
    """Output extent along one axis, or None where TFLM's checked version fails."""
    if padding not in (SAME, VALID) or image_size < 0 or filter_size <= 0 or stride <= 0 or dilation <= 0:
        return None
    eff = effective_filter_size(filter_size, dilation)
    if padding == SAME:
        value = (image_size + stride - 1) // stride
    else:
        num = image_size + stride - eff
        value = int(num / stride) if num < 0 else num // stride  # C++ truncation
    if value < 0 or value > _INT_MAX:
        return None
    return value


def padding_with_offset(stride: int, dilation: int, in_size: int, filter_size: int,
                        out: int) -> Optional[Tuple[int, int]]:
    """(padding, offset) along one axis, or None where TFLM's checked version fails."""
    if in_size < 0 or filter_size <= 0 or out < 0 or stride <= 0 or dilation <= 0:
        return None
    total = (out - 1) * stride + effective_filter_size(filter_size, dilation) - in_size
    total = max(total, 0)
    pad = total // 2
    if pad > _INT_MAX:
        return None
    return pad, total % 2


def compute_padding_height_width(stride_h: int, stride_w: int, dilation_h: int, dilation_w: int,
                                 in_h: int, in_w: int, filter_h: int, filter_w: int,
                                 padding: int) -> Tuple[PaddingValues, int, int]:
    """TFLM's ComputePaddingHeightWidth: (padding values, out_height, out_width).

    Where TFLM's checked computation fails it returns zeros, as TFLM does."""
    ow = out_size(padding, in_w, filter_w, stride_w, dilation_w)
    if ow is None:
        return PaddingValues(), 0, 0
    oh = out_size(padding, in_h, filter_h, stride_h, dilation_h)
    if oh is None:
        return PaddingValues(), 0, ow
    ph = padding_with_offset(stride_h, dilation_h, in_h, filter_h, oh)
    if ph is None:
        return PaddingValues(), oh, ow
    pw = padding_with_offset(stride_w, dilation_w, in_w, filter_w, ow)
    if pw is None:
        return PaddingValues(height=ph[0], height_offset=ph[1]), oh, ow
    return PaddingValues(width=pw[0], height=ph[0], width_offset=pw[1], height_offset=ph[1]), oh, ow


# ------------------------------------------------------------ sliding windows
def tap_range(count: int, stride: int, offset: int, limit: int) -> Tuple[int, int]:
    """Indices k in [0, count) with 0 <= k * stride + offset < limit, as (first, end).

    For a convolution tap at ``offset = filter_index * dilation - padding`` this is the
    range of output positions whose input position lies inside the image (TFLM skips
    the others); for a transpose convolution (scatter) it is the range of input
    positions whose output position lies inside the output."""
    first = max(0, -(offset // stride))           # ceil(-offset / stride)
    end = min(count, -((offset - limit) // stride))  # ceil((limit - offset) / stride)
    return first, max(first, end)


def padded_extent(in_size: int, pad_before: int, out_size: int, filter_size: int,
                  stride: int, dilation: int) -> int:
    """Extent of a padded axis that holds every tap of ``out_size`` windows."""
    if out_size <= 0:
        return in_size + pad_before
    return max(in_size + pad_before, (out_size - 1) * stride + (filter_size - 1) * dilation + 1)


def window_view(padded: np.ndarray, out_h: int, out_w: int, filter_h: int, filter_w: int,
                stride_h: int, stride_w: int, dilation_h: int, dilation_w: int) -> np.ndarray:
    """Read-only strided view (B, out_h, out_w, filter_h, filter_w, C) of the windows of
    an already padded NHWC array (no copy; reshape it to get an im2col matrix)."""
    sb, sy, sx, sc = padded.strides
    return np.lib.stride_tricks.as_strided(
        padded, (padded.shape[0], out_h, out_w, filter_h, filter_w, padded.shape[3]),
        (sb, sy * stride_h, sx * stride_w, sy * dilation_h, sx * dilation_w, sc), writeable=False)


#: Largest host-side work buffer (elements) a kernel may build for padding or im2col.
#: Real models need far less; absurd geometry (e.g. a dilation of 2^30) would otherwise
#: make the emulator, unlike TFLM's tap-skipping loops, allocate gigabytes.
HOST_BUFFER_LIMIT = 1 << 25


def check_host_buffer(ctx, elements: int, what: str) -> None:
    """Refuse (in prepare) a host work buffer larger than :data:`HOST_BUFFER_LIMIT`."""
    if elements > HOST_BUFFER_LIMIT:
        raise ctx.error(f"{what} would need {elements} elements of host memory (limit "
                        f"{HOST_BUFFER_LIMIT}): stride, dilation or padding too large for this input")
