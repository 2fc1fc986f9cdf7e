"""L2_NORMALIZATION over the last axis: float32 and int8, as TFLM's reference kernel.

* float32: per row, a sequential float32 sum of squares, ``sqrtf``, at least 1e-6f,
  then one float32 division per element.
* int8: per row, the int32 sum of (q - input zero point)^2, TFLM's fixed-point inverse
  square root (GetInvSqrtQuantizedMultiplierExp), and each centred value requantised
  with it (shift + 7: the output is implicitly at scale 1/128, zero point 0, whatever
  the output tensor says), clamped to int8.

At most 4-D (TFLM's check) and no fused activation.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import same_shape_rows
from .internal.float_ops import add_f32
from .internal.quantization import (ACT_NONE, get_inv_sqrt_quantized_multiplier_exp,
                           multiply_by_quantized_multiplier, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, flat_size, type_name

_F32 = np.float32
_EPSILON = _F32(1e-6)


class L2NormalizationParams:
    input_zero_point = 0


def float_row_sum(rows: np.ndarray) -> np.ndarray:
    """Sequential float32 sum along the last axis (TFLM's loop order)."""
    acc = np.zeros(rows.shape[:-1], dtype=_F32)
    for c in range(rows.shape[-1]):
        acc = add_f32(acc, rows[..., c])
    return acc


@register
class L2Normalization(Kernel):
    op = "L2_NORMALIZATION"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Along the last axis, every other axis a row: samples stay apart."""
        return same_shape_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("l2norm.L2NormalizationParams"))
        return L2NormalizationParams()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if len(inp.shape) > 4:
            raise ctx.error(f"input has {len(inp.shape)} dimensions, at most 4 are supported")
        if len(inp.shape) == 0:
            raise ctx.error("input must have at least one dimension")
        if out.type not in (FLOAT32, INT8):
            raise ctx.error(f"Output type is {type_name(out.type)}, requires float32 or int8.")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type {type_name(out.type)} differ")
        if tuple(out.shape[-1:]) != tuple(inp.shape[-1:]) or flat_size(out.shape) != flat_size(inp.shape):
            raise ctx.error(f"output shape {tuple(out.shape)} does not match input shape {tuple(inp.shape)}")
        data.input_zero_point = inp.zero_point if inp.type == INT8 else 0
        activation = getattr(node.params, "fused_activation_function", ACT_NONE) or ACT_NONE
        if activation != ACT_NONE:
            raise ctx.error(f"fused activation {activation} is not supported (only NONE)")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        depth = x.shape[-1]
        rows = x.reshape(-1, depth)
        if x.dtype == np.float32:
            with np.errstate(all="ignore"):
                norm = np.sqrt(float_row_sum(rows * rows))
                norm = np.where(norm < _EPSILON, _EPSILON, norm)
                result = rows / norm[:, None]
        else:
            centred = rows.astype(np.int64) - data.input_zero_point
            acc = wrap_int32((centred * centred).sum(axis=1))
            multiplier, shift = get_inv_sqrt_quantized_multiplier_exp(acc, -1)
            result = multiply_by_quantized_multiplier(centred, multiplier[:, None], shift[:, None] + 7)
            result = np.clip(result, -128, 127)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
