"""LOG_SOFTMAX over the last axis: float32 and int8, as TFLM's reference kernels.

* float32: per row, max (starting from the lowest float, NaNs skipped), a sequential
  float32 sum of the C library's ``expf(x - max)`` (glibc's; newlib's on Cortex-M), its
  ``logf`` of the sum, then
  (x - max) - log_sum in float32.
* int8 (LogSoftmaxOpData, allocated in Prepare for int8 only): the output is fixed at
  scale 16/256 and zero point 127. x - row max is rescaled to Q5.26 (beta 1 * input
  scale), gemmlowp exp_on_negative_values summed in Q12.19 (differences below diff_min
  skipped), TFLM's fixed-point log gives log_sum in Q5.26; elements above the adjusted
  threshold output (diff_q5 - log_sum) / 2^22 rounded + 127, clamped; the rest -128.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import same_shape_rows
from .internal.float_math import FloatMath, math_for
from .internal.float_ops import sequential_extreme
from .internal.quantization import (INT32_MIN, calculate_input_radius, exp_on_negative_values,
                           log_x_for_x_greater_than_or_equal_to_1, multiply_by_quantized_multiplier,
                           preprocess_log_softmax_scaling_exp, rounding_divide_by_pot, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, type_name

_F32 = np.float32
_OUTPUT_SCALE = _F32(16.0 / 256)
_OUTPUT_ZERO_POINT = 127
_INPUT_INTEGER_BITS = 5
_ACCUM_INTEGER_BITS = 12
_OUTPUT_INTEGER_BITS = 4


class LogSoftmaxOpData:
    input_multiplier = 0
    input_left_shift = 0
    reverse_scaling_divisor = 0
    reverse_scaling_right_shift = 0
    diff_min = 0


@register
class LogSoftmax(Kernel):
    op = "LOG_SOFTMAX"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Along the last axis, every other axis a row: samples stay apart."""
        return same_shape_rows(block)

    def init(self, ctx, node):
        return LogSoftmaxOpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type {type_name(out.type)} differ")
        if tuple(inp.shape) != tuple(out.shape):
            raise ctx.error(f"output shape {tuple(out.shape)} differs from input shape {tuple(inp.shape)}")
        if inp.type not in (FLOAT32, INT8):
            raise ctx.error(f"LOG_SOFTMAX only supports float32, int8, got {type_name(inp.type)}.")
        if len(inp.shape) == 0:
            raise ctx.error("input must have at least one dimension")
        if inp.type == INT8:
            ctx.allocate_persistent(ctx.sizeof("log_softmax.LogSoftmaxOpData"))
            if _F32(out.scale) != _OUTPUT_SCALE:
                raise ctx.error(f"int8 output scale must be 16/256, got {out.scale}")
            if out.zero_point != _OUTPUT_ZERO_POINT:
                raise ctx.error(f"int8 output zero point must be 127, got {out.zero_point}")
            try:
                (data.input_multiplier, data.input_left_shift, data.reverse_scaling_divisor,
                 reverse_left_shift) = preprocess_log_softmax_scaling_exp(
                    1.0, float(_F32(inp.scale)), _INPUT_INTEGER_BITS)
            except ValueError as e:
                raise ctx.error(f"input scale {inp.scale} is out of range: {e}") from None
            data.reverse_scaling_right_shift = -reverse_left_shift
            data.diff_min = -calculate_input_radius(_INPUT_INTEGER_BITS, data.input_left_shift)
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        depth = x.shape[-1]
        rows = x.reshape(-1, depth)
        if x.dtype == np.float32:
            result = self._float(rows, math_for(ctx.target))
        else:
            result = self._int8(rows, data)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype))

    @staticmethod
    def _float(rows, math: FloatMath):
        with np.errstate(all="ignore"):
            row_max = sequential_extreme(rows, 1, -np.finfo(_F32).max)
            shifted = math.sub(rows, row_max[:, None])
            log_sum = math.logf(math.row_sum(math.expf(shifted)))
            return math.sub(shifted, log_sum[:, None])

    @staticmethod
    def _int8(rows, data):
        diff = rows.astype(np.int64) - rows.max(axis=1, initial=-128).astype(np.int64)[:, None]
        q5 = multiply_by_quantized_multiplier(diff, data.input_multiplier, data.input_left_shift)
        exps = rounding_divide_by_pot(exp_on_negative_values(q5, _INPUT_INTEGER_BITS), _ACCUM_INTEGER_BITS)
        total = wrap_int32(np.where(diff >= data.diff_min, exps, 0).sum(axis=1))
        log_sum = log_x_for_x_greater_than_or_equal_to_1(total, _INPUT_INTEGER_BITS, _ACCUM_INTEGER_BITS)
        shifted_log_sum = wrap_int32(log_sum + INT32_MIN)
        adjusted = np.maximum(data.diff_min - 1, multiply_by_quantized_multiplier(
            shifted_log_sum, data.reverse_scaling_divisor, -data.reverse_scaling_right_shift))
        out = rounding_divide_by_pot(wrap_int32(q5 - log_sum[:, None]),
                                     31 - _INPUT_INTEGER_BITS - _OUTPUT_INTEGER_BITS) + 127
        return np.where(diff > adjusted[:, None], np.clip(out, -128, 127), -128)
