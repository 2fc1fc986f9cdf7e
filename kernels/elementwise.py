"""The element-wise math kernels of TFLM's elementwise.cc: ABS, RSQRT, SIN, COS, LOG,
SQRT and SQUARE.

* SIN, COS, LOG, SQRT, SQUARE: float32 only, no OpData. The C library's ``sinf`` /
  ``cosf`` / ``logf`` (glibc's; newlib's on Cortex-M: :mod:`kernels.internal.float_math`),
  ``sqrtf`` (IEEE, exact) and a
  float32 ``x * x``.
* ABS (OpDataAbsRsqrt): float32 ``fabsf``; int8 (and int16 with quantization, zero
  points 0): |x - input zero point| requantised by input scale / output scale
  (QuantizeMultiplier of a double quotient; a float32 one on Cortex-M targets, as TFLM
  90b983c2's source) when the scales differ, plus the output zero point, clamped;
  int16 without quantization: a plain ``std::abs`` (so -32768 stays -32768).
* RSQRT (OpDataAbsRsqrt): float32 ``1.f / sqrtf(x)``; int8 and int16 (the package's
  kernel runs int16; quantized int16 needs zero points 0): x - input zero point must
  be >= 0 (Eval fails otherwise), 0 gives the type's maximum, else TFLM's fixed-point
  inverse square root (GetInvSqrtQuantizedMultiplierExp) taken to 2^20 and requantised
  by 1 / (sqrt(input scale) * output scale), all in double as the package computes it
  (Cortex-M targets: the square root and product in float32, as TFLM 90b983c2's
  source). Any scales run (no range check; shifts as the CPU evaluates them), as in
  TFLM. int16 without quantization is refused (TFLM's kernel would compute with a
  multiplier it never sets).

The int8 and int16 paths evaluate their exact integer function once on all 256 / 65536
inputs in Prepare (a host-side table) and index it in Invoke.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import flat_elementwise_rows
from .internal.float_math import math_for
from .internal.lut import apply_int8_table, apply_int16_table, int8_table, int16_table
from .internal.quantization import (get_inv_sqrt_quantized_multiplier_exp, ieee_div,
                                    multiply_by_quantized_multiplier, quantize_multiplier)
from .internal.tensor_utils import FLOAT32, INT8, INT16, flat_size, type_name

_F32 = np.float32


def _check_unary(ctx, node, supported):
    """TFLM's GenericPrepare / PrepareAbsRsqrt checks: one input and one output of the
    same supported type (and, since Eval walks the input's elements, as many output
    elements). Returns the (unreleased) temp tensors."""
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
    inp = ctx.required_input(node, 0, "the input tensor")
    out = ctx.required_output(node, 0, "the output tensor")
    if inp.type != out.type:
        raise ctx.error(f"input type {type_name(inp.type)} and output type {type_name(out.type)} differ")
    if inp.type not in supported:
        raise ctx.error(f"Input data type {type_name(inp.type)} ({inp.type}) is not supported.")
    if flat_size(inp.shape) != flat_size(out.shape):
        raise ctx.error(f"output shape {tuple(out.shape)} does not match input shape {tuple(inp.shape)}")
    return inp, out


class _FloatUnary(Kernel):
    """A float32-only element-wise kernel with no OpData (GenericPrepare); ``libm``: the
    name of the C library function it calls (a :class:`~kernels.internal.float_math.FloatMath`
    field), else ``fn``."""
    fn = None
    libm = None

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def prepare(self, ctx, node):
        inp, out = _check_unary(ctx, node, (FLOAT32,))
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        with np.errstate(all="ignore"):
            fn = getattr(math_for(ctx.target), self.libm) if self.libm else type(self).fn
            result = fn(np.asarray(x, dtype=_F32))
        np.copyto(y, np.asarray(result, dtype=_F32).reshape(y.shape))


@register
class Sin(_FloatUnary):
    op = "SIN"
    supported_types = ("float32",)
    libm = "sinf"


@register
class Cos(_FloatUnary):
    op = "COS"
    supported_types = ("float32",)
    libm = "cosf"


@register
class Log(_FloatUnary):
    op = "LOG"
    supported_types = ("float32",)
    libm = "logf"


@register
class Sqrt(_FloatUnary):
    op = "SQRT"
    supported_types = ("float32",)
    libm = "sqrtf"


@register
class Square(_FloatUnary):
    op = "SQUARE"
    supported_types = ("float32",)
    fn = staticmethod(lambda x: x * x)


class OpDataAbsRsqrt:
    """TFLM's OpDataAbsRsqrt, plus the host-side int8 table."""
    multiplier = 0
    shift = 0
    input_offset = 0
    output_offset = 0
    needs_rescale = False
    quantized = False       # input_quantization_type != kTfLiteNoQuantization
    input_type = None
    table = None


class _AbsRsqrt(Kernel):
    supported = ()
    is_abs = False

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("elementwise.OpDataAbsRsqrt"))
        return OpDataAbsRsqrt()

    def prepare(self, ctx, node):
        data = node.user_data
        inp, out = _check_unary(ctx, node, self.supported)
        data.input_type = inp.type
        data.quantized = inp.quantization is not None
        if inp.type == INT8 or (inp.type == INT16 and data.quantized):
            if inp.quantization is None or out.quantization is None:
                raise ctx.error(f"{type_name(inp.type)} input and output need affine quantization")
            data.input_offset = inp.zero_point
            data.output_offset = out.zero_point
            if inp.type == INT16 and (data.input_offset != 0 or data.output_offset != 0):
                raise ctx.error("int16 zero points must be 0, got "
                                f"{data.input_offset} and {data.output_offset}")
            in_scale, out_scale = _F32(inp.scale), _F32(out.scale)
            data.needs_rescale = bool(in_scale != out_scale)
            self._quantized_prepare(ctx, data, in_scale, out_scale)
        ctx.release(inp, out)


@register
class Abs(_AbsRsqrt):
    op = "ABS"
    supported_types = ("float32", "int8", "int16")
    supported = (FLOAT32, INT8, INT16)

    def _quantized_prepare(self, ctx, data, in_scale, out_scale):
        if data.needs_rescale:
            # TFLM has no range check here: QuantizeMultiplier and the requantisation
            # follow C at every ratio (a huge one shifts as the CPU does). The quotient:
            # in double in the package's build, a float32 one widened to double in the
            # 2026-08 source (Cortex-M targets: Target.float32_expressions)
            ftype = np.float32 if ctx.target.float32_expressions else np.float64
            with np.errstate(all="ignore"):
                ratio = float(ftype(in_scale) / ftype(out_scale))
            try:
                data.multiplier, data.shift = quantize_multiplier(ratio)
            except ValueError as e:
                raise ctx.error(str(e)) from None
        if data.input_type == INT8:
            data.table = int8_table(lambda v: self._abs_quantized(v, data, -128, 127))

    @staticmethod
    def _abs_quantized(x, data, lo, hi):
        value = np.abs(x.astype(np.int64) - data.input_offset)
        if data.needs_rescale:
            value = multiply_by_quantized_multiplier(value, data.multiplier, data.shift)
        return np.clip(value + data.output_offset, lo, hi)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if data.input_type == FLOAT32:
            result = np.abs(x)
        elif data.input_type == INT8:
            result = apply_int8_table(data.table, x)
        elif not data.quantized:
            result = np.abs(x)                          # int16 wraps: |-32768| = -32768
        else:
            result = self._abs_quantized(x, data, -32768, 32767)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))


_RSQRT_SHIFT = 20


@register
class Rsqrt(_AbsRsqrt):
    op = "RSQRT"
    supported_types = ("float32", "int8", "int16")
    supported = (FLOAT32, INT8, INT16)

    def _quantized_prepare(self, ctx, data, in_scale, out_scale):
        # TFLM checks nothing here. The package's build takes the square root and the
        # product in double (the float32 scales widened first), the 2026-08 source
        # (Cortex-M targets: Target.float32_expressions) in float32; the reciprocal is
        # double in both (a product of 0 gives inf, a negative scale nan), then
        # QuantizeMultiplier as C and the requantisation shifts as the CPU evaluates them
        ftype = np.float32 if ctx.target.float32_expressions else np.float64
        with np.errstate(all="ignore"):
            product = np.sqrt(ftype(in_scale)) * ftype(out_scale)
        try:
            data.multiplier, data.shift = quantize_multiplier(ieee_div(1.0, product))
        except ValueError as e:
            raise ctx.error(str(e)) from None
        self._tabulate(data)

    @staticmethod
    def _tabulate(data):
        if data.input_type == INT8:
            data.table = int8_table(lambda v: Rsqrt._rsqrt_quantized(v, data, -128, 127))
        else:
            data.table = int16_table(lambda v: Rsqrt._rsqrt_quantized(v, data, -32768, 32767),
                                     np.int16)

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        if node.user_data.input_type == INT16 and not node.user_data.quantized:
            raise ctx.error("int16 RSQRT needs quantized tensors: without, TFLM's kernel "
                            "computes with a multiplier it never sets")

    @staticmethod
    def _rsqrt_quantized(x, data, lo: int, hi: int):
        value = x.astype(np.int64) - data.input_offset
        inv_mult, inv_shift = get_inv_sqrt_quantized_multiplier_exp(np.maximum(value, 0), -1)
        scaled = multiply_by_quantized_multiplier(np.ones_like(value), inv_mult, inv_shift + _RSQRT_SHIFT)
        out = multiply_by_quantized_multiplier(scaled, data.multiplier, data.shift - _RSQRT_SHIFT)
        out = np.clip(out + data.output_offset, lo, hi)
        return np.where(value == 0, hi, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if data.input_type == FLOAT32:
            with np.errstate(all="ignore"):
                result = _F32(1.0) / math_for(ctx.target).sqrtf(x)
        else:
            if x.size and int(x.min()) < data.input_offset:
                raise ctx.error("Rsqrt is only defined for positive values")
            lookup = apply_int8_table if data.input_type == INT8 else apply_int16_table
            result = lookup(data.table, x)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))
