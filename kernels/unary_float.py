"""float32-only element-wise kernels with one TFLM source each: NEG, EXP, FLOOR, CEIL
and ROUND.

* NEG and FLOOR have no Prepare in TFLM (nothing allocated, not even temporary tensors):
  the checks here read the tensors' specs. Eval negates (sign bit flipped, NaNs too) or
  takes ``std::floor`` (glibc's floorf / ceilf return NaNs untouched, signalling ones
  included).
* EXP, CEIL and ROUND check in Prepare (temporary tensors) that input and output are
  float32 with identical shapes. EXP is glibc's ``expf`` (:mod:`kernels.internal.libm_float`),
  CEIL ``std::ceil``, ROUND TFLM's RoundToNearest: floor(x), then + 1 when
  x - floor(x) > 0.5 or when it is 0.5 and the floor is odd (banker's rounding, in
  float32; -0.3 gives +0, NaN stays NaN, +-inf stay +-inf).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.float_math import c_expf
from .internal.libm_float import expf
from .internal.tensor_utils import FLOAT32, flat_size, type_name

_F32 = np.float32


def _check_specs(ctx, node):
    """Checks of the kernels without a Prepare: one float32 input and output with as
    many elements (TFLM would read or write past the buffers otherwise)."""
    ctx.check_counts(node, 1, 1)
    inp = ctx.eval_tensor(node.inputs[0]).spec
    out = ctx.eval_tensor(node.outputs[0]).spec
    if inp.type != FLOAT32:
        raise ctx.error(f"Type {type_name(inp.type)} ({inp.type}) not supported.")
    if out.type != FLOAT32:
        raise ctx.error(f"output type {type_name(out.type)} must be FLOAT32")
    if flat_size(inp.shape) != flat_size(out.shape):
        raise ctx.error(f"output shape {tuple(out.shape)} does not match input shape {tuple(inp.shape)}")


def _check_temps(ctx, node, check_counts_first: bool):
    """EXP / CEIL / ROUND Prepare: float32 in and out, same bytes and dims."""
    if check_counts_first and (len(node.inputs) != 1 or len(node.outputs) != 1):
        raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
    inp = ctx.required_input(node, 0, "the input tensor")
    out = ctx.required_output(node, 0, "the output tensor")
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
    if inp.type != FLOAT32:
        raise ctx.error(f"input type {type_name(inp.type)} is not supported (FLOAT32 only)")
    if out.type != inp.type:
        raise ctx.error(f"output type {type_name(out.type)} differs from the input's {type_name(inp.type)}")
    if tuple(out.shape) != tuple(inp.shape):
        raise ctx.error(f"output shape {tuple(out.shape)} differs from input shape {tuple(inp.shape)}")
    ctx.release(inp, out)


class _Unary(Kernel):

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)
    def invoke(self, ctx, node):
        x = np.asarray(node.input_arrays[0], dtype=_F32)
        y = node.output_arrays[0]
        with np.errstate(all="ignore"):
            result = self.compute(x)
        np.copyto(y, np.asarray(result, dtype=_F32).reshape(y.shape))


@register
class Neg(_Unary):
    op = "NEG"
    supported_types = ("float32",)

    def prepare(self, ctx, node):
        _check_specs(ctx, node)

    @staticmethod
    def compute(x):
        return np.negative(x)


@register
class Floor(_Unary):
    op = "FLOOR"
    supported_types = ("float32",)

    def prepare(self, ctx, node):
        _check_specs(ctx, node)

    @staticmethod
    def compute(x):
        return np.where(np.isnan(x), x, np.floor(x))   # floorf returns NaNs untouched


@register
class Exp(_Unary):
    op = "EXP"
    supported_types = ("float32",)

    def prepare(self, ctx, node):
        _check_temps(ctx, node, check_counts_first=True)

    @staticmethod
    def compute(x, exp=expf):
        return exp(x)

    def invoke(self, ctx, node):
        """The C library's expf of the target's build (glibc's, newlib's on Cortex-M)."""
        x = np.asarray(node.input_arrays[0], dtype=_F32)
        y = node.output_arrays[0]
        with np.errstate(all="ignore"):
            result = self.compute(x, c_expf(ctx.target))
        np.copyto(y, np.asarray(result, dtype=_F32).reshape(y.shape))


@register
class Ceil(_Unary):
    op = "CEIL"
    supported_types = ("float32",)

    def prepare(self, ctx, node):
        _check_temps(ctx, node, check_counts_first=False)

    @staticmethod
    def compute(x):
        return np.where(np.isnan(x), x, np.ceil(x))    # ceilf returns NaNs untouched


def round_to_nearest(x: np.ndarray) -> np.ndarray:
    """TFLM's RoundToNearest on float32 values (float32 arithmetic)."""
    floor = np.floor(x)
    diff = x - floor
    # (int)floor % 2 == 0 only matters when diff == 0.5, i.e. |x| < 2^23
    small = np.where(np.abs(floor) < _F32(2 ** 30), floor, _F32(0.0))
    even = (small.astype(np.int64) % 2) == 0
    keep = (diff < _F32(0.5)) | ((diff == _F32(0.5)) & even)
    return np.where(keep, floor, floor + _F32(1.0))


@register
class Round(_Unary):
    op = "ROUND"
    supported_types = ("float32",)

    def prepare(self, ctx, node):
        _check_temps(ctx, node, check_counts_first=False)

    @staticmethod
    def compute(x):
        return round_to_nearest(x)
