"""SignalFilterBankSpectralSubtraction (TFLM signal library custom op): per-channel noise
estimate (a first-order low-pass kept across invokes in a persistent buffer, zeroed by
prepare and reset) subtracted from uint32 channels, floored at a fraction of the signal.

Options (alphabetical): alternate_one_minus_smoothing, alternate_smoothing, clamping,
min_signal_remaining, num_channels, one_minus_smoothing, smoothing, smoothing_bits,
spectral_subtraction_bits. Even channels use smoothing/one_minus_smoothing, odd ones the
alternates. Arithmetic is TFLM's: uint32 signal scaled up by smoothing_bits (wrapping),
uint64 products and sums (wrapping) shifted by spectral_subtraction_bits and truncated to
uint32. Output 1 is a copy of the noise estimate.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import flex_elements, sample_shape, signal_options, type_name, vector_rows
from ..internal.tensor_utils import TensorType

U32 = np.uint64(0xFFFFFFFF)


class SpectralSubtractionParams:
    """TFLM's TFLMSignalSpectralSubtractionParams (config + noise estimate state)."""

    def __init__(self, values):
        v = [int(x) for x in values] + [0] * max(0, 9 - len(values))
        u32 = lambda x: x & 0xFFFFFFFF                      # noqa: E731  int32 -> uint32 fields
        self.alternate_one_minus_smoothing = u32(v[0])
        self.alternate_smoothing = u32(v[1])
        self.clamping = v[2] != 0
        self.min_signal_remaining = u32(v[3])
        self.num_channels = ((v[4] + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
        self.one_minus_smoothing = u32(v[5])
        self.smoothing = u32(v[6])
        self.smoothing_bits = u32(v[7])
        self.spectral_subtraction_bits = u32(v[8])
        self.noise_estimate = None


def spectral_subtraction(p, signal, noise):
    """One step of TFLM's FilterbankSpectralSubtraction along the last axis (one row per
    sample in a block); updates ``noise`` (uint32 array) in place and returns the output
    channels."""
    n = p.num_channels
    x = np.asarray(signal[..., :n], np.uint64)
    odd = (np.arange(n) & 1) == 1
    smoothing = np.where(odd, p.alternate_smoothing, p.smoothing).astype(np.uint64)
    one_minus = np.where(odd, p.alternate_one_minus_smoothing, p.one_minus_smoothing).astype(np.uint64)
    sb = np.uint64(p.smoothing_bits)
    ssb = np.uint64(p.spectral_subtraction_bits)
    scaled = (x << sb) & U32
    est = ((scaled * smoothing + noise[..., :n].astype(np.uint64) * one_minus) >> ssb) & U32
    over = est > scaled
    capped = np.where(over, scaled, est)
    noise[..., :n] = (capped if p.clamping else est).astype(np.uint32)
    floor = ((x * np.uint64(p.min_signal_remaining)) >> ssb) & U32
    subtracted = (scaled - capped) >> sb
    return np.maximum(subtracted, floor).astype(np.uint32)


@register
class SignalFilterBankSpectralSubtraction(Kernel):
    custom_name = "SignalFilterBankSpectralSubtraction"
    supported_types = ("uint32",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof(
            "signal_filter_bank_spectral_subtraction.TFLMSignalSpectralSubtractionParams"))
        params = SpectralSubtractionParams(flex_elements(signal_options(ctx, node)))
        count = max(params.num_channels, 0)
        # in a block of samples: one noise estimate row per sample
        rows = max(ctx.block_samples, 1)
        params.noise_estimate = ctx.persistent_array(
            np.uint32, rows * count, nbytes=rows * params.num_channels * 4 & 0xFFFFFFFFFFFFFFFF)
        if ctx.block_samples:
            params.noise_estimate = params.noise_estimate.reshape(rows, count)
        return params

    def sample_rows(self, block):
        """One vector per sample, with one noise estimate row per sample (from the reset
        state, as every sample of a block starts)."""
        return vector_rows(block, (0,))

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 2:
            raise ctx.error("needs 1 input and 2 outputs")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        noise = ctx.required_output(node, 1)
        shapes = [sample_shape(ctx, t.shape) for t in (inp, out, noise)]
        for name, t, shape in zip(("input", "output", "noise estimate"), (inp, out, noise), shapes):
            if len(shape) != 1:
                raise ctx.error(f"{name} {t.shape} must be 1-D")
            if t.type != TensorType.UINT32:
                raise ctx.error(f"{name} type {type_name(t.type)} must be uint32")
        p = node.user_data
        n = p.num_channels
        (n_in,), (n_out,), (n_noise,) = shapes
        if n < 0 or n_in < n or n_out < n or n_noise > n:
            raise ctx.error(f"num_channels {n}: input {inp.shape} and output {out.shape} need "
                            f"num_channels entries, the noise estimate {noise.shape} at most that")
        if p.smoothing_bits >= 32 or p.spectral_subtraction_bits >= 64:
            raise ctx.error("smoothing_bits must be < 32 and spectral_subtraction_bits < 64")
        p.noise_estimate[:] = 0
        ctx.release(inp, out, noise)

    def invoke(self, ctx, node):
        p = node.user_data
        y = spectral_subtraction(p, node.input_arrays[0], p.noise_estimate)
        node.output_arrays[0][..., :p.num_channels] = y
        noise_out = node.output_arrays[1]
        noise_out[...] = p.noise_estimate[..., :noise_out.shape[-1]]

    def reset(self, ctx, node):
        p = node.user_data
        if p is not None and p.noise_estimate is not None:
            p.noise_estimate[:] = 0
