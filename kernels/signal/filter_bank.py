"""SignalFilterBank (TFLM signal library custom op): accumulate a uint32 energy spectrum
into ``num_channels`` triangular mel channels as uint64.

Inputs: spectrum (uint32), weights, unweights, channel frequency starts, channel weight
starts, channel widths (all int16; the last four have num_channels+1 entries, entry 0
being the scratch channel). Channel i's band is ``width[i]`` bins from
``freq_start[i]``; it sums weight*bin into channel i and unweight*bin into channel i+1.
Products and sums are uint64 modulo 2^64 (an int16 weight converts to uint64 by sign
extension), as in TFLM. Output = channels 1..num_channels.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import (INT16, flex_element, sample_shape, signal_options, type_name,
                                      vector_rows)
from ..internal.tensor_utils import TensorType


class FilterBankParams:
    """TFLM's TFLMSignalFilterBankParams (the config's pointers are set per invoke)."""

    def __init__(self, num_channels):
        self.num_channels = num_channels


def accumulate_channels(spectrum, weights, unweights, freq_starts, weight_starts, widths,
                        num_channels):
    """TFLM's FilterbankAccumulateChannels: num_channels+1 uint64 sums (entry 0 scratch)."""
    n = num_channels + 1
    widths = np.maximum(np.asarray(widths[:n], np.int64), 0)
    total = int(widths.sum())
    channel = np.repeat(np.arange(n), widths)
    ends = np.cumsum(widths)
    offset = np.arange(total) - np.repeat(ends - widths, widths)
    freq = np.asarray(freq_starts[:n], np.int64)[channel] + offset
    widx = np.asarray(weight_starts[:n], np.int64)[channel] + offset
    bins = np.asarray(spectrum, np.uint64)[..., freq]
    w = np.asarray(weights, np.int64)[widx].astype(np.uint64)
    uw = np.asarray(unweights, np.int64)[widx].astype(np.uint64)
    wsum = _segment_sums(w * bins, ends, widths)
    usum = _segment_sums(uw * bins, ends, widths)
    out = wsum.copy()
    out[..., 1:] += usum[..., :-1]
    return out


def _segment_sums(values, ends, widths):
    """Per-channel sums modulo 2^64 along the last axis (zero for empty channels)."""
    csum = np.zeros(values.shape[:-1] + (values.shape[-1] + 1,), np.uint64)
    np.cumsum(values, axis=-1, dtype=np.uint64, out=csum[..., 1:])
    return csum[..., ends] - csum[..., ends - widths]


@register
class SignalFilterBank(Kernel):
    custom_name = "SignalFilterBank"
    supported_types = ("uint32->uint64",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_filter_bank.TFLMSignalFilterBankParams"))
        params = FilterBankParams(flex_element(signal_options(ctx, node), 0))   # 'num_channels'
        ctx.allocate_persistent(((params.num_channels + 1) * 8) & 0xFFFFFFFFFFFFFFFF)   # work_area uint64 (size_t)
        return params

    def sample_rows(self, block):
        """One spectrum per sample (the weight and channel tables shared)."""
        return vector_rows(block, (0,))

    def prepare(self, ctx, node):
        if len(node.inputs) != 6 or len(node.outputs) != 1:
            raise ctx.error("needs 6 inputs and 1 output")
        shapes = []
        for i, (name, want) in enumerate((("input", TensorType.UINT32), ("weights", INT16),
                                          ("unweights", INT16), ("channel_frequency_starts", INT16),
                                          ("channel_weight_starts", INT16), ("channel_widths", INT16))):
            t = ctx.required_input(node, i)
            shape = sample_shape(ctx, t.shape) if i == 0 else tuple(t.shape)
            if len(shape) != 1:
                raise ctx.error(f"{name} {t.shape} must be 1-D")
            if t.type != want:
                raise ctx.error(f"{name} type {type_name(t.type)} must be {type_name(want)}")
            shapes.append((int(shape[0]), t.data))
            ctx.release(t)
        out = ctx.required_output(node, 0)
        out_shape = sample_shape(ctx, out.shape)
        if len(out_shape) != 1:
            raise ctx.error(f"output {out.shape} must be 1-D")
        if out.type != TensorType.UINT64:
            raise ctx.error(f"output type {type_name(out.type)} must be uint64")
        nc = node.user_data.num_channels
        if nc < 0 or out_shape[0] > nc or any(s[0] < nc + 1 for s in shapes[3:]):
            raise ctx.error(f"num_channels {nc}: output {out.shape} must have at most num_channels "
                            "and the channel tables num_channels+1 entries")
        self._check_bands(ctx, shapes, nc)
        ctx.release(out)

    @staticmethod
    def _check_bands(ctx, shapes, nc):
        """Constant channel tables must stay inside the spectrum and weight tables."""
        (n_in, _), (n_w, _), (n_uw, _), (_, fs), (_, ws), (_, cw) = shapes
        if fs is None or ws is None or cw is None:
            return
        fs, ws, cw = (np.asarray(a, np.int64).reshape(-1)[:nc + 1] for a in (fs, ws, cw))
        band = cw > 0
        if np.any(band & ((fs < 0) | (ws < 0) | (fs + cw > n_in) | (ws + cw > min(n_w, n_uw)))):
            raise ctx.error("a channel band exceeds the spectrum or the weight tables")

    def invoke(self, ctx, node):
        nc = node.user_data.num_channels
        a = node.input_arrays
        sums = accumulate_channels(a[0], a[1], a[2], a[3], a[4], a[5], nc)
        out = node.output_arrays[0]
        out[...] = sums[..., 1:1 + out.shape[-1]]
