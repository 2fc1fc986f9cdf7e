"""CONV_2D as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/conv.cc`` with CMSIS-NN's
``arm_convolve_wrapper_s8`` / ``_s4`` / ``arm_convolve_wrapper_s16``).

Allocations (Prepare):

* OpData: the reference OpDataConv plus a scratch-buffer index;
* per-channel multiplier and shift arrays (int32 x output channels each) for int8 and
  int16 inputs only (the reference kernel allocates them for float32 too);
* one scratch buffer of ``arm_convolve_wrapper_s8_get_buffer_size`` (int8 input, int8
  or int4 weights) or ``arm_convolve_wrapper_s16_get_buffer_size`` (int16) bytes for
  the target's core (see :mod:`kernels.cmsis_nn.internal.buffer_sizes`), when nonzero;
  no unpacking buffer for int4 weights (CMSIS-NN reads them packed).

Arithmetic:

* float32: the reference kernel;
* int8 (int8 or int4 weights): int32 sums and ``arm_nn_requantize``, the same values as
  the reference kernel's;
* int16 with an int64 bias: CMSIS-NN's int32-then-int64 accumulator (the first 512
  columns of each dot product wrap in int32; a batch's last output pixel, when a batch
  has an odd number of them, sums every column in int32) and ``arm_nn_requantize_s64``;
* int16 with an int32 bias **or no bias**: int32 accumulator and ``arm_nn_requantize``
  (the reference kernel uses the 64-bit path without a bias unless the model asks for
  int32 bias quantisation).

What the CMSIS-NN build does not do, refused here with an error: grouped convolutions
with int16 inputs or int4 weights (``arm_convolve_s16`` / ``arm_convolve_s4`` assume one
group: TFLM's build reads past the filter); grouped int8 convolutions without a bias
(``arm_convolve_s8`` reads the second group's bias through an advanced null pointer:
a crash under QEMU).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.conv import (BIAS, FILTER, INPUT, OUTPUT, QUANTIZED_DIMENSION, BiasWidthParams, Conv2D,
                          OpData, check_weight_types, conv_accumulators, conv_geometry,
                          filter_values, populate_conv_quantization, write_channels_first)
from kernels.internal.sample_rows import batch_axis_rows
from kernels.internal.tensor_utils import FLOAT32, INT4, INT8, INT16, INT32, INT64, flat_size, type_name

from .internal.arithmetic import MAX_COL_COUNT
from .internal.buffer_sizes import conv_wrapper_s8_size, conv_wrapper_s16_size
from .internal.kernel_sums import requantize_s64
from kernels.internal.quantization import wrap_int32


class CmsisConvOpData(OpData):
    """TFLM's CMSIS-NN conv OpData (reference OpDataConv + buffer_idx) and host caches."""
    buffer_idx = -1


@register_variant("cmsis-nn")
class CmsisNNConv2D(Conv2D):
    op = "CONV_2D"
    supported_types = ("float32", "int8 (bias int32)", "int8 x int4 (packed, bias int32, one group)",
                       "int16 x int8 (bias int32 or int64 or none, one group)")
    weights_input = 1

    def sample_rows(self, block):
        """Batch rows are independent on every core, so the sample axis may replace the
        unit batch axis. ``arm_convolve_wrapper_s8`` / ``_s4`` choose their routine (1x1
        fast or strided, 1xN, MVE's even-int4, generic) from the padding, stride,
        dilation, filter and input height and channels, never from the batch count, and
        each routine gives the reference's int32 sums; ``arm_convolve_s16`` loops over
        the batches and pairs output pixels within each one (the lone last pixel of a
        batch is emulated per batch); buffer sizes do not depend on the batch."""
        return batch_axis_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.conv.OpData"))
        return CmsisConvOpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        inp = ctx.input(node, INPUT)
        if inp is None:
            raise ctx.error("needs an input tensor")
        flt = ctx.input(node, FILTER)
        if flt is None:
            raise ctx.error("needs a filter tensor")
        out = ctx.output(node, OUTPUT)
        if out is None:
            raise ctx.error("needs an output tensor")
        # conv.cc asks for the bias as output 2: always absent, so the bias is not checked here
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if inp.type not in (FLOAT32, INT16, INT8):
            raise ctx.error(f"Input data type not supported ({type_name(inp.type)})")
        check_weight_types(ctx, inp, flt)
        for name, t in (("input", inp), ("filter", flt), ("output", out)):
            if len(t.shape) != 4:
                raise ctx.error(f"{name} must have 4 dimensions (got shape {t.shape})")
        batches, in_h, in_w, in_depth = inp.shape
        out_depth, filter_h, filter_w, filter_depth = flt.shape
        if out.shape[0] != batches:
            raise ctx.error(f"output batch {out.shape[0]} differs from input batch {batches}")
        if filter_depth <= 0:
            raise ctx.error(f"filter depth {filter_depth} must be positive")
        if in_depth % filter_depth:
            raise ctx.error(f"input depth {in_depth} is not a multiple of the filter depth "
                            f"{filter_depth}")
        groups = in_depth // filter_depth
        if out.shape[3] % groups:
            raise ctx.error(f"output depth {out.shape[3]} is not a multiple of the {groups} groups "
                            "(TFLM's debug check aborts)")
        if out.shape[3] != out_depth:
            raise ctx.error(f"output has {out.shape[3]} channels but the filter has {out_depth}")
        if groups > 1 and (inp.type == INT16 or flt.type == INT4):
            raise ctx.error(f"grouped convolution ({groups} groups) with {type_name(inp.type)} input "
                            f"and {type_name(flt.type)} filter: CMSIS-NN's kernel assumes one group "
                            "(TFLM's CMSIS-NN build reads past the filter)")

        num_channels = flt.shape[QUANTIZED_DIMENSION]
        if inp.type in (INT8, INT16):
            data.per_channel_multiplier = ctx.persistent_array(np.int32, num_channels)
            data.per_channel_shift = ctx.persistent_array(np.int32, num_channels)

        # --- TFLM's CalculateOpDataConv
        if len(node.inputs) not in (2, 3):
            raise ctx.error(f"needs 2 or 3 inputs (got {len(node.inputs)})")
        if len(node.outputs) != 1:
            raise ctx.error(f"needs 1 output (got {len(node.outputs)})")
        sh, sw, dh, dw, data.padding = conv_geometry(ctx, params, in_h, in_w, filter_h, filter_w)
        inp2 = ctx.input(node, INPUT)
        flt2 = ctx.input(node, FILTER)
        bias = ctx.input(node, BIAS)
        out2 = ctx.output(node, OUTPUT)
        activation = int(params.fused_activation_function)
        if inp.type != FLOAT32:
            data.output_activation_min, data.output_activation_max = populate_conv_quantization(
                ctx, inp2, flt2, bias, out2, activation, num_channels,
                data.per_channel_multiplier, data.per_channel_shift)
        data.input_zero_point = inp2.zero_point
        data.filter_zero_point = flt2.zero_point
        data.output_zero_point = out2.zero_point
        bias_type = bias.type if bias is not None else None
        bias_data = bias.data if bias is not None else None
        bias_size = flat_size(bias.shape) if bias is not None else 0
        ctx.release(out2, inp2, flt2, bias)

        # --- the CMSIS-NN scratch buffer
        data.buffer_idx = -1
        if inp.type in (INT8, INT16):
            if inp.type == INT16 and inp.zero_point != 0:
                raise ctx.error(f"int16 input zero point must be 0, got {inp.zero_point}")
            if inp.type == INT16 and out.zero_point != 0:
                raise ctx.error(f"int16 output zero point must be 0, got {out.zero_point}")
            pad = data.padding
            if inp.type == INT8:
                size = conv_wrapper_s8_size(in_h, in_w, in_depth, filter_h, filter_w, filter_depth,
                                            out.shape[2], sh, sw, pad.height, pad.width, dh, dw,
                                            ctx.target.dsp, ctx.target.mve)
            else:
                size = conv_wrapper_s16_size(in_depth, filter_h, filter_w, ctx.target.mve)
            if size > 0:
                data.buffer_idx = ctx.request_scratch(size)

        # --- Eval's checks that TFLM makes on every invoke, made once here
        if inp.type == INT16 and bias_type not in (None, INT32, INT64):
            raise ctx.error(f"Bias type {type_name(bias_type)} ({bias_type}) not supported.")
        if bias_type is not None and bias_size != out_depth:
            raise ctx.error(f"bias has {bias_size} values for {out_depth} output channels")

        # --- host-side caches (the reference kernel's)
        data.decompress = {}
        data.kind = inp.type
        data.activation = activation
        data.geometry = (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth,
                         out.shape[1], out.shape[2], sh, sw, dh, dw, groups, filter_depth)
        data.filter_type = flt.type
        data.filter_shape = flt.shape
        data.has_bias = bias_type is not None
        data.bias_const = None if bias_data is None else np.asarray(bias_data).reshape(-1)
        data.filter_const = (None if flt.data is None
                             else filter_values(flt.type, flt.data, flt.shape))
        if inp.type != FLOAT32:
            try:
                self._prepare_integer(ctx, data, BiasWidthParams(params, bias_type == INT64),
                                      inp, bias_type)
            except (ValueError, OverflowError) as e:
                raise ctx.error(str(e)) from None
        ctx.release(out, inp, flt)

    # ----------------------------------------------------------------- invoke
    def invoke(self, ctx, node):
        data = node.user_data
        groups = data.geometry[13]
        if data.kind == INT8 and groups > 1 and not data.has_bias:
            raise ctx.error(f"a grouped int8 convolution ({groups} groups) without a bias: "
                            "CMSIS-NN's arm_convolve_s8 advances the null bias pointer per group "
                            "and reads the next group's bias from address 4 x channels per group "
                            "(TFLM's CMSIS-NN build crashes or reads the vector table)")
        if data.kind == INT16 and data.int64_accum:
            self._invoke_s16_s64(node, data, ctx.target.mve)
            return
        super().invoke(ctx, node)

    @staticmethod
    def _invoke_s16_s64(node, data, mve: bool) -> None:
        """arm_convolve_s16 with an int64 bias: int32 partial sums, int64 bias,
        arm_nn_requantize_s64, clamp. Without MVE the pixels go two by two through the
        partial-sum kernel and a lone last pixel sums every column in int32; the MVE
        kernel (4 pixels at a time) always switches to int64 after 512 columns."""
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        if out.size == 0:
            return
        cache = data.cache
        if cache is None:
            w = filter_values(data.filter_type, node.input_arrays[FILTER], data.filter_shape)
            b = node.input_arrays[BIAS] if data.has_bias else None
            cache = Conv2D._filter_cache(data, w, b)
        dtype, mat, requantizer = cache
        (batches, _, _, _, _, _, out_depth, out_h, out_w, *_rest) = data.geometry
        bias = data.bias_const if data.bias_const is not None else (
            node.input_arrays[BIAS].reshape(-1) if data.has_bias else None)
        k = mat.shape[-1]
        bound = float(np.abs(mat).sum(axis=-1).max(initial=0)) * 32768.0
        if bound < 2.0 ** 31:
            acc = conv_accumulators(data, x, dtype, mat).astype(np.int64)
        else:
            # the first MAX_COL_COUNT columns wrap in int32, the rest is added in int64;
            # a lone last pixel of a batch sums every column in int32
            head = mat.copy()
            head[:, MAX_COL_COUNT:] = 0
            head_sum = conv_accumulators(data, x, np.float64, head.astype(np.float64)).astype(np.int64)
            full = conv_accumulators(data, x, np.float64, mat.astype(np.float64)).astype(np.int64)
            acc = wrap_int32(head_sum) + (full - head_sum)
            pixels = out_h * out_w
            if pixels % 2 and k > 0 and not mve:
                last = (np.arange(batches) + 1) * pixels - 1
                acc[:, last] = wrap_int32(full[:, last])
        if bias is not None:
            acc = acc + np.asarray(bias, np.int64).reshape(-1, 1)
        scaled = requantize_s64(acc, data.per_channel_multiplier.astype(np.int64).reshape(-1, 1),
                                data.per_channel_shift.astype(np.int64).reshape(-1, 1))
        result = np.clip(scaled, data.output_activation_min, data.output_activation_max)
        write_channels_first(result, out)
