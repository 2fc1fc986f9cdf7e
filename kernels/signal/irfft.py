"""SignalIrfft (TFLM signal custom op): inverse real FFT of every innermost row of
fft_length/2+1 complex bins back to fft_length samples, with kiss FFT's kiss_fftri
(kernels/kiss_fft.py) in the build of the tensor type: int16, int32 or float32. The float
build divides the result by fft_length (kiss leaves it scaled); the fixed-point builds
are already scaled down by their per-stage divisions.

Custom options: ``T`` (looked up by name) and ``fft_length`` (element 1). Arena: the
params struct and the kiss_fftr inverse state (float: behind a small {fft_length, cfg}
header) are persistent; no scratch.

Refused although TFLM's prepare accepts them (TFLM then crashes or reads/writes out of
bounds): odd lengths, halves with radices other than 2..5, input rows of fewer than
fft_length/2+1 bins, output rows shorter than fft_length, fewer output rows than input.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.kiss_fft import KissFftr, supported_length
from ..internal.signal_common import fft_tensors, flex_element, flex_map_int, signal_options
from .rfft import KINDS, kiss_fftr_state_bytes


class IrfftParams:
    """TFLM's TfLiteAudioFrontendIrfftParams plus the host-side transform."""

    def __init__(self, fft_type, fft_length):
        self.fft_type, self.fft_length = fft_type, fft_length
        self.input_size = self.input_length = self.output_length = 0
        self.fft = None


@register
class SignalIrfft(Kernel):
    custom_name = "SignalIrfft"
    supported_types = ("float32", "int16", "int32")

    def sample_rows(self, block):
        """Every innermost row is transformed alone: samples stay apart unless the
        sample axis would become the innermost axis (a tensor of shape (1,))."""
        if not block.only_vary((0,)) or len(block.outputs) != 1:
            return False
        return all(len(t.shape) >= 2 or not block.merged(t) for t in (block.input(0), block.output(0)))

    def init(self, ctx, node):
        options = signal_options(ctx, node)
        fft_type = flex_map_int(options, "T")
        if fft_type not in KINDS:
            return None
        params = IrfftParams(fft_type, flex_element(options, 1))   # 'fft_length'
        ctx.allocate_persistent(ctx.sizeof("signal_irfft.TfLiteAudioFrontendIrfftParams"))
        kind = KINDS[fft_type][0]
        state = kiss_fftr_state_bytes(ctx, params.fft_length, kind)
        if kind == "float":
            state += ctx.sizeof("signal_irfft.IrfftFloatState")
        ctx.allocate_persistent(state & 0xFFFFFFFFFFFFFFFF)
        return params

    def prepare(self, ctx, node):
        params = node.user_data
        inp, out = fft_tensors(ctx, node, params)
        n = params.fft_length
        params.input_length = int(inp.shape[-1]) // 2
        params.input_size = int(np.prod(inp.shape, dtype=np.int64)) // 2
        params.output_length = int(out.shape[-1])
        if n & 1 or not supported_length(n // 2):
            raise ctx.error(f"fft_length {n} must be even with a half of radices 2, 3, 4, 5 "
                            "(TFLM's kiss build crashes otherwise)")
        if params.input_length < n // 2 + 1 or params.input_size % params.input_length:
            raise ctx.error(f"input rows must hold fft_length/2+1 = {n // 2 + 1} complex bins")
        rows = params.input_size // params.input_length
        if params.output_length < n or int(np.prod(out.shape, dtype=np.int64)) < rows * params.output_length:
            raise ctx.error(f"output {out.shape} must hold {rows} rows of {n} samples")
        params.fft = KissFftr(n, KINDS[params.fft_type][0], inverse=True)
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        p = node.user_data
        x = node.input_arrays[0].reshape(-1)[:2 * p.input_size].reshape(-1, 2 * p.input_length)
        bins = p.fft_length // 2 + 1
        y = p.fft.inverse_transform(x[:, 0:2 * bins:2], x[:, 1:2 * bins:2])
        if p.fft.kind == "float":
            y = y / np.float32(p.fft_length)
        out = node.output_arrays[0].reshape(-1)[:x.shape[0] * p.output_length]
        out = out.reshape(x.shape[0], p.output_length)
        out[:, :p.fft_length] = y
