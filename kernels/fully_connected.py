"""FULLY_CONNECTED: float32, int8 (per-tensor and per-channel, int8 or int4 weights) and
int16 activations with int8 weights (int32 or int64 bias), as TFLM's reference kernel.

Exactness: int8/int16 accumulators are computed as a float64 matrix product of integer
values, exact while |sum| < 2^53 (int16 x int8 products times accum depth is far below);
float32 sums keep TFLM's order (one float32 multiply-add per depth step).
"""
from __future__ import annotations

import copy

import numpy as np

from .base import Kernel, register
from .internal.quantization import (ChannelRequantizer, current_cpu, activation_range_float, activation_range_quantized,
                           multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_64,
                           quantize_multiplier, quantize_multiplier_array,
                           quantized_convolution_multiplier, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT4, INT8, INT16, INT32, INT64, flat_size, type_name, unpack_int4
from .internal.folded_stages import FoldedFcStage, SaturatingTableFc
from .internal.float_ops import first_nan
from .internal.matmul import exact_int_matmul, float32_sequential_matmul, products_fit

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
    #: compressed inputs (COMPRESSION_METADATA): input -> decompression scratch index
    decompress: dict = {}
    weights = None          # (accum_depth, output_depth) float64 with the filter offset applied
                            # (None for weights computed at run time, e.g. a DECODE output)
    bias = None
    requantizer = None      # output stage with fixed constants (constant weights and bias)
    folded = None           # SaturatingTableFc / FoldedFcStage of int8 per-tensor layers
    #: weights / bias computed at run time (a DECODE output): (their bytes, an OpData
    #: copy with host copies of them, whether its output stages are built), replaced
    #: when the bytes change
    runtime_constants = None


@register
class FullyConnected(Kernel):
    op = "FULLY_CONNECTED"
    supported_types = ("float32", "int8 (bias int32)", "int8 x int4 (packed, bias int32)",
                       "int16 x int8 (bias int32 or int64)")
    weights_input = 1

    def sample_rows(self, block):
        """Rows of the flattened input are independent (constant weights and bias) when
        the input holds exactly batches x depth values and the output's last axis stays
        the output depth (not an output of shape (1,), whose axis the samples replace)."""
        inp, weights, out = block.input(INPUT), block.input(WEIGHTS), block.output(OUTPUT)
        if not block.only_vary((INPUT,)) or weights is None or len(weights.shape) < 2:
            return False
        if tuple(out.shape) == (1,):
            return False
        return flat_size(inp.shape) == flat_size(out.shape[:-1]) * weights.shape[-1]

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
        if flt.type == INT4:
            if flt.data is None:
                raise ctx.error("int4 weights must be a constant tensor")
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
        elif bias is not None and bias.type != FLOAT32:
            # TFLM reads the bias bytes as float32 whatever the tensor's type says
            raise ctx.error(f"bias type {type_name(bias.type)} not supported with FLOAT32 input "
                            f"(expected FLOAT32)")
        if ctx.is_tensor_compressed(node, WEIGHTS) and flt.type == INT4:
            raise ctx.error("Compression not supported with INT4 tensors")
        data.decompress = ctx.decompression_scratch(node, WEIGHTS, BIAS)
        # |input - zero point| <= 65535 and |weight (+ offset)| <= 255 (int16 x int8 at most)
        if inp.type != FLOAT32 and not products_fit(accum_depth, 65535, 255):
            raise ctx.error(f"accumulation depth {accum_depth} too large for exact float64 products")
        data.batches, data.accum_depth, data.output_depth = batches, accum_depth, output_depth
        data.activation = params.fused_activation_function
        data.input_type, data.filter_type, data.filter_shape = inp.type, flt.type, flt.shape
        data.has_bias = bias is not None
        # host-side caches of constant weights and bias
        data.weights = None if flt.data is None else self._weights(data, flt.data)
        data.bias = None if bias is None or bias.data is None else self._bias(data, bias.data)
        data.runtime_constants = None
        self._output_stages(data)
        ctx.release(inp, flt, bias, out)

    def _output_stages(self, data) -> None:
        """The output stages fixed by constant weights and bias (none otherwise)."""
        if data.input_type != FLOAT32 and data.weights is not None and (
                not data.has_bias or data.bias is not None):
            data.requantizer = self._requantizer(data, data.input_type)
            data.folded = self._folded_stage(data, data.input_type)

    def _with_runtime_constants(self, data, node):
        """``data`` completed with host copies of the weights / bias that arrive at run
        time. A DECODE output is written each invoke with the same bytes: from the
        second invoke that sees the same bytes, the output stages prepare builds for
        constant tensors are built for them too and kept while the bytes stay equal
        (weights that change every invoke take the plain path without that cost)."""
        w = node.input_arrays[WEIGHTS]
        b = node.input_arrays[BIAS] if data.has_bias else None
        key = (w.tobytes(), None if b is None else b.tobytes())
        cached = data.runtime_constants
        if cached is not None and cached[0] == key:
            full = cached[1]
            if not cached[2]:
                self._output_stages(full)
                data.runtime_constants = (key, full, True)
            return full
        full = copy.copy(data)
        full.requantizer = full.folded = None
        if full.weights is None:
            full.weights = self._weights(data, w)
        if b is not None and full.bias is None:
            full.bias = self._bias(data, b).copy()
        data.runtime_constants = (key, full, False)
        return full

    @staticmethod
    def _weights(data, w) -> np.ndarray:
        """The weights as a (depth x outputs) matrix: float32, or float64 with the
        filter offset applied (per-tensor int8)."""
        if data.filter_type == INT4:
            w = unpack_int4(w, flat_size(data.filter_shape)).reshape(data.filter_shape)
        if data.accum_depth == 0:       # a zero-size input dimension: every sum is empty
            w = np.zeros((data.output_depth, 0), dtype=np.asarray(w).dtype)
        else:
            w = np.asarray(w).reshape(-1, data.accum_depth)[:data.output_depth]
        if data.input_type == FLOAT32:
            return np.array(w.T, dtype=np.float32, order="C")   # a copy: w may be arena memory
        offset = 0 if data.is_per_channel else -data.filter_zero_point
        return np.ascontiguousarray((w.astype(np.float64) + offset).T)

    @staticmethod
    def _bias(data, b) -> np.ndarray:
        return np.asarray(b).reshape(-1)[:data.output_depth]

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

    @staticmethod
    def _folded_stage(data, input_type):
        """The int8 per-tensor output stage folded with the product
        (:class:`FoldedFcStage`: one float64 product with the bias column, five int32
        passes; exact, tests/test_folded_stages.py), or None where it does not apply (the
        requantizer path then runs)."""
        if input_type != INT8 or data.is_per_channel or data.int64_accum:
            return None
        weights = np.rint(data.weights.T).astype(np.int64)          # (outputs, depth)
        o = data.output_depth
        table = SaturatingTableFc(weights, -data.input_zero_point, (-128, 127), data.bias,
                                  data.output_multiplier, data.output_shift,
                                  data.output_zero_point, data.act_min, data.act_max)
        if table.available:
            return table
        stage = FoldedFcStage(weights, -data.input_zero_point, (-128, 127), data.bias,
                              [data.output_multiplier] * o, [data.output_shift] * o,
                              data.output_zero_point, data.act_min, data.act_max)
        return stage if stage.available and stage.uniform_limit is not None else None

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
            data.per_channel_multiplier = ctx.persistent_array(np.int32, n, written=True)
            data.per_channel_shift = ctx.persistent_array(np.int32, n, written=True)
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
        if flt.zero_point != 0 and getattr(ctx.target, "debug_checks", False):
            raise ctx.error(f"weights zero point {flt.zero_point}: TFLM's CalculateOpDataFullyConnected "
                            "debug-checks that it is 0, and this build keeps its debug checks (it aborts)")
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
        if data.decompress:
            ctx.decompress_inputs(node, data.decompress)
        if data.weights is None or (data.has_bias and data.bias is None):
            data = self._with_runtime_constants(data, node)
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        b, d, o = data.batches, data.accum_depth, data.output_depth
        flat_out = out.reshape(-1)
        weights = data.weights
        bias = data.bias
        if x.dtype == np.float32:
            lo, hi = activation_range_float(data.activation)
            x86 = current_cpu() == "x86"   # NaN payloads as the package's x86 code picks them
            total = float32_sequential_matmul(x.reshape(-1)[: b * d].reshape(b, d), weights,
                                              fused=ctx.target.float_fma, x86_nans=x86)
            if bias is not None:
                if x86:         # the package computes bias + total (the NaN of the bias first)
                    total = first_nan(bias, total, np.add(bias, total))
                else:
                    np.add(total, bias, out=total)
            np.maximum(total, lo, out=total)
            np.minimum(total, hi, out=total)
            np.copyto(flat_out.reshape(b, o), total)
            return
        if isinstance(data.folded, SaturatingTableFc) and out.dtype == np.int8:
            data.folded(x.reshape(-1)[: b * d].reshape(b, d), flat_out.reshape(b, o))
            return
        if isinstance(data.folded, FoldedFcStage):
            q = data.folded.rows_last(x.reshape(-1)[: b * d].reshape(b, d))
            q -= data.folded.offset
            np.copyto(flat_out.reshape(b, o), q, casting="unsafe")
            return
        xin = np.subtract(x.reshape(-1)[: b * d].reshape(b, d), data.input_zero_point,
                          dtype=np.float64)
        if data.requantizer is not None:
            # the float64 product holds the exact integer sums (bounded in prepare), which
            # the requantizer takes as they are
            np.copyto(flat_out.reshape(b, o), data.requantizer((xin @ weights).T).T,
                      casting="unsafe")
            return
        acc = exact_int_matmul(xin, weights, check=False)
        if bias is not None:
            acc = acc + bias.astype(np.int64)
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
