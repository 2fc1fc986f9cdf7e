"""HARD_SWISH: float32 and int8, as TFLM's reference kernels.

* float32: x * min(6, max(0, x + 3)) / 6 in float32 (one rounding per operation).
* int8: 16-bit fixed point. The centred input is shifted left by 7 ("hires" scale); one
  16-bit multiplier brings it to the output scale (before the final right shift), another
  ("reluish") to [-1, 1] over x in [-3, 3], with saturating shifts; the reluish value
  moved to [0, 1] multiplies the first with a truncating doubling high-mul, and a
  rounding right shift gives the output. Multipliers are TFLM's QuantizeMultiplier
  results rounded to 16 bits (the float32 "hires" input scale divided in double by the
  output scale and by 3/32768); the output multiplier's exponent must be <= 0.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.lut import apply_int8_table, int8_table
from .internal.quantization import (ieee_div, c_div, c_shift_factor, quantize_multiplier, rounding_divide_by_pot_int16,
                           saturating_rounding_doubling_high_mul_int16, wrap_int16)
from .internal.tensor_utils import FLOAT32, INT8, flat_size, type_name

_INT32_MAX = (1 << 31) - 1


class HardSwishParams:
    """TFLM's HardSwishParams."""
    input_zero_point = 0
    output_zero_point = 0
    reluish_multiplier_fixedpoint_int16 = 0
    reluish_multiplier_exponent = 0
    output_multiplier_fixedpoint_int16 = 0
    output_multiplier_exponent = 0
    table = None        # host cache: the int8 output for each of the 256 int8 inputs


def downscale_multiplier_to_int16(multiplier: int) -> int:
    """TFLM's DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15."""
    if multiplier >= _INT32_MAX - (1 << 15):
        return (1 << 15) - 1
    return (multiplier + (1 << 15)) >> 16


def _saturating_left_shift_int16(x: np.ndarray, amount: int) -> np.ndarray:
    """TFLM's SaturatingLeftShift: int64 value times the C int ``1 << amount`` (a huge
    amount shifts as the CPU does: :func:`c_shift_factor`), clamped to int16."""
    return np.clip(x * int(c_shift_factor(amount)), -(1 << 15), (1 << 15) - 1)


def hard_swish_int8(x: np.ndarray, p: HardSwishParams) -> np.ndarray:
    """reference_ops::HardSwish<int8_t> (returns int64 values)."""
    srdhm = saturating_rounding_doubling_high_mul_int16
    hires = wrap_int16(x.astype(np.int64) - p.input_zero_point) * (1 << 7)
    preshift_output = srdhm(hires, p.output_multiplier_fixedpoint_int16)
    reluish = hires
    exponent = p.reluish_multiplier_exponent
    if exponent > 0:
        reluish = _saturating_left_shift_int16(reluish, exponent - 1)
    reluish = srdhm(reluish, p.reluish_multiplier_fixedpoint_int16)
    if exponent > 0:
        reluish = _saturating_left_shift_int16(reluish, 1)
    if exponent < 0:
        reluish = rounding_divide_by_pot_int16(reluish, -exponent)
    reluish = (reluish + (1 << 15)) >> 1
    # SaturatingDoublingHighMul: truncating (no rounding nudge); reluish >= 0 never saturates
    product = wrap_int16(c_div(reluish * preshift_output, 1 << 15))
    out = rounding_divide_by_pot_int16(product, -p.output_multiplier_exponent)
    out = wrap_int16(out + p.output_zero_point)
    return np.clip(out, -128, 127)


def hard_swish_float(x: np.ndarray) -> np.ndarray:
    f = np.float32
    with np.errstate(all="ignore"):
        shifted = x + f(3)
        relu6 = np.where(f(0) < shifted, shifted, f(0))
        relu6 = np.where(relu6 < f(6), relu6, f(6))
        return (x * relu6) / f(6)


@register
class HardSwish(Kernel):
    op = "HARD_SWISH"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("hard_swish.HardSwishParams"))
        return HardSwishParams()

    def prepare(self, ctx, node):
        p = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.input(node, 0)
        if inp is None:
            raise ctx.error("needs an input tensor")
        out = ctx.output(node, 0)
        if out is None:
            raise ctx.error("needs an output tensor")
        if inp.type not in (FLOAT32, INT8):
            raise ctx.error(f"Unsupported type {type_name(inp.type)}")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if flat_size(out.shape) != flat_size(inp.shape):
            raise ctx.error(f"output shape {out.shape} does not match input shape {inp.shape}")
        if inp.type == INT8:
            f = np.float32
            p.input_zero_point = inp.zero_point
            p.output_zero_point = out.zero_point
            hires_input_scale = (f(1.0) / f(128.0)) * f(inp.scale)
            reluish_scale = f(3.0) / f(32768.0)
            with np.errstate(all="ignore"):
                # the float32 hires scale, divided in double (as the TFLM package does)
                output_multiplier = ieee_div(float(hires_input_scale), float(f(out.scale)))
                reluish_multiplier = ieee_div(float(hires_input_scale), float(reluish_scale))
            try:
                m32, p.output_multiplier_exponent = quantize_multiplier(output_multiplier)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            p.output_multiplier_fixedpoint_int16 = downscale_multiplier_to_int16(m32)
            if p.output_multiplier_exponent > 0:
                raise ctx.error(f"input scale {inp.scale} is too large for output scale {out.scale} "
                                "(TFLM: params->output_multiplier_exponent <= 0 was not true)")
            try:
                m32, p.reluish_multiplier_exponent = quantize_multiplier(reluish_multiplier)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            p.reluish_multiplier_fixedpoint_int16 = downscale_multiplier_to_int16(m32)
            p.table = int8_table(lambda v: hard_swish_int8(v, p))
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.dtype == np.float32:
            result = hard_swish_float(x)
        else:
            apply_int8_table(node.user_data.table, x, out=y)
            return
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
