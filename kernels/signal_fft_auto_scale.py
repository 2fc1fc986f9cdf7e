"""SignalFftAutoScale (TFLM signal library custom op): scale an int16 frame up so its
largest magnitude uses the int16 range before a fixed-point FFT.

Output 1 is ``scale_bits = 15 - msb(max_abs)`` (at least 0) and output 0 is
``input * 2^scale_bits`` truncated to int16. The maximum magnitude is TFLM's running
MaxAbs16 in int16: -32768 has no int16 magnitude, so after it the running value turns
negative (-32768, then the next sample itself while samples keep rising below zero) and
msb of a negative (sign-extended) value is 32, i.e. no scaling.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .signal_common import INT16, INT32, msb32, type_name


def max_abs16(x: np.ndarray) -> int:
    """TFLM's MaxAbs16 (the portable loop) over an int16 vector."""
    x = np.asarray(x, np.int64).reshape(-1)
    hits = np.flatnonzero(x == -32768)
    if hits.size == 0:
        return int(np.abs(x).max(initial=0))
    rest = x[hits[-1] + 1:]
    if rest.size == 0:
        return -32768
    # running value is negative while the samples keep rising below zero
    rising = np.ones(rest.size, bool)
    rising[1:] = rest[1:] > rest[:-1]
    chain = (rest < 0) & rising
    breaks = np.flatnonzero(~chain)
    if breaks.size == 0:
        return int(rest[-1])
    j = int(breaks[0])
    if j == 0:
        return int(max(np.abs(rest).max(), 0))
    return int(np.abs(rest[j:]).max())


def fft_auto_scale(x: np.ndarray):
    """(scaled int16 vector, scale_bits)."""
    m = max_abs16(x)
    bits = 16 - int(msb32(np.uint32(m & 0xFFFFFFFF))) - 1
    bits = max(bits, 0)
    y = (np.asarray(x, np.int64) * (1 << bits)).astype(np.int16)
    return y, bits


@register
class SignalFftAutoScale(Kernel):
    custom_name = "SignalFftAutoScale"

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 2:
            raise ctx.error("needs 1 input and 2 outputs")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        scale = ctx.required_output(node, 1)
        if len(inp.shape) != 1 or len(out.shape) != 1 or len(scale.shape) != 0:
            raise ctx.error(f"input {inp.shape} and output {out.shape} must be 1-D and the "
                            f"scale bits {scale.shape} a scalar")
        if inp.type != INT16 or out.type != INT16 or scale.type != INT32:
            raise ctx.error(f"types {type_name(inp.type)}, {type_name(out.type)}, "
                            f"{type_name(scale.type)} must be int16, int16, int32")
        if out.shape[0] > inp.shape[0]:
            raise ctx.error(f"output length {out.shape[0]} exceeds input length {inp.shape[0]}")
        ctx.release(scale, inp, out)

    def invoke(self, ctx, node):
        out = node.output_arrays[0]
        n = out.shape[0]
        y, bits = fft_auto_scale(node.input_arrays[0][:n])
        out[...] = y
        node.output_arrays[1][...] = bits
