"""DEPTHWISE_CONV_2D as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/depthwise_conv.cc``
with ``arm_depthwise_conv_wrapper_s8`` / ``_s4`` and ``arm_depthwise_conv_s16``).

Prepare makes the reference kernel's checks (the reference Prepare runs under the
CMSIS-NN allocation rules, see :mod:`kernels.cmsis_nn.internal.prepare`) and allocates:

* OpData: the reference OpDataConv plus a scratch-buffer index;
* per-channel multiplier and shift arrays for int8 and int16 inputs only;
* int8 inputs: one scratch buffer of ``arm_depthwise_conv_wrapper_s8_get_buffer_size``
  (int8 weights) or ``arm_depthwise_conv_wrapper_s4_get_buffer_size`` (int4 weights)
  bytes for the target's core, when nonzero (no int4 unpacking buffer); int16: none.

Arithmetic: float32 is the reference kernel; int8 (int8 or int4 weights) sums in int32
and ``arm_nn_requantize``, the reference kernel's values, except int4 weights with an odd
number of input channels on the generic kernel (depth multiplier > 1, batches > 1 or
dilation), whose packed-filter walk reads other weights than the reference (emulated); int16 sums in int64 with the
int64 bias and ``arm_nn_requantize_s64`` (which truncates to int32 before its last
rounding bit: different from the reference only for results beyond +-2^30).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.depthwise_conv import BIAS, INPUT, FILTER, OUTPUT, DepthwiseConv2D
from kernels.internal.quantization import multiply_by_quantized_multiplier, wrap_int32
from kernels.conv import OpData
from kernels.internal.sample_rows import batch_axis_rows
from kernels.internal.tensor_utils import FLOAT32, INT4, INT8, INT16, type_name

from .internal.arithmetic import S64Requantizer, depthwise_s4_odd_channels
from .internal.buffer_sizes import depthwise_conv_wrapper_s4_size, depthwise_conv_wrapper_s8_size
from .internal.prepare import AllocationFilter, tensor_info


class CmsisDepthwiseOpData(OpData):
    """TFLM's CMSIS-NN depthwise OpData (reference OpDataConv + buffer_idx)."""
    buffer_idx = -1


@register_variant("cmsis-nn")
class CmsisNNDepthwiseConv2D(DepthwiseConv2D):
    op = "DEPTHWISE_CONV_2D"
    supported_types = DepthwiseConv2D.supported_types
    weights_input = 1

    def sample_rows(self, block):
        """Batch rows are independent (the sample axis replaces the unit batch axis),
        except int4 weights with an odd number of input channels.
        ``arm_depthwise_conv_wrapper_s8`` / ``_s4`` take their fast kernels (3x3, opt,
        MVE's conversion to a convolution) only for a batch of 1, but int8 weights and
        even int4 channel counts give the reference's sums on every kernel; an odd int4
        channel count makes the generic kernel's packed-filter walk read other weights,
        and a block (batch > 1) always takes that kernel. int16 calls
        ``arm_depthwise_conv_s16`` whatever the batch."""
        weights, inp = block.input(FILTER), block.input(INPUT)
        if weights is not None and weights.type == INT4 and (
                inp is None or not inp.shape or inp.shape[-1] % 2):
            return False
        return batch_axis_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.depthwise_conv.OpData"))
        return CmsisDepthwiseOpData()

    def prepare(self, ctx, node):
        data = node.user_data
        inp = tensor_info(ctx, node, INPUT)
        flt = tensor_info(ctx, node, FILTER)
        out = tensor_info(ctx, node, OUTPUT, output=True)
        if inp is None or flt is None or out is None:
            raise ctx.error("needs an input, a filter and an output tensor")
        if inp.type not in (FLOAT32, INT16, INT8):
            raise ctx.error(f"Input data type not supported ({type_name(inp.type)})")
        if inp.type == INT16 and inp.zero_point != 0:
            raise ctx.error(f"int16 input zero point must be 0, got {inp.zero_point}")
        if inp.type == INT16 and out.type == INT16 and out.zero_point != 0:
            raise ctx.error(f"int16 output zero point must be 0, got {out.zero_point}")
        if inp.type in (INT8, INT16) and flt.quantization is None:
            raise ctx.error("quantized filter has no quantization parameters")
        input_type, filter_type = inp.type, flt.type
        in_shape, filter_shape, out_shape = inp.shape, flt.shape, out.shape
        super().prepare(AllocationFilter(ctx, drop_persistent_arrays=input_type == FLOAT32,
                                         drop_scratch=True), node)
        data.buffer_idx = -1
        if input_type == INT8:
            batches, in_h, in_w, in_depth = in_shape
            _, filter_h, filter_w, out_depth = filter_shape
            dh, dw = int(node.params.dilation_h_factor), int(node.params.dilation_w_factor)
            pad = data.padding
            if filter_type == INT4:
                size = depthwise_conv_wrapper_s4_size(batches, in_depth, filter_h, filter_w,
                                                      out_depth, dh, dw, ctx.target.mve)
            else:
                size = depthwise_conv_wrapper_s8_size(
                    batches, in_h, in_w, in_depth, filter_h, filter_w, out_shape[2], out_depth,
                    int(node.params.stride_w), pad.height, pad.width, dh, dw,
                    ctx.target.dsp, ctx.target.mve)
            if size > 0:
                data.buffer_idx = ctx.request_scratch(size)

    def invoke(self, ctx, node):
        data = node.user_data
        (batches, _, _, in_depth, multiplier, *_rest, dh, dw) = data.geometry
        generic_kernel = not (multiplier == 1 and batches == 1 and dh == 1 and dw == 1)
        if data.kind == INT8 and data.filter_type == INT4 and in_depth % 2 and generic_kernel:
            self._invoke_s4_odd_channels(ctx, node, data)
            return
        super().invoke(ctx, node)

    @staticmethod
    def _invoke_s4_odd_channels(ctx, node, data) -> None:
        """arm_depthwise_conv_s4's generic kernel with an odd number of input channels
        (see :func:`~kernels.cmsis_nn.internal.arithmetic.depthwise_s4_odd_channels`)."""
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        try:
            acc = depthwise_s4_odd_channels(
                x, np.asarray(node.input_arrays[FILTER]), filter_h, filter_w, multiplier, sh, sw,
                dh, dw, data.padding.height, data.padding.width, out_h, out_w,
                -data.input_zero_point)
        except ValueError as e:
            raise ctx.error(str(e)) from None
        channels = in_depth * multiplier
        acc = acc.reshape(-1, channels)
        if data.has_bias:
            bias = data.bias_const if data.bias_const is not None else node.input_arrays[BIAS]
            acc = wrap_int32(acc + np.asarray(bias, np.int64).reshape(1, -1))
        scaled = multiply_by_quantized_multiplier(
            wrap_int32(acc), data.per_channel_multiplier[:channels].astype(np.int64),
            data.per_channel_shift[:channels].astype(np.int64))
        result = np.clip(scaled + data.output_zero_point, data.output_activation_min,
                         data.output_activation_max)
        np.copyto(out, result.reshape(out.shape), casting="unsafe")

    @staticmethod
    def _integer_cache(data, taps, bias):
        dtype, wt, requantizer = DepthwiseConv2D._integer_cache(data, taps, bias)
        if data.kind == INT16:
            requantizer = S64Requantizer(data.per_channel_multiplier, data.per_channel_shift, bias,
                                         data.output_activation_min, data.output_activation_max)
        return dtype, wt, requantizer
