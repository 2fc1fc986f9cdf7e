"""SVDF as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/svdf.cc``: ``arm_svdf_s8``
for int8 time weights / state, ``arm_svdf_state_s16_s8`` for int16 ones; float32 runs
the reference kernel).

Allocations: OpData ``CmsisNnOpDataSvdf`` (the build's default
KERNELS_OPTIMIZED_FOR_SPEED layout); the reference kernel's scratch requests (batch x
filters and batch x units int32 for int8 inputs, batch x filters float32 for float);
on MVE cores (``arm_svdf_s8_get_buffer_size`` > 0) a persistent kernel-sum buffer of
one int32 per filter, computed in prepare from the constant feature weights (for int8
inputs, whichever the time weights' type).

Arithmetic against the reference kernel:

* the activation state's zero point is ignored: the newest state value is the
  requantised feature dot product clamped to the int16 range with no zero point added,
  stored in the state's type (an int8 state wraps instead of saturating), and the time
  dot products multiply raw state values;
* on MVE cores the feature dot product starts from the kernel sum
  (sum(w) - cols x state zero point) x (-input zero point), so a non-zero state zero
  point adds cols x state_zp x input_zp;
* everything else (state shift, rank reduction, bias, output requantisation) is the
  reference's; CMSIS-NN's requantisation equals TFLM's.
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.internal.matmul import exact_int_matmul
from kernels.internal.quantization import multiply_by_quantized_multiplier, wrap_int32
from kernels.internal.sample_rows import batch_axis_rows
from kernels.svdf import ACTIVATION_STATE, INPUT, OpData, Svdf

from .internal.kernel_sums import vector_sum_s8


class CmsisNnSvdfData(OpData):
    """CmsisNnOpDataSvdf (host-side form)."""
    kernel_sums = None          # MVE: persistent int32 per filter
    mve = False


@register_variant("cmsis-nn")
class CmsisNnSvdf(Svdf):
    op = "SVDF"
    supported_types = ("float32", "int8 (time weights and state int16 or int8)")
    weights_input = 1

    def sample_rows(self, block):
        """Batch rows are independent, the activation state one row per batch (the
        sample axis replaces the unit batch axis of the input, state and output):
        ``arm_svdf_s8`` / ``arm_svdf_state_s16_s8`` shift the whole state buffer by one
        value (moving a value across rows into the newest slot of the row before, which
        the feature product then overwrites) and compute every batch row on its own;
        MVE's kernel sums come from the feature weights alone. Each block row starts
        from the reset state, as each sample does."""
        return batch_axis_rows(block, (INPUT, ACTIVATION_STATE))

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.svdf.CmsisNnOpDataSvdf"))
        return CmsisNnSvdfData()

    def _prepare_int8(self, ctx, data, inp, wf, wt, bias, state, out,
                      batch_size, num_filters, num_units):
        super()._prepare_int8(ctx, data, inp, wf, wt, bias, state, out,
                              batch_size, num_filters, num_units)
        data.mve = bool(ctx.target.mve)
        if data.mve:     # arm_svdf_s8_get_buffer_size: num_filters x int32 on MVE only
            if not wf.is_constant:
                raise ctx.error("the feature weights must be a constant tensor")
            sums = ctx.persistent_array(np.int32, num_filters, written=True)
            weights = np.asarray(wf.data, np.int64).reshape(num_filters, -1)
            sums[...] = vector_sum_s8(weights, -int(inp.zero_point), None,
                                      rhs_offset=-int(state.zero_point))
            data.kernel_sums = sums

    def _invoke_int8(self, data, x, mem, out, uniform=None):
        if data.mve:
            dot = exact_int_matmul(x.astype(np.float64), data.weights_feature, check=False)
            dot = wrap_int32(dot + data.kernel_sums)
        else:
            xin = x.astype(np.float64) - data.input_zero_point
            dot = wrap_int32(exact_int_matmul(xin, data.weights_feature, check=False))
        dot = multiply_by_quantized_multiplier(dot, data.effective_scale_1_a,
                                               data.effective_scale_1_b)
        newest = np.minimum(np.maximum(dot, -32768), 32767)
        np.copyto(mem[:, :, -1], newest, casting="unsafe")   # int8 states wrap
        if uniform is None:
            sums = np.einsum("bfm,fm->bf", mem.astype(np.int64), data.weights_time)
        else:
            # a block from the reset state: every slot but the newest holds ``uniform``
            # (the same exact int64 sum, without the memory axis)
            sums = mem[:, :, -1].astype(np.int64) * data.weights_time_last
            sums += uniform * data.weights_time_head
        sums = wrap_int32(sums)
        units = sums.reshape(data.batch_size, data.num_units, data.rank).sum(axis=2)
        acc = wrap_int32(units + data.bias)
        acc = multiply_by_quantized_multiplier(acc, data.effective_scale_2_a,
                                               data.effective_scale_2_b)
        acc += data.output_zero_point
        np.copyto(out.reshape(data.batch_size, data.num_units),
                  np.minimum(np.maximum(acc, -128), 127), casting="unsafe")
