"""AVERAGE_POOL_2D and MAX_POOL_2D (NHWC): float32, int8 and int16, SAME / VALID padding,
strides, fused activation, as TFLM's reference kernels (one shared Prepare, as in TFLM).

Each window only visits the taps that fall inside the image (padding is never summed);
the loop runs over the filter taps in TFLM's order (row by row), each tap updating all
the output positions it reaches with one whole-tensor operation, so float sums see the
same sequence of float32 additions as TFLM's per-element loop.

* average, float32: float32 running sum, divided by the float tap count;
* average, int8/int16: int32 sum, rounded to nearest with halves away from zero
  ((sum +- count/2) / count, truncating division);
* max: running maximum from the type's lowest value (float: std::max semantics, NaN
  never wins);
* then the fused activation clamp (float: [-FLT_MAX, FLT_MAX] without activation).
Quantized inputs and outputs must share scale (within 1e-6) and zero point. A fused
activation whose quantized bound does not fit int32 (output scales below about 6e-9) is
refused: TFLM logs the failure, ignores it and clamps with uninitialised bounds.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from .base import Kernel, register
from .internal.padding import window_view
from .internal.pooling import pool_geometry, pooling_taps
from .internal.sample_rows import batch_axis_rows
from .internal.quantization import (activation_bounds_float32, clip_into, activation_range_quantized, clamp_float32,
                           wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, type_name

_LOWEST = {np.dtype(np.int8): -128, np.dtype(np.int16): -32768}


class OpData:
    """TFLM's OpDataPooling (padding, activation bounds) plus the host-side tap plan."""
    padding = None
    act_min = act_max = 0
    act_min_f = act_max_f = None
    out_h = out_w = 0
    taps: List[Tuple[slice, slice, slice, slice]] = []
    count = None
    acc_dtype = np.int64


def _windows(x: np.ndarray, data, fill) -> np.ndarray:
    """(batch, out_h, out_w, filter_h, filter_w, depth) view of every pooling window,
    the input padded with ``fill`` (0 for sums: TFLM skips padded taps; the lowest value
    for maxima). Integer results do not depend on the order of the reduction."""
    fh, fw, sh, sw, pads = data.window
    if any(p for pair in pads for p in pair):
        x = np.pad(x, pads, constant_values=fill)
    return window_view(x, data.out_h, data.out_w, fh, fw, sh, sw, 1, 1)


class _Pool(Kernel):
    """Init and Prepare shared by both pooling ops (TFLM's PoolInit / PoolingPrepare)."""

    def sample_rows(self, block):
        """Batch rows are independent: the sample axis replaces the unit batch axis."""
        return batch_axis_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("pooling.OpDataPooling"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        inp = ctx.input(node, 0)
        if inp is None:
            raise ctx.error("needs an input tensor")
        out = ctx.output(node, 0)
        if out is None:
            raise ctx.error("needs an output tensor")
        if len(inp.shape) != 4 or len(out.shape) != 4:
            raise ctx.error(f"input and output must be 4-D (NHWC), got {inp.shape} and {out.shape}")
        batches, in_h, in_w, depth = inp.shape
        data.padding, out_h, out_w, (fh, fw, sh, sw) = pool_geometry(ctx, params, in_h, in_w)
        expected = (batches, out_h, out_w, depth)
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} does not match the pooled shape {expected}")
        if inp.type not in (FLOAT32, INT8, INT16):
            raise ctx.error(f"Type {type_name(inp.type)} ({inp.type}) not supported.")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        activation = params.fused_activation_function
        if inp.type == FLOAT32:
            data.act_min_f, data.act_max_f = activation_bounds_float32(activation)
        else:
            scale_diff = abs(float(inp.scale) - float(out.scale))   # in double, as the package
            if not scale_diff <= 1.0e-6:
                raise ctx.error(f"input scale {inp.scale} and output scale {out.scale} differ")
            if inp.zero_point != out.zero_point:
                raise ctx.error(f"input zero point {inp.zero_point} and output zero point "
                                f"{out.zero_point} differ")
            try:
                data.act_min, data.act_max = activation_range_quantized(
                    activation, out.dtype, out.scale, out.zero_point)
            except ValueError as e:
                # TFLM's PoolingPrepare ignores the status: it logs the failed check and
                # clamps with bounds it never set (an uninitialised persistent buffer)
                raise ctx.error(f"{e}; TFLM's pooling ignores that failure and clamps with "
                                "uninitialised activation bounds") from None
        # the tap plan: for each filter tap (row-major), the outputs it reaches
        pad = data.padding
        data.taps, count = pooling_taps(in_h, in_w, out_h, out_w, fh, fw, sh, sw,
                                        pad.height, pad.width)
        if count.size and count.min() == 0:
            raise ctx.error("a pooling window lies entirely in the padding")
        data.count = count[None, :, :, None]
        # integer fast path: one reduction over windows of the (padded) input
        bottom = max(0, (out_h - 1) * sh + fh - in_h - pad.height)
        right = max(0, (out_w - 1) * sw + fw - in_w - pad.width)
        data.window = (fh, fw, sh, sw, ((0, 0), (pad.height, bottom), (pad.width, right), (0, 0)))
        # the int32 sum of TFLM cannot wrap while |sum| < 2^31: accumulate in int32 then
        data.acc_dtype = np.int32 if (count.max(initial=0) << 15) < (1 << 31) else np.int64
        data.out_h, data.out_w = out_h, out_w
        ctx.release(inp, out)


@register
class AveragePool2D(_Pool):
    op = "AVERAGE_POOL_2D"
    supported_types = ("float32", "int8", "int16")

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        shape = (x.shape[0], data.out_h, data.out_w, x.shape[3])
        if x.dtype == np.float32:
            total = np.zeros(shape, dtype=np.float32)
            for oy, ox, iy, ix in data.taps:
                total[:, oy, ox, :] += x[:, iy, ix, :]
            average = total / data.count.astype(np.float32)
            np.copyto(y, clamp_float32(average, data.act_min_f, data.act_max_f))
            return
        acc = _windows(x, data, 0).sum(axis=(3, 4), dtype=data.acc_dtype)
        if data.acc_dtype != np.int32:
            acc = wrap_int32(acc)           # the int32 sum of TFLM may wrap
        # (acc + n/2) / n for acc > 0, (acc - n/2) / n otherwise, C++ truncating division
        rounded = np.abs(acc)
        rounded += data.count // 2
        rounded //= data.count
        rounded *= np.sign(acc)
        clip_into(rounded, data.act_min, data.act_max, out=rounded)
        np.copyto(y, rounded, casting="unsafe")


@register
class MaxPool2D(_Pool):
    op = "MAX_POOL_2D"
    supported_types = ("float32", "int8", "int16")

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        shape = (x.shape[0], data.out_h, data.out_w, x.shape[3])
        if x.dtype == np.float32:
            best = np.full(shape, -np.finfo(np.float32).max, dtype=np.float32)
            for oy, ox, iy, ix in data.taps:
                current = best[:, oy, ox, :]
                value = x[:, iy, ix, :]
                np.copyto(current, value, where=current < value)     # std::max(current, value)
            np.copyto(y, clamp_float32(best, data.act_min_f, data.act_max_f))
            return
        best = _windows(x, data, _LOWEST[x.dtype]).max(axis=(3, 4))
        clip_into(best, data.act_min, data.act_max, out=best)
        np.copyto(y, best, casting="unsafe")
