"""SignalRfft (TFLM signal library custom op): real FFT of every innermost row, zero-
padded to ``fft_length``, with kiss FFT (kernels/kiss_fft.py) in the build of the tensor
type: int16 (FIXED_POINT 16), int32 (FIXED_POINT 32) or float32.

Custom options: ``T`` (looked up by name: the tensor type, selecting the build) and
``fft_length`` (element 1). Output rows hold fft_length/2+1 (real, imag) pairs.

Arena: the params struct and the kiss_fftr state (its struct, the complex sub-FFT state
with fft_length/2 twiddles, then 3/4 fft_length complex for the split's buffer and
twiddles) are persistent; one scratch buffer of fft_length scalars per node.

Refused although TFLM's prepare accepts them (TFLM then crashes or writes out of
bounds): odd lengths, lengths whose half needs a radix other than 2, 3, 4 or 5, rows
longer than fft_length, output rows shorter than fft_length/2+1 pairs, and output
tensors with fewer rows than the input.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.kiss_fft import KissFftr, supported_length
from ..internal.signal_common import fft_tensors, flex_element, flex_map_int, signal_options
from ..internal.tensor_utils import FLOAT32, INT16, INT32

# schema TensorType -> (kiss build, itemsize)
KINDS = {INT16: ("int16", 2), INT32: ("int32", 4), FLOAT32: ("float", 4)}


def kiss_fftr_state_bytes(ctx, fft_length: int, kind: str) -> int:
    """kiss_fftr_alloc's memory need (0 for an odd length: TFLM then gets no state)."""
    if fft_length & 1:
        return 0
    ncfft = fft_length >> 1
    cpx = 4 if kind == "int16" else 8
    state = ctx.sizeof("kiss_fft.kiss_fft_state_int16" if kind == "int16"
                       else "kiss_fft.kiss_fft_state_int32")
    subsize = state + cpx * (ncfft - 1)
    return ctx.sizeof("kiss_fft.kiss_fftr_state") + subsize + cpx * (ncfft * 3 // 2)


class RfftParams:
    """TFLM's TfLiteAudioFrontendRfftParams plus the host-side transform."""

    def __init__(self, fft_type, fft_length):
        self.fft_type = fft_type
        self.fft_length = fft_length
        self.input_size = self.input_length = self.output_length = 0
        self.scratch_buffer_index = -1
        self.fft = None


@register
class SignalRfft(Kernel):
    custom_name = "SignalRfft"
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
            return None                      # TFLM returns no params (and later crashes)
        params = RfftParams(fft_type, flex_element(options, 1))   # 'fft_length'
        ctx.allocate_persistent(ctx.sizeof("signal_rfft.TfLiteAudioFrontendRfftParams"))
        ctx.allocate_persistent(kiss_fftr_state_bytes(ctx, params.fft_length, KINDS[fft_type][0])
                                 & 0xFFFFFFFFFFFFFFFF)   # size_t
        return params

    def prepare(self, ctx, node):
        params = node.user_data
        inp, out = fft_tensors(ctx, node, params)
        n = params.fft_length
        params.input_length = int(inp.shape[-1])
        params.input_size = int(np.prod(inp.shape, dtype=np.int64))
        params.output_length = int(out.shape[-1]) // 2
        kind, itemsize = KINDS[params.fft_type]
        if n & 1 or not supported_length(n // 2):
            raise ctx.error(f"fft_length {n} must be even with a half of radices 2, 3, 4, 5 "
                            "(TFLM's kiss build crashes otherwise)")
        if params.input_length > n or params.input_length <= 0:
            raise ctx.error(f"input rows of {params.input_length} must be in [1, fft_length {n}]")
        rows = params.input_size // params.input_length
        if params.output_length < n // 2 + 1 or int(np.prod(out.shape, dtype=np.int64)) < rows * 2 * params.output_length:
            raise ctx.error(f"output {out.shape} must hold {rows} rows of {n // 2 + 1} complex bins")
        params.scratch_buffer_index = ctx.request_scratch(n * itemsize)
        params.fft = KissFftr(n, kind)
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        p = node.user_data
        x = node.input_arrays[0].reshape(-1)[:p.input_size].reshape(-1, p.input_length)
        frames = np.zeros((x.shape[0], p.fft_length), x.dtype)
        frames[:, :p.input_length] = x
        re, im = p.fft.forward(frames)
        bins = p.fft_length // 2 + 1
        y = node.output_arrays[0].reshape(-1)[:x.shape[0] * 2 * p.output_length]
        y = y.reshape(x.shape[0], 2 * p.output_length)
        y[:, 0:2 * bins:2] = re
        y[:, 1:2 * bins:2] = im
