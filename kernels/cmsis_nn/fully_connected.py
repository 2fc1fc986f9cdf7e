"""FULLY_CONNECTED as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/fully_connected.cc``
with ``arm_convolve_1x1_s8_fast``, ``arm_fully_connected_wrapper_s8``,
``arm_fully_connected_s4`` and ``arm_fully_connected_s16``).

Prepare makes the reference kernel's checks and computations (the reference Prepare runs
under the CMSIS-NN allocation rules: no int4 unpacking buffer), then:

* per-channel quantization only with int8 inputs and int8 weights;
* int16: zero points of 0;
* int8 input and int8 weights, an output of 3+ dimensions and an accumulation depth that
  is a multiple of 4 ("conv 1x1" path): per-tensor quantization requests a scratch
  buffer of 8 bytes per output channel (the multipliers and shifts the convolution
  wants); the convolution's own buffer is 0 bytes with gcc;
* other int8 x int8 layers: ``arm_fully_connected_s8_get_buffer_size`` (MVE: 4 bytes per
  output, 0 elsewhere); with constant weights and bias that buffer becomes a persistent
  buffer of kernel sums (KERNELS_OPTIMIZED_FOR_SPEED, TFLM's default), else a scratch
  buffer.

Arithmetic: float32, int4 and the int8 x int8 fully-connected path are the reference
kernel's values. The conv 1x1 path ignores the weights' zero point. int16 always takes
the int64 bias and ``arm_nn_requantize_s64``; its dot products sum the first columns in a
wrapping int32 (DSP: the first min(depth, 512) rounded down to a multiple of 4; MVE:
min(depth, 512); no DSP: none) and the rest in int64.

What the CMSIS-NN build does differently and the emulator refuses with an error:

* the conv 1x1 path with per-tensor quantization when its scratch buffer is one of the
  first four of the model (index < 4): TFLM's debug check in Eval aborts (default
  BUILD_TYPE keeps debug checks);
* an int16 layer with an int32 bias: CMSIS-NN reads the bias as int64 (past its end).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.conv import check_weight_types
from kernels.fully_connected import BIAS, INPUT, OUTPUT, WEIGHTS, FullyConnected, OpData
from kernels.internal.tensor_utils import FLOAT32, INT4, INT8, INT16, INT32, type_name

from .internal.arithmetic import split_accumulate_s16, MAX_COL_COUNT
from .internal.buffer_sizes import fully_connected_s8_size, fully_connected_s16_size
from .internal.kernel_sums import requantize_s64
from .internal.prepare import AllocationFilter, tensor_info

#: TFLITE_DCHECK_GE(buffer_conv_1x1_idx, 4) in TFLM's Eval
_CONV_1X1_MIN_SCRATCH_INDEX = 4


class CmsisFullyConnectedOpData(OpData):
    """TFLM's CMSIS-NN fully connected OpData and host caches."""
    buffer_conv_1x1_idx = -1
    buffer_idx = -1
    kernel_sums = None
    conv_1x1 = False


@register_variant("cmsis-nn")
class CmsisNNFullyConnected(FullyConnected):
    op = "FULLY_CONNECTED"
    supported_types = ("float32", "int8 (bias int32)", "int8 x int4 (packed, bias int32)",
                       "int16 x int8 (bias int64 or none)")
    weights_input = 1

    def sample_rows(self, block):
        """Rows of the flattened input are independent, as in the reference kernel
        (``arm_fully_connected_s8`` / ``_per_channel_s8`` / ``_s4`` / ``_s16`` loop over
        the batches, one vector-matrix product each, with the same per-core column
        split; MVE kernel sums depend on the weights only), as long as the block takes
        the same path: TFLM picks ``arm_convolve_1x1_s8_fast`` (int8 x int8, depth a
        multiple of 4) by the output's *rank* (> 2), which a prepended sample axis
        raises, and that path ignores the weights' zero point. A per-tensor conv 1x1
        layer also checks its scratch buffer's index (>= 4), which differs in the block
        model: it runs sample by sample. Outputs of 4 dimensions must stay 4-D."""
        if not FullyConnected.sample_rows(self, block):
            return False
        inp, weights, out = block.input(INPUT), block.input(WEIGHTS), block.output(OUTPUT)
        block_rank = len(block.shape(out))
        if block_rank > 4:
            return False
        if inp.type == INT8 and weights.type == INT8 and weights.shape[-1] % 4 == 0:
            single_conv_1x1, block_conv_1x1 = len(out.shape) > 2, block_rank > 2
            if single_conv_1x1 != block_conv_1x1:
                return False
            q = weights.quantization
            per_channel = q is not None and np.asarray(q.scales).size > 1
            if block_conv_1x1 and not per_channel:
                return False
        return True

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.fully_connected.OpData"))
        return CmsisFullyConnectedOpData()

    def prepare(self, ctx, node):
        data = node.user_data
        inp = tensor_info(ctx, node, INPUT)
        flt = tensor_info(ctx, node, WEIGHTS)
        bias = tensor_info(ctx, node, BIAS)
        out = tensor_info(ctx, node, OUTPUT, output=True)
        if inp is None or flt is None or out is None:
            raise ctx.error("needs input, weights and output tensors")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if inp.type not in (FLOAT32, INT16, INT8):
            raise ctx.error(f"Input data type not supported ({type_name(inp.type)})")
        check_weight_types(ctx, inp, flt)
        if not 2 <= len(out.shape) <= 4:
            raise ctx.error(f"output must have 2 to 4 dimensions (got {out.shape}; TFLM's debug "
                            "check aborts)")
        input_type, filter_type = inp.type, flt.type
        bias_type = bias.type if bias is not None else None
        output_dims = len(out.shape)
        accum_depth = flt.shape[-1] if len(flt.shape) else 0
        constant_weights = flt.is_constant and (bias is None or bias.is_constant)
        if input_type == INT16:
            if inp.zero_point != 0:
                raise ctx.error(f"int16 input zero point must be 0, got {inp.zero_point}")
            if out.zero_point != 0:
                raise ctx.error(f"int16 output zero point must be 0, got {out.zero_point}")
            if bias_type == INT32:
                raise ctx.error("an int16 fully connected layer with an int32 bias: CMSIS-NN's "
                                "arm_fully_connected_s16 reads the bias as int64 (past its end); "
                                "TFLM's CMSIS-NN build computes from memory outside the bias")
        data.conv_1x1 = (input_type == INT8 and filter_type == INT8 and output_dims > 2
                         and accum_depth % 4 == 0)
        super().prepare(AllocationFilter(ctx, drop_scratch=True), node)

        if data.is_per_channel if input_type != FLOAT32 else False:
            if input_type != INT8 or filter_type == INT4:
                raise ctx.error("per-channel quantization is supported for int8 inputs with int8 "
                                "weights only")
        data.buffer_idx = -1
        data.buffer_conv_1x1_idx = -1
        data.kernel_sums = None
        size = 0
        if input_type == INT16:
            size = fully_connected_s16_size()
        elif input_type == INT8 and filter_type != INT4:
            if data.conv_1x1:
                if not data.is_per_channel:
                    data.buffer_conv_1x1_idx = ctx.request_scratch(data.output_depth * 4 * 2)
                size = 0    # arm_convolve_1x1_s8_fast_get_buffer_size: 0 with gcc
            else:
                size = fully_connected_s8_size(data.output_depth, ctx.target.mve)
                if size > 0 and constant_weights:
                    # the kernel sums, computed once (values not needed: same outputs)
                    data.kernel_sums = ctx.allocate_persistent(size)
                    size = 0
        if size > 0:
            data.buffer_idx = ctx.request_scratch(size)

    @staticmethod
    def _weights(data, w) -> np.ndarray:
        mat = FullyConnected._weights(data, w)
        if ((data.conv_1x1 or data.input_type == INT16) and not data.is_per_channel
                and data.filter_zero_point):
            # arm_convolve_1x1_s8_fast and arm_fully_connected_s16 have no weight offset
            mat = mat + float(data.filter_zero_point)
        return mat

    def invoke(self, ctx, node):
        data = node.user_data
        if (data.conv_1x1 and not data.is_per_channel
                and data.buffer_conv_1x1_idx < _CONV_1X1_MIN_SCRATCH_INDEX):
            raise ctx.error(f"TFLM's CMSIS-NN fully connected aborts: its conv 1x1 path checks "
                            f"that its scratch buffer index ({data.buffer_conv_1x1_idx}) is at "
                            f"least {_CONV_1X1_MIN_SCRATCH_INDEX} (a debug check of the default "
                            "build)")
        if data.input_type == INT16:
            self._invoke_s16(ctx, node, data)
            return
        super().invoke(ctx, node)

    @staticmethod
    def _invoke_s16(ctx, node, data) -> None:
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        b, d, o = data.batches, data.accum_depth, data.output_depth
        weights = data.weights
        if weights is None:
            weights = CmsisNNFullyConnected._weights(data, node.input_arrays[WEIGHTS])
        bias = data.bias
        if bias is None and data.has_bias:
            bias = FullyConnected._bias(data, node.input_arrays[BIAS])
        if ctx.target.mve:
            int32_cols = min(d, MAX_COL_COUNT)
        elif ctx.target.dsp:
            int32_cols = min(d, MAX_COL_COUNT) // 4 * 4
        else:
            int32_cols = 0
        acc = split_accumulate_s16(x.reshape(-1)[: b * d].reshape(b, d), weights, int32_cols)
        if bias is not None:
            acc = acc + np.asarray(bias, np.int64).reshape(1, -1)
        scaled = requantize_s64(acc, data.output_multiplier, data.output_shift)
        result = np.clip(scaled, data.act_min, data.act_max)
        np.copyto(out.reshape(-1)[: b * o], result.reshape(-1), casting="unsafe")
