"""TRANSPOSE_CONV as TFLM's reference kernels compute it.

Inputs: 0 output shape (unused by TFLM: the output tensor's shape rules), 1 filter
(out_channels, filter_h, filter_w, in_channels), 2 input, 3 optional bias.

Type paths (input / filter / bias -> output):

* float32 / float32 / float32: TFLM scatters every input element into the outputs it
  touches, one float32 multiply-add at a time; per output element that is the order
  (in_y, in_x, in_channel), i.e. filter_y and filter_x descending. Then bias, clamp;
* int8 / int8 / int32: per-channel or per-tensor quantization (filter zero point
  ignored), int32 accumulator (C++ wrap reproduced), 32-bit double-rounding
  requantisation, output offset;
* int16 / int8 / int64, int16 (widened to int64 in a scratch buffer, as TFLM does) or
  none: int64 accumulator, no offsets, 64-bit requantisation.

Padding is TFLM's: computed as for a convolution over the output's height and width.
Quantized sums are one exact float BLAS product (input x filter for every tap) followed
by one strided int64 add per tap into the output grid.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .conv import (check_bias, check_geometry_params, float_finish, largest_input_offset_value,
                   make_requantizer, populate_conv_quantization, require_4d, write_channels_first)
from .internal.matmul import exact_float_dtype
from .internal.padding import PaddingValues, compute_padding_height_width, padding_mode, tap_range
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, INT64, flat_size, type_name

OUTPUT_SHAPE, FILTER, INPUT, BIAS = 0, 1, 2, 3
OUTPUT = 0
QUANTIZED_DIMENSION = 0


class OpData:
    """TFLM's transpose_conv OpData (ConvParams, scratch indices, per-channel arrays)
    plus host-side caches."""

    padding = PaddingValues()
    input_offset = 0
    weights_offset = 0
    output_zero_point = 0
    output_activation_min = 0
    output_activation_max = 0
    scratch_buffer_index = -1
    bias_converted_buffer_index = -1
    per_channel_multiplier = None
    per_channel_shift = None
    #: compressed inputs (COMPRESSION_METADATA): input -> decompression scratch index
    decompress: dict = {}
    # host-side
    kind = None
    int64_accum = False
    output_offset = 0
    activation = 0
    cache = None


@register
class TransposeConv(Kernel):
    op = "TRANSPOSE_CONV"
    supported_types = ("float32", "int8 (bias int32)", "int16 x int8 (bias int16 or int64)")
    type_input = 2
    weights_input = 1

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("transpose_conv.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        out = ctx.output(node, OUTPUT)
        inp = ctx.input(node, INPUT)
        flt = ctx.input(node, FILTER)
        if out is None or inp is None or flt is None:
            raise ctx.error("needs a filter (input 1), an input (input 2) and an output tensor")
        if not (inp.type == flt.type or (inp.type == INT16 and flt.type == INT8)):
            raise ctx.error(f"Hybrid models are not supported on TFLite Micro (input type "
                            f"{type_name(inp.type)} with filter type {type_name(flt.type)})")
        # TFLM's prepare lets any equal pair through; its eval handles only these (an
        # int16 filter would be read as int8)
        if (inp.type, flt.type) not in ((FLOAT32, FLOAT32), (INT8, INT8), (INT16, INT8)):
            raise ctx.error(f"input type {type_name(inp.type)} with filter type "
                            f"{type_name(flt.type)} not supported (float32/float32, int8/int8, "
                            "int16/int8)")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        require_4d(ctx, input=inp, filter=flt, output=out)
        batches, in_h, in_w, in_depth = inp.shape
        out_depth, filter_h, filter_w, filter_depth = flt.shape
        _, out_h, out_w, _ = out.shape
        if out.shape[0] != batches:
            raise ctx.error(f"output batch {out.shape[0]} differs from input batch {batches}")
        if out.shape[3] != out_depth:
            raise ctx.error(f"output has {out.shape[3]} channels but the filter has {out_depth}")
        if filter_depth != in_depth:
            raise ctx.error(f"filter depth {filter_depth} differs from the input depth {in_depth}")

        num_channels = flt.shape[QUANTIZED_DIMENSION]
        data.per_channel_multiplier = ctx.persistent_array(np.int32, num_channels)
        data.per_channel_shift = ctx.persistent_array(np.int32, num_channels)
        self._request_scratch(ctx, data, inp, flt, out, params)
        if inp.type in (INT8, INT16):
            q = flt.quantization
            if q is None:
                raise ctx.error("quantized filter has no quantization parameters")
            if q.scales.size not in (1, num_channels):
                raise ctx.error(f"filter has {q.scales.size} quantization scales; expected 1 or "
                                f"{num_channels}")
            if q.scales.size != q.zero_points.size:
                raise ctx.error(f"filter has {q.scales.size} scales but {q.zero_points.size} "
                                "zero points")

        # --- TFLM's CalculateOpData
        if len(node.inputs) not in (3, 4) or len(node.outputs) != 1:
            raise ctx.error(f"needs 3 or 4 inputs and 1 output (got {len(node.inputs)} and "
                            f"{len(node.outputs)})")
        sh, sw = int(params.stride_h), int(params.stride_w)
        check_geometry_params(ctx, sh, sw)
        data.padding, _, _ = compute_padding_height_width(
            sh, sw, 1, 1, out_h, out_w, filter_h, filter_w, padding_mode(params))
        activation = int(params.fused_activation_function)
        bias_data = None
        has_bias = False
        if inp.type != FLOAT32:
            inp2 = ctx.input(node, INPUT)
            flt2 = ctx.input(node, FILTER)
            bias = ctx.input(node, BIAS)
            out2 = ctx.output(node, OUTPUT)
            data.output_activation_min, data.output_activation_max = populate_conv_quantization(
                ctx, inp2, flt2, bias, out2, self._quantized_activation(activation), num_channels,
                data.per_channel_multiplier, data.per_channel_shift)
            check_bias(ctx, bias, inp.type, (INT32,) if inp.type == INT8 else (INT64, INT16),
                       out_depth)
            if inp.type == INT16 and bias is not None and bias.type == INT16:
                data.bias_converted_buffer_index = ctx.request_scratch(flat_size(bias.shape) * 8)
            has_bias = bias is not None
            bias_data = bias.data if has_bias else None
            ctx.release(inp2, flt2, out2, bias)
        elif len(node.inputs) == 4 and node.inputs[BIAS] >= 0:
            # TFLM takes no temp tensors on the float path: look at the tensor directly
            bias = ctx.eval_tensor(node.inputs[BIAS])
            if bias.type != FLOAT32:
                raise ctx.error(f"bias type {type_name(bias.type)} not supported with FLOAT32 "
                                "input (expected FLOAT32)")
            if flat_size(bias.shape) != out_depth:
                raise ctx.error(f"bias has {flat_size(bias.shape)} values for {out_depth} "
                                "output channels")
            has_bias = True
            bias_data = bias.data if bias.is_constant else None
        data.input_offset = -inp.zero_point
        data.weights_offset = -flt.zero_point
        data.output_zero_point = out.zero_point
        data.decompress = ctx.decompression_scratch(node, FILTER, BIAS)
        if BIAS in data.decompress:
            bias_data = ctx.eval_tensor(node.inputs[BIAS]).data

        # --- host-side caches
        data.kind = inp.type
        data.activation = activation
        data.geometry = (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth,
                         out_h, out_w, sh, sw)
        data.has_bias = has_bias
        data.filter_const = None if flt.data is None else np.asarray(flt.data).reshape(flt.shape)
        data.bias_const = None if bias_data is None else np.asarray(bias_data).reshape(-1)
        if inp.type != FLOAT32:
            data.int64_accum = inp.type == INT16
            data.offset = inp.zero_point if inp.type == INT8 else 0
            data.output_offset = out.zero_point if inp.type == INT8 else 0
            data.max_input = largest_input_offset_value(inp.type, data.offset)
            if data.filter_const is not None and (data.bias_const is not None or not has_bias):
                try:
                    data.cache = self._filter_cache(data, data.filter_const, data.bias_const)
                except (ValueError, OverflowError) as e:
                    raise ctx.error(str(e)) from None
        ctx.release(out, inp, flt)

    def _request_scratch(self, ctx, data, inp, flt, out, params) -> None:
        """The accumulator scratch buffer: output elements x int32 (int8) or int64 (int16)."""
        out_elements = flat_size(out.shape)
        if inp.type == INT8:
            data.scratch_buffer_index = ctx.request_scratch(out_elements * 4)
        elif inp.type == INT16:
            data.scratch_buffer_index = ctx.request_scratch(out_elements * 8)

    def _quantized_activation(self, activation: int) -> int:
        """The fused activation whose range clamps the quantized outputs (the model's)."""
        return activation

    @staticmethod
    def _filter_cache(data, w, bias):
        """(float dtype of the products, float dtype of the sums,
        (filter_h * filter_w * out_depth, in_depth) matrix, requantizer)."""
        (_, _, _, in_depth, filter_h, filter_w, out_depth, _, _, _, _) = data.geometry
        w64 = np.asarray(w, dtype=np.int64)
        per_column = np.abs(w64).sum(axis=3) * data.max_input      # (out, fh, fw)
        dtype = exact_float_dtype(float(per_column.max(initial=0)))
        total = float(per_column.sum(axis=(1, 2)).max(initial=0))  # every tap of a channel
        sum_dtype = exact_float_dtype(total)
        if dtype is None or sum_dtype is None:
            raise OverflowError("transpose convolution sums exceed 2^53: not computable exactly")
        mat = np.ascontiguousarray(w64.transpose(1, 2, 0, 3).reshape(-1, in_depth), dtype=dtype)
        return dtype, sum_dtype, mat, make_requantizer(data, bias, total)

    def invoke(self, ctx, node):
        data = node.user_data
        if data.decompress:
            ctx.decompress_inputs(node, data.decompress)
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        if out.size == 0:
            return
        if data.kind == FLOAT32:
            with np.errstate(over="ignore", invalid="ignore"):
                self._invoke_float(data, node, x, out)
            return
        cache = data.cache
        if cache is None:
            b = node.input_arrays[BIAS] if data.has_bias else None
            cache = self._filter_cache(data, node.input_arrays[FILTER], b)
        dtype, sum_dtype, mat, requantizer = cache
        (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
         sh, sw) = data.geometry
        xs = np.subtract(x, data.offset, dtype=dtype).reshape(-1, in_depth)
        # every input element times every tap, channels first: (fh, fw, O, B, H, W)
        contrib = (mat @ xs.T).reshape(filter_h, filter_w, out_depth, batches, in_h, in_w)
        acc = np.zeros((out_depth, batches, out_h, out_w), dtype=sum_dtype)
        pad = data.padding
        for fy in range(filter_h):
            iy0, iy1 = tap_range(in_h, sh, fy - pad.height, out_h)
            if iy0 >= iy1:
                continue
            oy0 = iy0 * sh + fy - pad.height
            rows = slice(oy0, oy0 + (iy1 - iy0 - 1) * sh + 1, sh)
            for fx in range(filter_w):
                ix0, ix1 = tap_range(in_w, sw, fx - pad.width, out_w)
                if ix0 >= ix1:
                    continue
                ox0 = ix0 * sw + fx - pad.width
                cols = slice(ox0, ox0 + (ix1 - ix0 - 1) * sw + 1, sw)
                acc[:, :, rows, cols] += contrib[fy, fx, :, :, iy0:iy1, ix0:ix1]
        # the int32 (int8 path) scratch wraps; the requantizer reproduces it if it can
        write_channels_first(requantizer(acc.reshape(out_depth, -1)), out)

    def _invoke_float(self, data, node, x, out):
        (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
         sh, sw) = data.geometry
        w = data.filter_const if data.filter_const is not None else node.input_arrays[FILTER]
        w = np.asarray(w, dtype=np.float32)
        total = np.zeros((batches, out_h, out_w, out_depth), dtype=np.float32)
        pad = data.padding
        # per output element TFLM adds in (in_y, in_x, in_channel) order: taps descending
        for fy in reversed(range(filter_h)):
            iy0, iy1 = tap_range(in_h, sh, fy - pad.height, out_h)
            if iy0 >= iy1:
                continue
            oy0 = iy0 * sh + fy - pad.height
            rows = slice(oy0, oy0 + (iy1 - iy0 - 1) * sh + 1, sh)
            for fx in reversed(range(filter_w)):
                ix0, ix1 = tap_range(in_w, sw, fx - pad.width, out_w)
                if ix0 >= ix1:
                    continue
                ox0 = ix0 * sw + fx - pad.width
                cols = slice(ox0, ox0 + (ix1 - ix0 - 1) * sw + 1, sw)
                xs = x[:, iy0:iy1, ix0:ix1, :]
                target = total[:, rows, cols, :]
                for ic in range(in_depth):
                    target += xs[..., ic:ic + 1] * w[:, fy, fx, ic]
        bias = None
        if data.has_bias:
            bias = data.bias_const if data.bias_const is not None else node.input_arrays[BIAS]
        float_finish(total, bias, data.activation, out)

