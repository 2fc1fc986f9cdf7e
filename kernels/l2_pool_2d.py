"""L2_POOL_2D (NHWC): float32 only (TFLM has no quantized L2 pooling), SAME / VALID
padding, strides and a fused activation, as TFLM's reference kernel.

No init / OpData: prepare takes the output and the input as temporary tensors (in that
order), computes the padding into the op's TfLitePoolParams, and moves the output's dims
into a persistent TfLiteIntArray of 4 values (the model's output shape must be the pooled
shape).

Each output is sqrt(sum of squares / count) over the window taps inside the input, in
float32: one rounded square and one rounded addition per tap, in TFLM's row-by-row order
(a whole-tensor step per tap), then the float division by the tap count, sqrtf and the
activation clamp.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.pooling import pool_geometry, pooling_taps
from .internal.quantization import activation_bounds_float32, clamp_float32
from .internal.tensor_utils import FLOAT32, check_io_count, make_output_dims_writable, type_name


class OpData:
    taps = ()
    count = None
    act_min = act_max = None


@register
class L2Pool2D(Kernel):
    op = "L2_POOL_2D"
    supported_types = ("float32",)

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        check_io_count(ctx, node, 1)
        out = ctx.required_output(node, 0, "the output tensor")
        inp = ctx.required_input(node, 0, "the input tensor")
        if len(inp.shape) != 4 or len(out.shape) != 4:
            raise ctx.error(f"input and output must be 4-D (NHWC), got {tuple(inp.shape)} and "
                            f"{tuple(out.shape)}")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        batches, in_h, in_w, depth = inp.shape
        padding, out_h, out_w, (fh, fw, sh, sw) = pool_geometry(ctx, params, in_h, in_w)
        if inp.type != FLOAT32:
            raise ctx.error(f"input type {type_name(inp.type)} is not supported: L2_POOL_2D is "
                            "float32 only")
        make_output_dims_writable(ctx, 4)
        expected = (batches, out_h, out_w, depth)
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} does not match the pooled shape {expected}")
        data.taps, count = pooling_taps(in_h, in_w, out_h, out_w, fh, fw, sh, sw,
                                        padding.height, padding.width)
        data.count = count.astype(np.float32)[None, :, :, None]
        data.act_min, data.act_max = activation_bounds_float32(params.fused_activation_function)
        ctx.release(out, inp)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        total = np.zeros(y.shape, dtype=np.float32)
        for oy, ox, iy, ix in data.taps:
            window = x[:, iy, ix, :]
            total[:, oy, ox, :] += window * window
        with np.errstate(invalid="ignore", divide="ignore"):
            result = np.sqrt(total / data.count)
        np.copyto(y, clamp_float32(result, data.act_min, data.act_max))
