"""SOFTMAX over the last axis: float32, int8 -> int8, int8 -> int16 and int16 -> int16,
as TFLM's reference kernels. Vectorised over rows (all rows at once).

* float32: row max, exp((x - max) * beta) with the C library's expf in float32 (glibc's;
  newlib's on Cortex-M, ``Target.libm``), a sequential
  float32 sum, then one float32 division per element.
* int8 input: gemmlowp fixed point. x - max is rescaled by beta * input_scale to Q5.26
  (differences below ``diff_min`` contribute nothing and give the output minimum),
  exp_on_negative_values gives Q0.31 exps, summed in Q12.19; GetReciprocal of the sum
  and a rounding shift give the output, offset by the type minimum (the output is
  fixed at scale 1/256, zero point -128 for int8, 1/65536 and -32768 for int16).
* int16: the 513-entry exp and 1/(1+x) tables TFLM builds in Prepare (two persistent
  int16 buffers), interpolated lookups, output scale 1/32768, zero points 0.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import same_shape_rows
from .internal.float_math import GLIBC, FloatMath, c_expf, math_for
from .internal.float_ops import sequential_extreme
from .internal.lut import LUT_INT16_SIZE, lut_lookup_int16, populate_int16_lut
from .internal.quantization import (calculate_input_radius, clip_into, count_leading_zeros_u32,
                           exp_on_negative_values,
                           get_reciprocal, multiply_by_quantized_multiplier,
                           multiply_by_quantized_multiplier_greater_than_one, quantize_multiplier,
                           rounding_divide_by_pot, saturating_rounding_doubling_high_mul, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, flat_size, type_name

_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12
_LUT_RANGE = 65535  # int16 max - int16 min
_F32_LOWEST = -np.finfo(np.float32).max
#: int8 softmax keeps the 256 outputs of at most this many sums of exps (row_outputs) ...
_ROW_OUTPUTS_KEPT = 1024
#: ... and reads them for a block whose rows have at most this many distinct sums (or a
#: quarter of the rows); else every row runs the vectorised routine
_FEW_SUMS = 64


class OpData:
    """TFLM's SoftmaxParams fields that the reference kernels use."""
    beta = 0.0
    input_multiplier = 0
    input_left_shift = 0
    diff_min = 0
    exp_lut = None
    one_over_one_plus_x_lut = None
    exp_table = None
    row_outputs = None   # host-side: sum of exps -> the 256 outputs of that row sum
    depth = 0
    #: int8 input: a rounding shift of 32 or more bits (rows with 512+ values near the
    #: maximum) shifts by its low 5 bits, as ESP-NN's C does on RISC-V and Xtensa; False:
    #: refused, as TFLM's reference aborts
    shift_mod_32 = False


def _near(a: float, b: float, epsilon: np.float32) -> bool:
    """TF_LITE_ENSURE_NEAR on floats: |a - b| <= epsilon in float32."""
    a, b = np.float32(a), np.float32(b)
    return bool((a - b if a > b else b - a) <= epsilon)


def _one_over_one_plus_x(x: np.ndarray) -> np.ndarray:
    one = np.float32(1.0)
    return one / (one + np.asarray(x, dtype=np.float32))


@register
class Softmax(Kernel):
    op = "SOFTMAX"
    supported_types = ("float32->float32", "int8->int8", "int8->int16", "int16->int16")

    def sample_rows(self, block):
        """Along the last axis, every other axis a row: samples stay apart."""
        return same_shape_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("softmax.SoftmaxParams"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.input(node, 0)
        if inp is None:
            raise ctx.error("needs an input tensor")
        if len(inp.shape) < 1:
            raise ctx.error("input must have at least one dimension")
        out = ctx.output(node, 0)
        if out is None:
            raise ctx.error("needs an output tensor")
        beta = np.float32(node.params.beta)
        # TFLM's InitializeLutForInt16: the two tables come first, for int16 inputs
        if inp.type == INT16:
            data.exp_lut = ctx.persistent_array(np.int16, LUT_INT16_SIZE)
            data.one_over_one_plus_x_lut = ctx.persistent_array(np.int16, LUT_INT16_SIZE)
        if out.type == INT16:
            if inp.type not in (INT8, INT16):
                raise ctx.error(f"int16 output needs an int8 or int16 input, not {type_name(inp.type)}")
        elif inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if inp.type == INT16:
            if out.zero_point != 0:
                raise ctx.error(f"int16 output zero point must be 0, got {out.zero_point}")
            data.exp_lut[:] = populate_int16_lut(
                np.float32(10.0) / np.float32(_LUT_RANGE), 32767,
                np.float32(2.0) / np.float32(_LUT_RANGE), 0, c_expf(ctx.target))
            data.one_over_one_plus_x_lut[:] = populate_int16_lut(
                np.float32(1.0) / np.float32(_LUT_RANGE), -32768,
                np.float32(2.0) / np.float32(_LUT_RANGE), 0, _one_over_one_plus_x)
        if inp.shape[-1:] != out.shape[-1:] or flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"output shape {out.shape} does not match input shape {inp.shape}")

        if inp.type in (INT8, INT16):
            self._check_output_quantization(ctx, inp, out)
            if inp.type == INT16:
                rescale = float(inp.scale) * float(beta) / (10.0 / 65535.0)
                data.input_multiplier, data.input_left_shift = quantize_multiplier(rescale)
            else:
                real = min(float(beta) * float(inp.scale) * float(1 << (31 - _SCALED_DIFF_INTEGER_BITS)),
                           float((1 << 31) - 1))
                if not real > 1.0:
                    raise ctx.error(f"beta * input scale ({float(beta)} * {inp.scale}) is too small: "
                                    "the input multiplier must exceed 2^-26")
                data.input_multiplier, data.input_left_shift = quantize_multiplier(real)
                data.diff_min = -calculate_input_radius(_SCALED_DIFF_INTEGER_BITS, data.input_left_shift)
                if inp.type == INT8:
                    data.exp_table = self._int8_exp_table(data)
                    data.row_outputs = {}
        elif inp.type == FLOAT32 and out.type == FLOAT32:
            data.beta = float(beta)
        else:
            raise ctx.error(f"Type {type_name(inp.type)} ({inp.type}) not supported.")
        data.depth = inp.shape[-1]
        ctx.release(inp, out)

    @staticmethod
    def _check_output_quantization(ctx, inp, out):
        if inp.type == INT16:
            if inp.zero_point != 0 or out.zero_point != 0:
                raise ctx.error("int16 softmax needs zero points of 0")
            if not _near(out.scale, np.float32(1.0) / np.float32(32768),
                         np.float32(0.001) / np.float32(32768)):
                raise ctx.error(f"int16 output scale must be 1/32768, got {out.scale}")
        elif out.type == INT16:
            if out.zero_point != -32768:
                raise ctx.error(f"int16 output zero point must be -32768, got {out.zero_point}")
            if not _near(out.scale, np.float32(1.0) / np.float32(65536),
                         np.float32(0.001) / np.float32(65536)):
                raise ctx.error(f"int16 output scale must be 1/65536, got {out.scale}")
        else:
            if out.zero_point != -128:
                raise ctx.error(f"int8 output zero point must be -128, got {out.zero_point}")
            if np.float32(out.scale) != np.float32(1.0) / np.float32(256):
                raise ctx.error(f"int8 output scale must be 1/256, got {out.scale}")

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        y = node.output_arrays[0]
        if x.size == 0:
            return
        rows = x.reshape(-1, data.depth)
        if x.dtype == np.float32:
            result = self._float(rows, data, math_for(ctx.target))
        elif x.dtype == np.int16:
            result = self._int16(rows, data)
        else:
            result = self._int8(ctx, rows, data, y.dtype)
        np.copyto(y, result.reshape(y.shape).astype(y.dtype, copy=False))

    @staticmethod
    def _float(rows: np.ndarray, data, math: FloatMath = GLIBC) -> np.ndarray:
        """``math``: the build's expf and float arithmetic (glibc / x86 by default;
        Cortex-M builds pass newlib / ARM soft-float: :func:`math_for`)."""
        # std::max from the lowest float: NaNs never win, -inf rows keep the lowest
        row_max = sequential_extreme(rows, 1, _F32_LOWEST, keepdims=True)
        with np.errstate(all="ignore"):
            exps = math.expf(math.mul(math.sub(rows, row_max), np.float32(data.beta)))
            total = math.row_sum(exps)[:, None]
            return math.div(exps, total)

    @staticmethod
    def _int8_exp_table(data) -> np.ndarray:
        """Host-side cache: for every possible int8 difference x - max (-255..0), the
        Q0.31 exp and its Q12.19 contribution to the sum (0 below diff_min), so invoke
        looks them up instead of evaluating the fixed-point exp per element."""
        diff = np.arange(-255, 1, dtype=np.int64)
        used = diff >= data.diff_min
        rescaled = multiply_by_quantized_multiplier_greater_than_one(
            np.where(used, diff, 0), data.input_multiplier, data.input_left_shift)
        exps = exp_on_negative_values(rescaled, _SCALED_DIFF_INTEGER_BITS)
        accumulated = np.where(used, rounding_divide_by_pot(exps, _ACCUMULATION_INTEGER_BITS), 0)
        return np.stack([exps, accumulated, used.astype(np.int64)])

    @staticmethod
    def _int8(ctx, rows: np.ndarray, data, out_dtype) -> np.ndarray:
        bits = np.dtype(out_dtype).itemsize * 8
        values = rows.astype(np.int64)
        index = values - values.max(axis=1, keepdims=True) + 255
        # every output is a function of its row's sum of exps and of its own table index:
        # when the rows have few distinct sums (one row in a single invoke; the two-class
        # softmax of a block), the 256 outputs of each sum are computed once by the
        # vectorised routine and kept per sum (row_outputs)
        if rows.shape[0] == 1:
            table = Softmax._outputs_by_sum(ctx, data, [int(data.exp_table[1, index[0]].sum())],
                                            bits)
            return table[0][index]
        totals = data.exp_table[1, index].sum(axis=1)
        sums, row_sum = np.unique(totals, return_inverse=True)
        if len(sums) <= max(_FEW_SUMS, rows.shape[0] // 4):
            table = Softmax._outputs_by_sum(ctx, data, sums.tolist(), bits)
            return table[row_sum.reshape(-1, 1), index]
        return Softmax._int8_outputs(ctx, data, index, totals[:, None], bits)

    @staticmethod
    def _outputs_by_sum(ctx, data, sums, bits: int) -> np.ndarray:
        """(len(sums), 256): the outputs of table indices 0..255 in a row whose
        accumulated exps sum to each of ``sums`` (Python ints), from the kept rows or,
        for sums not kept yet, all at once from :meth:`_int8_outputs`."""
        kept = data.row_outputs
        missing = [t for t in dict.fromkeys(sums) if t not in kept]
        rows = dict(kept) if missing else kept
        if missing:
            every = np.broadcast_to(np.arange(256, dtype=np.int64), (len(missing), 256))
            fresh = Softmax._int8_outputs(ctx, data, every, np.array(missing, np.int64)[:, None],
                                          bits).astype(np.int16)      # int8 / int16 outputs
            keep = len(missing) <= _ROW_OUTPUTS_KEPT
            if keep and len(kept) + len(missing) > _ROW_OUTPUTS_KEPT:
                kept.clear()
            for total, row in zip(missing, fresh):
                rows[total] = row
                if keep:
                    kept[total] = row
        return np.stack([rows[t] for t in sums])

    @staticmethod
    def _int8_outputs(ctx, data, index: np.ndarray, total: np.ndarray, bits: int) -> np.ndarray:
        """Outputs for table indices ``index`` (rows, n) of rows whose accumulated exps
        sum to ``total`` (rows, 1; int64, before the int32 wrap)."""
        out_min, out_max = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        exps, used = data.exp_table[0, index], data.exp_table[2, index].astype(bool)
        sum_of_exps = wrap_int32(total)
        if sum_of_exps.size == 1:
            # one row: the reciprocal on Python ints (same helpers, scalar path)
            scale, over = get_reciprocal(int(sum_of_exps[0, 0]), _ACCUMULATION_INTEGER_BITS)
            shifted_scale, exponent = np.int64(scale), int(over) + 31 - bits
            out_of_range = not 0 <= exponent <= 31
        else:
            shifted_scale, bits_over_unit = get_reciprocal(sum_of_exps, _ACCUMULATION_INTEGER_BITS)
            exponent = bits_over_unit + 31 - bits
            out_of_range = bool(((exponent < 0) | (exponent > 31)).any())
        if out_of_range and data.shift_mod_32:
            exponent = np.bitwise_and(exponent, 31) if not isinstance(exponent, int) else exponent & 31
        elif out_of_range:
            raise ctx.error(f"a row's sum of exponentials is too large for an {bits}-bit output "
                            "(TFLM aborts: an int8 output needs the sum below 512, i.e. fewer than 512 "
                            "values near the row maximum)")
        unsaturated = rounding_divide_by_pot(
            saturating_rounding_doubling_high_mul(shifted_scale, exps), exponent)
        result = clip_into(unsaturated + out_min, out_min, out_max)
        return np.where(used, result, out_min)

    @staticmethod
    def _int16(rows: np.ndarray, data) -> np.ndarray:
        values = rows.astype(np.int64)
        diff = values - values.max(axis=1, keepdims=True)
        scaled = multiply_by_quantized_multiplier(diff, data.input_multiplier, data.input_left_shift)
        exps = lut_lookup_int16(np.clip(scaled + 32767, -32768, 32767), data.exp_lut)
        sum_of_exps = wrap_int32(exps.sum(axis=1, keepdims=True))
        headroom_plus_one = count_leading_zeros_u32(sum_of_exps)
        shifted_sum = ((sum_of_exps << (headroom_plus_one - 1)) + (1 << 13)) >> 14
        recentred = np.clip(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767)
        reciprocal = lut_lookup_int16(recentred, data.one_over_one_plus_x_lut)
        right_shift = 31 - headroom_plus_one
        result = (exps * reciprocal + (np.int64(1) << (right_shift - 1))) >> right_shift
        return np.clip(result, 0, 32767)
