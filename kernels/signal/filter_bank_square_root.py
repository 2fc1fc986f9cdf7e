"""SignalFilterBankSquareRoot (TFLM signal library custom op): integer square root of
uint64 channels, shifted right by the scale bits input (int32 scalar), into uint32.

TFLM's Sqrt64: values below 2^32 use its 32-bit digit-by-digit root (result rounded up
when the remainder exceeds the root, except at 0xFFFF); larger values the 64-bit one
(rounding capped at 0xFFFFFFFF).
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import INT32, sample_shape, type_name, vector_rows
from ..internal.tensor_utils import TensorType


def _rounded_root(num: np.ndarray, cap: int) -> np.ndarray:
    """TFLM's digit-by-digit root of nonzero uint64 ``num`` and its final rounding.

    The digit-by-digit loop starts at the largest power of four <= num (the bit TFLM
    derives from the most significant bit), so it ends with the classic result: the
    floor root r = isqrt(num) and the remainder num - r^2. Here r comes from float64:
    sqrt(float64(num)) is within sqrt(num) 2^-54 + one rounding of the true root (< 2^-19
    for num < 2^64), so its floor is isqrt(num) or one off, fixed by one exact integer
    step each way (r < 2^32, so r^2 and the checks stay inside uint64). Then TFLM rounds
    up when the remainder exceeds r, except at ``cap``."""
    num = num.astype(np.uint64)
    one = np.uint64(1)
    root = np.minimum(np.floor(np.sqrt(num.astype(np.float64))), float(0xFFFFFFFF)).astype(np.uint64)
    root -= (root * root > num).astype(np.uint64)
    up = root + one
    root += ((root < np.uint64(0xFFFFFFFF)) & (up * up <= num)).astype(np.uint64)
    remainder = num - root * root
    root += ((remainder > root) & (root != np.uint64(cap))).astype(np.uint64)
    return root


def sqrt64(x: np.ndarray) -> np.ndarray:
    """TFLM's Sqrt64 of a uint64 array, as uint64 values < 2^32."""
    x = np.asarray(x, np.uint64).reshape(-1)
    out = np.zeros(x.shape, np.uint64)
    small = (x >> np.uint64(32)) == 0
    nz = small & (x != 0)
    if nz.any():
        out[nz] = _rounded_root(x[nz], 0xFFFF)
    big = ~small
    if big.any():
        out[big] = _rounded_root(x[big], 0xFFFFFFFF)
    return out


@register
class SignalFilterBankSquareRoot(Kernel):
    custom_name = "SignalFilterBankSquareRoot"
    supported_types = ("uint64->uint32",)

    def sample_rows(self, block):
        """One vector per sample, with its own scale bits when those vary too."""
        return vector_rows(block, (0, 1)) or vector_rows(block, (0,))

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error("needs 2 inputs and 1 output")
        inp = ctx.required_input(node, 0)
        scale = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        in_shape, out_shape = sample_shape(ctx, inp.shape), sample_shape(ctx, out.shape)
        scale_shape = tuple(scale.shape)
        if ctx.block_samples and scale.data is None and len(scale_shape) == 1:
            scale_shape = ()          # one scale per sample
        if len(in_shape) != 1 or len(scale_shape) != 0 or len(out_shape) != 1:
            raise ctx.error(f"input {inp.shape} and output {out.shape} must be 1-D and the "
                            f"scale bits {scale.shape} a scalar")
        if inp.type != TensorType.UINT64 or scale.type != INT32 or out.type != TensorType.UINT32:
            raise ctx.error(f"types {type_name(inp.type)}, {type_name(scale.type)}, "
                            f"{type_name(out.type)} must be uint64, int32, uint32")
        if out_shape[0] < in_shape[0]:
            raise ctx.error(f"output {out.shape} is shorter than the input {inp.shape}")
        ctx.release(inp, out, scale)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        bits = node.input_arrays[1]
        # one scale per row of x (a block's rows each have their own; else just one)
        bits = bits.reshape(-1)[:1] if bits.size == 1 or x.ndim == 1 else bits.reshape(-1)
        bad = (bits < 0) | (bits >= 32)
        if bad.any():
            raise ctx.error(f"scale bits {int(bits[bad][0])} must be in [0, 31]")
        root = sqrt64(x).reshape(-1, x.shape[-1]) >> bits.astype(np.uint64).reshape(-1, 1)
        node.output_arrays[0][..., :x.shape[-1]] = root.astype(np.uint32).reshape(x.shape)
