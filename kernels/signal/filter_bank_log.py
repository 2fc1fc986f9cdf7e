"""SignalFilterBankLog (TFLM signal library custom op): fixed-point natural log of uint32
channels into int16.

Each channel is shifted left by ``input_correction_bits`` (uint32, wrapping); values <= 1
give 0; otherwise TFLM's Log32: log2 = (bit length - 1) << 16 plus a fraction from a
128-segment table with linear interpolation, times 45426 (ln 2 in Q16) rounded, times
``output_scale`` rounded (uint32 arithmetic, wrapping), capped at 32767.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import flex_element, msb32, sample_shape, signal_options, type_name, vector_rows
from ..internal.tensor_utils import INT16, TensorType

LOG_LUT = np.array([
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797,
    2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549,
    4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444,
    5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626,
    5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203,
    5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
    4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875,
    2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094,
    963, 830, 695, 559, 421, 282, 142, 0, 0], np.int64)
LOG_COEFF = 45426
U32 = 0xFFFFFFFF


def log32(x: np.ndarray, out_scale: int) -> np.ndarray:
    """TFLM's Log32 of uint32 values > 1 (uint32 results as int64)."""
    x = np.asarray(x, np.int64)
    integer = msb32(x).astype(np.int64) - 1
    frac = x - (np.int64(1) << integer)
    frac = np.where(integer < 16, frac << np.clip(16 - integer, 0, 31), frac >> np.clip(integer - 16, 0, 31))
    base_seg = frac >> 9
    c0 = LOG_LUT[base_seg]
    c1 = LOG_LUT[base_seg + 1]
    rel_pos = ((c1 - c0) * (frac - 512 * base_seg)) >> 16
    fraction = (frac + c0 + rel_pos) & U32
    log2 = ((integer << 16) + fraction) & U32
    loge = ((LOG_COEFF * log2 + 32768) >> 16) & U32
    return (((out_scale & U32) * loge & U32) + 32768 & U32) >> 16


class LogParams:
    """TFLM's TFLMSignalLogParams."""

    def __init__(self, input_correction_bits, output_scale):
        self.input_correction_bits = input_correction_bits
        self.output_scale = output_scale


@register
class SignalFilterBankLog(Kernel):
    custom_name = "SignalFilterBankLog"
    supported_types = ("uint32->int16",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_filter_bank_log.TFLMSignalLogParams"))
        options = signal_options(ctx, node)
        return LogParams(flex_element(options, 0), flex_element(options, 1))

    def sample_rows(self, block):
        """Element by element: one vector per sample."""
        return vector_rows(block, (0,))

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error("needs 1 input and 1 output")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        in_shape, out_shape = sample_shape(ctx, inp.shape), sample_shape(ctx, out.shape)
        if len(in_shape) != 1 or len(out_shape) != 1:
            raise ctx.error(f"input {inp.shape} and output {out.shape} must be 1-D")
        if inp.type != TensorType.UINT32 or out.type != INT16:
            raise ctx.error(f"input {type_name(inp.type)} and output {type_name(out.type)} must "
                            "be uint32 and int16")
        if out_shape[0] < in_shape[0]:
            raise ctx.error(f"output {out.shape} is shorter than the input {inp.shape}")
        if not 0 <= node.user_data.input_correction_bits < 32:
            raise ctx.error("input_correction_bits must be in [0, 31]")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        p = node.user_data
        x = node.input_arrays[0]
        scaled = (x.astype(np.int64) << p.input_correction_bits) & U32
        big = scaled > 1
        value = np.zeros(scaled.shape, np.int64)
        if big.any():
            value[big] = np.minimum(log32(scaled[big], p.output_scale), 32767)
        node.output_arrays[0][..., :x.shape[-1]] = value.astype(np.int16)
