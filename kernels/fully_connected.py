"""FULLY_CONNECTED: float32, int8 (per-tensor and per-channel, int8 or int4 weights) and
int16 activations with int8 weights (int32 or int64 bias), as TFLM's reference kernel.

Exactness: int8/int16 accumulators are computed as a float64 matrix product of integer
values, exact while |sum| < 2^53 (int16 x int8 products times accum depth is far below);
float32 sums keep TFLM's order (one float32 multiply-add per depth step).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .quantization import (ChannelRequantizer, activation_range_float, activation_range_quantized,
                           multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_64,
                           quantize_multiplier, quantize_multiplier_array,
                           quantized_convolution_multiplier, wrap_int32)
from .tensor_utils import FLOAT32, INT4, INT8, INT16, INT32, INT64, flat_size, type_name, unpack_int4
from .matmul import exact_int_matmul, float32_sequential_matmul, products_fit

INPUT, WEIGHTS, BIAS = 0, 1, 2
OUTPUT = 0


class OpData:
    """Per-node state (TFLM's OpDataFullyConnected, plus host-side caches)."""
    output_multiplier = 0
    output_shift = 0
    act_min = 0
    act_max = 0
    input_zero_point = 0
    filter_zero_point = 0
    output_zero_point = 0
    filter_buffer_index = -1
    per_channel_multiplier = None
    per_channel_shift = None
    is_per_channel = False
    int64_accum = False
    weights = None          # (accum_depth, output_depth) float64 with the filter offset applied
    requantizer = None      # output stage with fixed constants (constant or absent bias)


@register
class FullyConnected(Kernel):
    op = "FULLY_CONNECTED"

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("fully_connected.OpDataFullyConnected"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        inp = ctx.input(node, INPUT)
        flt = ctx.input(node, WEIGHTS)
        bias = ctx.input(node, BIAS)
        out = ctx.output(node, OUTPUT)
        if inp is None or flt is None or out is None:
            raise ctx.error("needs input, weights and output tensors")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if ((inp.type == FLOAT32 and flt.type != FLOAT32)
                or (inp.type == INT8 and flt.type not in (INT8, INT4))
                or (inp.type == INT16 and flt.type != INT8)):
            raise ctx.error(f"Input type: {type_name(inp.type)} with filter type: "
                            f"{type_name(flt.type)} not supported.")
        if inp.type not in (FLOAT32, INT8, INT16):
            raise ctx.error(f"Type {type_name(inp.type)} not currently supported.")
        if len(flt.shape) < 2 or len(out.shape) < 1:
            raise ctx.error(f"weights need 2+ dimensions (got {flt.shape}), output 1+ (got {out.shape})")
        if flt.data is None:
            raise ctx.error("non-constant weights are not supported")
        if flt.type == INT4:
            data.filter_buffer_index = ctx.request_scratch(flat_size(flt.shape))

        accum_depth = flt.shape[-1]
        output_depth = out.shape[-1]
        if output_depth > flt.shape[-2]:
            raise ctx.error(f"output depth {output_depth} exceeds the weights' {flt.shape[-2]} rows")
        batches = flat_size(out.shape[:-1])
        if batches * accum_depth > flat_size(inp.shape):
            raise ctx.error(f"input of shape {inp.shape} holds fewer than {batches} x "
                            f"{accum_depth} values")
        if bias is not None and flat_size(bias.shape) < output_depth:
            raise ctx.error(f"bias has {flat_size(bias.shape)} values for {output_depth} outputs")

        if inp.type != FLOAT32:
            self._prepare_quantized(ctx, node, data, params, inp, flt, bias, out)
        # host-side cache of the weights as a float64 (depth x outputs) matrix
        w = flt.data
        if flt.type == INT4:
            w = unpack_int4(w, flat_size(flt.shape)).reshape(flt.shape)
        w = np.asarray(w).reshape(-1, accum_depth)[:output_depth]
        if inp.type == FLOAT32:
            data.weights = np.ascontiguousarray(w.T, dtype=np.float32)
        else:
            offset = 0 if data.is_per_channel else -data.filter_zero_point
            data.weights = np.ascontiguousarray((w.astype(np.float64) + offset).T)
        # |input - zero point| <= 65535 and |weight (+ offset)| <= 255 (int16 x int8 at most)
        if inp.type != FLOAT32 and not products_fit(accum_depth, 65535, 255):
            raise ctx.error(f"accumulation depth {accum_depth} too large for exact float64 products")
        data.bias = None if bias is None or bias.data is None else bias.data.reshape(-1)[:output_depth]
        data.batches, data.accum_depth, data.output_depth = batches, accum_depth, output_depth
        data.activation = params.fused_activation_function
        if inp.type != FLOAT32 and (bias is None or data.bias is not None):
            data.requantizer = self._requantizer(data, inp.type)
        ctx.release(inp, flt, bias, out)

    @staticmethod
    def _requantizer(data, input_type) -> ChannelRequantizer:
        """The output stage (bias, requantisation, offset, clamp) with its constants fixed
        per output column; the bound of every sum is sum |weight| x the largest
        |input - zero point|."""
        o = data.output_depth
        if data.is_per_channel:
            multiplier = data.per_channel_multiplier[:o]
            shift = data.per_channel_shift[:o]
        else:
            multiplier = np.full(o, data.output_multiplier)
            shift = np.full(o, data.output_shift)
        limit = (128 if input_type == INT8 else 32768) + abs(data.input_zero_point)
        bound = float((np.abs(data.weights).sum(axis=0) * limit).max(initial=0))
        return ChannelRequantizer(multiplier, shift, data.bias, data.output_zero_point,
                                  data.act_min, data.act_max, data.int64_accum, bound)

    def _prepare_quantized(self, ctx, node, data, params, inp, flt, bias, out):
        q = flt.quantization
        data.is_per_channel = q is not None and q.scales.size > 1
        if data.is_per_channel:
            if flt.type == INT4:
                raise ctx.error("per-channel quantization is not supported with int4 weights")
            n = q.scales.size
            if not 0 <= q.quantized_dimension < len(flt.shape) or flt.shape[q.quantized_dimension] != n:
                raise ctx.error(f"per-channel quantization has {n} scales but weights dimension "
                                f"{q.quantized_dimension} of shape {flt.shape}")
            data.per_channel_multiplier = ctx.persistent_array(np.int32, n)
            data.per_channel_shift = ctx.persistent_array(np.int32, n)
            effective = (np.float64(inp.scale) * q.scales.astype(np.float64)) / np.float64(out.scale)
            m, s = quantize_multiplier_array(effective)
            data.per_channel_multiplier[:] = m
            data.per_channel_shift[:] = s
        else:
            try:
                real = quantized_convolution_multiplier(
                    inp.scale, flt.scale, out.scale, bias.scale if bias is not None else None)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            data.output_multiplier, data.output_shift = quantize_multiplier(real)
        data.input_zero_point = inp.zero_point
        data.filter_zero_point = flt.zero_point
        data.output_zero_point = out.zero_point
        try:
            data.act_min, data.act_max = activation_range_quantized(
                params.fused_activation_function, out.dtype, out.scale, out.zero_point)
        except ValueError as e:
            raise ctx.error(str(e)) from None
        if inp.type == INT16:
            if bias is not None:
                data.int64_accum = bias.type != INT32
            else:
                data.int64_accum = params.get("quantized_bias_type", 0) != INT32
        if bias is not None and bias.type not in ((INT32,) if inp.type == INT8 else (INT32, INT64)):
            raise ctx.error(f"bias type {type_name(bias.type)} not supported with "
                            f"{type_name(inp.type)} input")

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        b, d, o = data.batches, data.accum_depth, data.output_depth
        flat_out = out.reshape(-1)
        if x.dtype == np.float32:
            lo, hi = activation_range_float(data.activation)
            total = float32_sequential_matmul(x.reshape(-1)[: b * d].reshape(b, d), data.weights)
            if data.bias is not None:
                total = total + data.bias
            np.copyto(flat_out, np.minimum(np.maximum(total, lo), hi).reshape(-1))
            return
        xin = x.reshape(-1)[: b * d].reshape(b, d).astype(np.float64) - data.input_zero_point
        acc = exact_int_matmul(xin, data.weights, check=False)
        if data.requantizer is not None:
            np.copyto(flat_out.reshape(b, o), data.requantizer(acc.T).T, casting="unsafe")
            return
        if data.bias is not None:
            acc = acc + data.bias.astype(np.int64)
        if data.int64_accum:
            mult = data.per_channel_multiplier if data.is_per_channel else data.output_multiplier
            shift = data.per_channel_shift if data.is_per_channel else data.output_shift
            scaled = multiply_by_quantized_multiplier_64(acc, mult, shift)
        else:
            acc = wrap_int32(acc)
            if data.is_per_channel:
                scaled = multiply_by_quantized_multiplier(acc, data.per_channel_multiplier,
                                                          data.per_channel_shift)
            else:
                scaled = multiply_by_quantized_multiplier(acc, data.output_multiplier, data.output_shift)
        scaled = np.clip(scaled + data.output_zero_point, data.act_min, data.act_max)
        np.copyto(flat_out, scaled.reshape(-1).astype(out.dtype))
