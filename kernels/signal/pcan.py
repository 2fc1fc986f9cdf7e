"""SignalPCAN (TFLM signal library custom op): per-channel energy normalisation.

For each uint32 channel: the gain is a piecewise polynomial of the noise estimate read
from the int16 gain table (3 coefficients per octave: interval = bit length of the
estimate, 10 fraction bits below its top bit; estimates 0..2 index the table directly);
the gain (int16, converted to uint32 by sign extension) times the channel (uint64) is
shifted right by ``snr_shift``, and the SNR (12 fraction bits) goes through the
"shrink" curve (x^2/4 below 2, x-1 above) to 6 fraction bits.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import (INT16, flex_element, msb32, sample_shape, signal_options, type_name,
                                      vector_rows, wrap16, wrap32)
from ..internal.tensor_utils import TensorType

SNR_BITS = 12
OUTPUT_BITS = 6
LUT_ENTRIES = 4 * 32 - 6 + 3     # the largest interval (32) reads entries 122..124


def wide_dynamic_function(x: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TFLM's WideDynamicFunction of uint32 values (int16 results as int64)."""
    x = np.asarray(x, np.uint64)
    lut = np.asarray(lut, np.int64).reshape(-1)
    interval = msb32(x).astype(np.int64)
    base = np.where(x <= 2, 0, 4 * interval - 6)
    up = np.clip(11 - interval, 0, 31).astype(np.uint64)
    down = np.clip(interval - 11, 0, 31).astype(np.uint64)
    shifted = np.where(interval < 11, (x << up) & np.uint64(0xFFFFFFFF), x >> down)
    frac = (shifted & np.uint64(0x3FF)).astype(np.int64)
    c0 = lut[base]
    c1 = lut[np.minimum(base + 1, lut.size - 1)]
    c2 = lut[np.minimum(base + 2, lut.size - 1)]
    result = (c2 * frac) >> 5
    result = wrap32(result + wrap32((c1 & 0xFFFFFFFF) << 5))
    result = wrap32(result * frac)
    result = (result + (1 << 14)) >> 15
    result = wrap16(result + c0)
    small = lut[np.minimum(x, 2).astype(np.int64)]
    return np.where(x <= 2, small, result)


def pcan_shrink(x: np.ndarray) -> np.ndarray:
    """TFLM's PcanShrink of uint32 SNRs (as uint64 arrays)."""
    low = (x * x) >> np.uint64(2 + 2 * SNR_BITS - OUTPUT_BITS)
    high = (x >> np.uint64(SNR_BITS - OUTPUT_BITS)) - np.uint64(1 << OUTPUT_BITS)
    return np.where(x < np.uint64(2 << SNR_BITS), low, high) & np.uint64(0xFFFFFFFF)


def apply_pcan(gain_lut, snr_shift, noise, channels):
    gain = (wide_dynamic_function(noise, gain_lut) & 0xFFFFFFFF).astype(np.uint64)
    snr = ((np.asarray(channels, np.uint64) * gain) >> np.uint64(snr_shift)) & np.uint64(0xFFFFFFFF)
    return pcan_shrink(snr).astype(np.uint32)


class PcanParams:
    """TFLM's TfLitePcanParams."""

    def __init__(self, snr_shift):
        self.snr_shift = snr_shift


@register
class SignalPCAN(Kernel):
    custom_name = "SignalPCAN"
    supported_types = ("uint32",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_pcan.TfLitePcanParams"))
        return PcanParams(flex_element(signal_options(ctx, node), 0))   # 'snr_shift'

    def sample_rows(self, block):
        """One vector and noise estimate per sample (the gain table shared)."""
        return vector_rows(block, (0, 1))

    def prepare(self, ctx, node):
        if len(node.inputs) != 3 or len(node.outputs) != 1:
            raise ctx.error("needs 3 inputs and 1 output")
        inp = ctx.required_input(node, 0)
        noise = ctx.required_input(node, 1)
        lut = ctx.required_input(node, 2)
        out = ctx.required_output(node, 0)
        shapes = {}
        for name, t, want in (("input", inp, TensorType.UINT32), ("noise estimate", noise, TensorType.UINT32),
                              ("gain lut", lut, INT16), ("output", out, TensorType.UINT32)):
            shapes[name] = tuple(t.shape) if t is lut else sample_shape(ctx, t.shape)
            if len(shapes[name]) != 1:
                raise ctx.error(f"{name} {t.shape} must be 1-D")
            if t.type != want:
                raise ctx.error(f"{name} type {type_name(t.type)} must be {type_name(want)}")
        if lut.shape[0] < LUT_ENTRIES:
            raise ctx.error(f"gain lut of {lut.shape[0]} entries; TFLM reads up to {LUT_ENTRIES}")
        if (shapes["noise estimate"][0] < shapes["input"][0]
                or shapes["output"][0] != shapes["input"][0]):
            raise ctx.error(f"input {inp.shape}, noise estimate {noise.shape} and output "
                            f"{out.shape} must have the same number of channels")
        if not 0 <= node.user_data.snr_shift < 64:
            raise ctx.error(f"snr_shift {node.user_data.snr_shift} must be in [0, 63]")
        ctx.release(inp, out, noise, lut)

    def invoke(self, ctx, node):
        x, noise, lut = node.input_arrays
        n = x.shape[-1]
        node.output_arrays[0][...] = apply_pcan(lut, node.user_data.snr_shift, noise[..., :n], x)
