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

from ..base import Kernel, register
from ..internal.signal_common import INT16, INT32, msb32, sample_shape, type_name, vector_rows


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
    y, bits = fft_auto_scale_rows(np.asarray(x).reshape(1, -1))
    return y.reshape(np.shape(x)), int(bits[0])


def fft_auto_scale_rows(x: np.ndarray):
    """:func:`fft_auto_scale` of every row of a 2-D int16 array: (scaled rows, scale_bits
    per row). Rows holding -32768 take TFLM's running MaxAbs16; the others' maximum
    magnitude is the plain one."""
    values = np.asarray(x, np.int64)
    m = np.abs(values).max(axis=1, initial=0)
    for r in np.flatnonzero((values == -32768).any(axis=1)):
        m[r] = max_abs16(values[r])
    bits = np.maximum(15 - msb32((m & 0xFFFFFFFF).astype(np.uint32)).astype(np.int64), 0)
    return (values << bits[:, None]).astype(np.int16), bits


@register
class SignalFftAutoScale(Kernel):
    custom_name = "SignalFftAutoScale"
    supported_types = ("int16",)

    def sample_rows(self, block):
        """One frame per sample, each scaled by its own maximum."""
        return vector_rows(block, (0,))

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 2:
            raise ctx.error("needs 1 input and 2 outputs")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        scale = ctx.required_output(node, 1)
        in_shape, out_shape = sample_shape(ctx, inp.shape), sample_shape(ctx, out.shape)
        scale_shape = sample_shape(ctx, scale.shape)
        if len(in_shape) != 1 or len(out_shape) != 1 or len(scale_shape) != 0:
            raise ctx.error(f"input {inp.shape} and output {out.shape} must be 1-D and the "
                            f"scale bits {scale.shape} a scalar")
        if inp.type != INT16 or out.type != INT16 or scale.type != INT32:
            raise ctx.error(f"types {type_name(inp.type)}, {type_name(out.type)}, "
                            f"{type_name(scale.type)} must be int16, int16, int32")
        if out_shape[0] > in_shape[0]:
            raise ctx.error(f"output length {out_shape[0]} exceeds input length {in_shape[0]}")
        ctx.release(scale, inp, out)

    def invoke(self, ctx, node):
        out = node.output_arrays[0]
        n = out.shape[-1]
        rows = node.input_arrays[0][..., :n].reshape(-1, n)
        y, bits = fft_auto_scale_rows(rows)
        out[...] = y.reshape(out.shape)
        node.output_arrays[1][...] = bits.reshape(node.output_arrays[1].shape)
