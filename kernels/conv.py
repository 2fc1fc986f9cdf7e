"""CONV_2D as TFLM's reference kernels compute it.

Type paths (input / filter / bias -> output):

* float32 / float32 / float32: one float32 multiply-add per tap in TFLM's order
  (filter_y, filter_x, in_channel), taps outside the image skipped, then bias, then the
  activation clamp;
* int8 / int8 or int4 / int32: per-channel or per-tensor quantization (TFLM always uses
  per-channel multipliers, a per-tensor scale is broadcast), the filter zero point is
  ignored, int32 accumulator, 32-bit double-rounding requantisation;
* int16 / int8 / int64 or int32 (or none): no input / output offsets; int64 accumulator
  and the 64-bit requantisation, except with an int32 bias (or no bias and
  ``quantized_bias_type`` INT32), where TFLM accumulates in int32 and requantises with
  the 32-bit routine.

Grouped convolutions (filter depth dividing the input depth) are supported as in TFLM.

Quantized paths run as one im2col matrix product: the input is shifted by its zero point
(so a tap outside the image, which TFLM skips, contributes exactly zero), padded with
zeros, cut into windows with stride tricks and multiplied with the filter matrix in
float32 or float64 BLAS. The product is exact: prepare bounds every partial sum
(sum of |filter| per channel times the largest |input - zero point|) and picks float32
only below 2^24. The int32 wrap of TFLM's accumulator is reproduced when the same bound
says it can happen.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import batch_axis_rows
from .internal.matmul import exact_float_dtype
from .internal.padding import (check_host_buffer, PaddingValues, compute_padding_height_width, padded_extent,
                      padding_mode, tap_range, window_view)
from .internal.quantization import (ChannelRequantizer, activation_bounds_float32,
                           activation_range_quantized, clamp_float32, quantize_multiplier_array,
                           work_buffer)
from .internal.tensor_utils import (FLOAT32, INT4, INT8, INT16, INT32, INT64, flat_size, type_name,
                           unpack_int4)

INPUT, FILTER, BIAS = 0, 1, 2
OUTPUT = 0
QUANTIZED_DIMENSION = 0


# ------------------------------------------------------------------ shared helpers
def check_geometry_params(ctx, stride_h: int, stride_w: int, dilation_h: int = 1,
                          dilation_w: int = 1) -> None:
    """Strides and dilations must be positive (TFLM would run a degenerate loop)."""
    if stride_h < 1 or stride_w < 1:
        raise ctx.error(f"strides must be >= 1 (got stride_h={stride_h}, stride_w={stride_w})")
    if dilation_h < 1 or dilation_w < 1:
        raise ctx.error(f"dilation factors must be >= 1 (got dilation_h_factor={dilation_h}, "
                        f"dilation_w_factor={dilation_w})")


def check_weight_types(ctx, inp, flt) -> None:
    """TFLM's conv / depthwise / CMSIS-NN fully-connected check of the (input, filter)
    type pair: float32/float32, int8/int8, int8/int4, int16/int8; anything else is a
    hybrid model, which TFLM Micro refuses."""
    if not ((inp.type == FLOAT32 and flt.type == FLOAT32)
            or (inp.type == INT16 and flt.type == INT8)
            or (inp.type == INT8 and flt.type in (INT8, INT4))):
        raise ctx.error(f"Hybrid models are not supported on TFLite Micro (input type "
                        f"{type_name(inp.type)} with filter type {type_name(flt.type)}; "
                        "supported: float32/float32, int8/int8, int8/int4, int16/int8)")


def conv_geometry(ctx, params, in_h: int, in_w: int, filter_h: int, filter_w: int):
    """The geometry part of TFLM's CalculateOpDataConv (CONV_2D and DEPTHWISE_CONV_2D,
    reference and CMSIS-NN): strides and dilations from the options, checked, and the
    padding. Returns ``(stride_h, stride_w, dilation_h, dilation_w, padding)``."""
    sh, sw = int(params.stride_h), int(params.stride_w)
    dh, dw = int(params.dilation_h_factor), int(params.dilation_w_factor)
    check_geometry_params(ctx, sh, sw, dh, dw)
    padding, _, _ = compute_padding_height_width(sh, sw, dh, dw, in_h, in_w, filter_h, filter_w,
                                                 padding_mode(params))
    return sh, sw, dh, dw, padding


def require_4d(ctx, **tensors) -> None:
    for name, t in tensors.items():
        if len(t.shape) != 4:
            raise ctx.error(f"{name} must have 4 dimensions (got shape {t.shape})")


def populate_conv_quantization(ctx, inp, flt, bias, out, activation: int, num_channels: int,
                               multiplier: np.ndarray, shift: np.ndarray):
    """TFLM's PopulateConvolutionQuantizationParams for int8 / int16 inputs: fills the
    per-channel multiplier / shift arrays (a per-tensor filter scale is broadcast) and
    returns the quantized activation range."""
    if inp.quantization is None:
        raise ctx.error(f"input tensor ({type_name(inp.type)}) has no quantization parameters")
    q = flt.quantization
    if q is None:
        raise ctx.error(f"filter tensor ({type_name(flt.type)}) has no quantization parameters")
    if out.quantization is None or not out.scale > 0:
        raise ctx.error(f"output tensor ({type_name(out.type)}) needs a positive quantization "
                        "scale")
    per_channel = q.scales.size > 1
    if per_channel:
        if inp.type not in (INT8, INT16):
            raise ctx.error(f"per-channel quantization needs an int8 or int16 input, not "
                            f"{type_name(inp.type)}")
        if flt.type not in (INT8, INT4):
            raise ctx.error(f"per-channel quantization needs an int8 or int4 filter, not "
                            f"{type_name(flt.type)}")
        if q.scales.size != num_channels:
            raise ctx.error(f"filter has {q.scales.size} quantization scales for {num_channels} "
                            "output channels")
        qd = q.quantized_dimension
        if not 0 <= qd < len(flt.shape) or flt.shape[qd] != num_channels:
            raise ctx.error(f"filter quantized_dimension {qd} of shape {flt.shape} does not hold "
                            f"its {num_channels} channel scales")
    if per_channel:
        scales = q.scales.astype(np.float64)
    else:
        scales = np.full(num_channels, float(q.scales[0]))
    effective = (np.float64(inp.scale) * scales) / np.float64(out.scale)
    try:
        multiplier[:], shift[:] = quantize_multiplier_array(effective)
        return activation_range_quantized(activation, out.dtype, out.scale, out.zero_point)
    except ValueError as e:
        raise ctx.error(str(e)) from None


def largest_input_offset_value(input_type: int, zero_point: int) -> int:
    """Largest |input - zero_point| over the input type's range (the bound of one
    activation operand of a product)."""
    if input_type == INT8:
        return max(abs(-128 - zero_point), abs(127 - zero_point))
    return 1 << 15  # int16: no offset is applied


def filter_values(flt_type: int, data: np.ndarray, shape) -> np.ndarray:
    """The filter as int8 / float32 values of its shape (int4 unpacked)."""
    if flt_type == INT4:
        return unpack_int4(data, flat_size(shape)).reshape(shape)
    return np.asarray(data).reshape(shape)


def check_bias(ctx, bias, input_type: int, allowed, channels: int) -> None:
    if bias is None:
        return
    if bias.type not in allowed:
        raise ctx.error(f"bias type {type_name(bias.type)} not supported with "
                        f"{type_name(input_type)} input (expected "
                        + " or ".join(type_name(t) for t in allowed) + ")")
    if flat_size(bias.shape) != channels:
        raise ctx.error(f"bias has {flat_size(bias.shape)} values for {channels} output channels")


def make_requantizer(data, bias, acc_bound) -> ChannelRequantizer:
    """The node's output stage (bias, per-channel requantisation, offset, clamp)."""
    return ChannelRequantizer(data.per_channel_multiplier, data.per_channel_shift, bias,
                              data.output_offset, data.output_activation_min,
                              data.output_activation_max, data.int64_accum, acc_bound)


def write_channels_first(values: np.ndarray, out: np.ndarray) -> None:
    """(C, N) results, or (C, batch, height, width), into the NHWC output
    (N = batch x height x width)."""
    if values.ndim == 4:
        np.copyto(out, np.moveaxis(values, 0, -1), casting="unsafe")
        return
    channels = out.shape[-1]
    np.copyto(out.reshape(-1, channels), values.reshape(channels, -1).T, casting="unsafe")


def float_finish(total: np.ndarray, bias, activation: int, out: np.ndarray) -> None:
    """float32 sum + bias, then TFLM's activation clamp (bounds +-FLT_MAX without an
    activation, so an overflow to infinity is clamped as in TFLM), into ``out``."""
    if bias is not None:
        total += np.asarray(bias, dtype=np.float32).reshape(-1)
    lo, hi = activation_bounds_float32(activation)
    np.copyto(out, clamp_float32(total, lo, hi).reshape(out.shape))


class OpData:
    """TFLM's OpDataConv plus host-side caches (geometry, filter matrix, buffers)."""

    padding = PaddingValues()
    input_zero_point = 0
    filter_zero_point = 0
    output_zero_point = 0
    output_multiplier = 0
    output_shift = 0
    per_channel_multiplier = None
    per_channel_shift = None
    output_activation_min = 0
    output_activation_max = 0
    filter_buffer_index = -1
    #: compressed inputs (COMPRESSION_METADATA): input -> decompression scratch index
    decompress: dict = {}
    # host-side
    kind = None             # FLOAT32, INT8 or INT16 (the input type)
    int64_accum = False
    output_offset = 0
    activation = 0
    filter_const = None     # filter values when constant (int8 unpacked / float32)
    bias_const = None
    cache = None            # (float dtype, filter matrix, requantizer): constant filter, bias
    xbuf = None             # zero-bordered, zero-point-shifted input buffer
    xbuf64 = None           # the same in float64 (the fused output stage's product)
    fused = None            # (cache, fused output plan or None) for the constant cache
    acc_buffers = None      # depthwise: preallocated accumulator and product buffers
    rows = None             # depthwise: (cache, row layout plan or None) for the constant cache
    rows_layout = None      # depthwise: the DepthwiseRows buffers (geometry only)
    runtime_cache = None    # (copies of run-time filter / bias values, the cache built from them)


class BiasWidthParams:
    """The node's conv params with the int16 accumulator decided by the bias tensor alone
    (int64 only for an int64 bias; no bias: int32), as optimised kernel libraries decide
    it (CMSIS-NN's, esp-tflite-micro's) instead of the model's quantized_bias_type."""

    def __init__(self, params, int64: bool):
        self._params = params
        self._int64 = int64

    def get(self, name, default=None):
        if name == "quantized_bias_type":
            return INT64 if self._int64 else INT32
        return self._params.get(name, default)

    def __getattr__(self, name):
        return getattr(self._params, name)


@register
class Conv2D(Kernel):
    op = "CONV_2D"
    supported_types = ("float32", "int8 (bias int32)", "int8 x int4 (packed, bias int32)",
                       "int16 x int8 (bias int32 or int64)")
    weights_input = 1

    def sample_rows(self, block):
        """Batch rows are independent: the sample axis replaces the unit batch axis."""
        return batch_axis_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("conv.OpDataConv"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        out = ctx.output(node, OUTPUT)
        inp = ctx.input(node, INPUT)
        flt = ctx.input(node, FILTER)
        if out is None or inp is None or flt is None:
            raise ctx.error("needs an input, a filter and an output tensor")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        check_weight_types(ctx, inp, flt)
        require_4d(ctx, input=inp, filter=flt, output=out)
        batches, in_h, in_w, in_depth = inp.shape
        out_depth, filter_h, filter_w, filter_depth = flt.shape
        if out.shape[0] != batches:
            raise ctx.error(f"output batch {out.shape[0]} differs from input batch {batches}")
        if out.shape[3] != out_depth:
            raise ctx.error(f"output has {out.shape[3]} channels but the filter has {out_depth}")
        if filter_depth < 1 or in_depth % filter_depth:
            raise ctx.error(f"input depth {in_depth} is not a multiple of the filter depth "
                            f"{filter_depth}")
        groups = in_depth // filter_depth
        if out_depth % groups:
            raise ctx.error(f"output depth {out_depth} is not a multiple of the {groups} groups")

        num_channels = flt.shape[QUANTIZED_DIMENSION]
        data.per_channel_multiplier = ctx.persistent_array(np.int32, num_channels)
        data.per_channel_shift = ctx.persistent_array(np.int32, num_channels)
        if inp.type in (INT8, INT16):
            q = flt.quantization
            if q is None:
                raise ctx.error("quantized filter has no quantization parameters")
            if q.scales.size not in (1, num_channels):
                raise ctx.error(f"filter has {q.scales.size} quantization scales; expected 1 or "
                                f"{num_channels}")

        # --- TFLM's CalculateOpDataConv
        if len(node.inputs) not in (2, 3) or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 or 3 inputs and 1 output (got {len(node.inputs)} and "
                            f"{len(node.outputs)})")
        sh, sw, dh, dw, data.padding = conv_geometry(ctx, params, in_h, in_w, filter_h, filter_w)
        inp2 = ctx.input(node, INPUT)
        flt2 = ctx.input(node, FILTER)
        bias = ctx.input(node, BIAS)
        out2 = ctx.output(node, OUTPUT)
        activation = int(params.fused_activation_function)
        if inp.type == FLOAT32:
            check_bias(ctx, bias, inp.type, (FLOAT32,), out_depth)
        else:
            data.output_activation_min, data.output_activation_max = populate_conv_quantization(
                ctx, inp2, flt2, bias, out2, activation, num_channels,
                data.per_channel_multiplier, data.per_channel_shift)
            check_bias(ctx, bias, inp.type, (INT32,) if inp.type == INT8 else (INT32, INT64),
                       out_depth)
        data.input_zero_point = inp2.zero_point
        data.filter_zero_point = flt2.zero_point
        data.output_zero_point = out2.zero_point
        has_bias = bias is not None
        bias_type = bias.type if has_bias else None
        bias_data = bias.data if has_bias else None
        ctx.release(out2, inp2, flt2, bias)

        if flt.type == INT4:
            if flt.data is None:
                raise ctx.error("an int4 filter must be a constant tensor")
            data.filter_buffer_index = ctx.request_scratch(flat_size(flt.shape))
        if ctx.is_tensor_compressed(node, FILTER) and flt.type == INT4:
            raise ctx.error("Compression not supported with INT4 tensors")
        data.decompress = ctx.decompression_scratch(node, FILTER, BIAS)

        # --- host-side caches
        data.kind = inp.type
        data.activation = activation
        data.geometry = (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth,
                         out.shape[1], out.shape[2], sh, sw, dh, dw, groups, filter_depth)
        data.filter_type = flt.type
        data.filter_shape = flt.shape
        data.has_bias = has_bias
        data.bias_const = None if bias_data is None else np.asarray(bias_data).reshape(-1)
        data.filter_const = (None if flt.data is None
                             else filter_values(flt.type, flt.data, flt.shape))
        if inp.type != FLOAT32:
            try:
                self._prepare_integer(ctx, data, params, inp, bias_type)
            except (ValueError, OverflowError) as e:
                raise ctx.error(str(e)) from None
        ctx.release(flt, inp, out)

    def _prepare_integer(self, ctx, data, params, inp, bias_type):
        if inp.type == INT16:
            if bias_type is not None:
                data.int64_accum = bias_type == INT64
            else:
                data.int64_accum = int(params.get("quantized_bias_type", 0)) != INT32
            data.offset = 0
            data.output_offset = 0
        else:
            data.offset = data.input_zero_point
            data.output_offset = data.output_zero_point
        data.max_input = largest_input_offset_value(inp.type, data.offset)
        if data.filter_const is not None and (data.bias_const is not None or not data.has_bias):
            data.cache = self._filter_cache(data, data.filter_const, data.bias_const)
        (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
         sh, sw, dh, dw, groups, filter_depth) = data.geometry
        pad = data.padding
        data.direct = (filter_h == 1 and filter_w == 1 and sh == 1 and sw == 1
                       and pad.height == 0 and pad.width == 0 and out_h == in_h and out_w == in_w)
        data.padded_shape = (batches,
                             padded_extent(in_h, pad.height, out_h, filter_h, sh, dh),
                             padded_extent(in_w, pad.width, out_w, filter_w, sw, dw), in_depth)
        check_host_buffer(ctx, int(np.prod(data.padded_shape, dtype=object)), "the padded input")
        check_host_buffer(ctx, batches * out_h * out_w * filter_h * filter_w * in_depth,
                          "the im2col matrix")

    @staticmethod
    def _filter_cache(data, w, bias):
        """(float dtype, filter matrix (O, K) or (groups, O / groups, K), requantizer)."""
        (_, _, _, _, filter_h, filter_w, out_depth, _, _, _, _, _, _,
         groups, filter_depth) = data.geometry
        w64 = np.asarray(w, dtype=np.int64)
        per_channel = np.abs(w64).reshape(out_depth, -1).sum(axis=1) * data.max_input
        bound = float(per_channel.max(initial=0))
        dtype = exact_float_dtype(bound)
        if dtype is None:
            raise OverflowError("convolution sums exceed 2^53: not computable exactly")
        k = filter_h * filter_w * filter_depth
        mat = w64.reshape(out_depth, k) if groups == 1 else w64.reshape(groups, -1, k)
        return dtype, np.ascontiguousarray(mat, dtype=dtype), make_requantizer(data, bias, bound)

    # ----------------------------------------------------------------- invoke
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
        if cache is None:  # filter or bias computed at run time
            w = filter_values(data.filter_type, node.input_arrays[FILTER], data.filter_shape)
            b = node.input_arrays[BIAS] if data.has_bias else None
            cache = runtime_cache(data, lambda: self._filter_cache(data, w, b), w, b)
        fused = fused_conv_plan(data, cache, out.dtype)
        if fused is not None:
            fused_conv_into(data, x, fused, out)
            return
        dtype, mat, requantizer = cache
        acc = conv_accumulators(data, x, dtype, mat)
        stage = (requantizer.fused(out.dtype) if type(requantizer) is ChannelRequantizer
                 and data.geometry[13] == 1 else None)
        rows = acc.T.reshape(out.shape[0], -1) if stage is not None else None
        if stage is not None and stage.covers(rows):
            # the float64 plan's fused form on the (pixels, channels) product: no floor
            # pass and no transposing write (acc is the transpose of a C-ordered array)
            t = work_buffer("conv-out", rows.shape, np.float64)
            pixels = out.shape[1] * out.shape[2]
            stage.scale_into(rows, t, pixels)
            stage.finish(t, out.reshape(rows.shape), pixels)
            return
        write_channels_first(requantizer(acc), out)

    def _invoke_float(self, data, node, x, out):
        (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
         sh, sw, dh, dw, groups, filter_depth) = data.geometry
        w = data.filter_const if data.filter_const is not None else node.input_arrays[FILTER]
        w = np.asarray(w, dtype=np.float32)
        fpg = out_depth // groups
        total = np.zeros((batches, out_h, out_w, out_depth), dtype=np.float32)
        pad = data.padding
        for fy in range(filter_h):
            oy0, oy1 = tap_range(out_h, sh, fy * dh - pad.height, in_h)
            if oy0 >= oy1:
                continue
            iy0 = oy0 * sh + fy * dh - pad.height
            rows = slice(iy0, iy0 + (oy1 - oy0 - 1) * sh + 1, sh)
            for fx in range(filter_w):
                ox0, ox1 = tap_range(out_w, sw, fx * dw - pad.width, in_w)
                if ox0 >= ox1:
                    continue
                ix0 = ox0 * sw + fx * dw - pad.width
                cols = slice(ix0, ix0 + (ox1 - ox0 - 1) * sw + 1, sw)
                xs = x[:, rows, cols, :]
                target = total[:, oy0:oy1, ox0:ox1, :]
                for ic in range(filter_depth):
                    if groups == 1:
                        xv = xs[..., ic:ic + 1]
                    else:
                        xv = np.repeat(xs[..., ic::filter_depth], fpg, axis=-1)
                    target += xv * w[:, fy, fx, ic]
        bias = None
        if data.has_bias:
            bias = data.bias_const if data.bias_const is not None else node.input_arrays[BIAS]
        float_finish(total, bias, data.activation, out)


def conv_accumulators(data, x: np.ndarray, dtype, mat: np.ndarray) -> np.ndarray:
    """Exact integer sums of filter x (input - offset) over every window, channels first:
    shape (out_depth, batches * out_h * out_w), in the float ``dtype`` (exact); without
    groups a transposed view (the channels innermost in memory)."""
    (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
     sh, sw, dh, dw, groups, filter_depth) = data.geometry
    n = batches * out_h * out_w
    if data.direct:
        cols = np.subtract(x, data.offset, dtype=dtype).reshape(n, in_depth)
    else:
        buf = data.xbuf
        if buf is None or buf.dtype != dtype:
            buf = data.xbuf = np.zeros(data.padded_shape, dtype=dtype)
        pad = data.padding
        np.subtract(x, data.offset, out=buf[:, pad.height:pad.height + in_h,
                                            pad.width:pad.width + in_w, :], dtype=dtype)
        cols = window_view(buf, out_h, out_w, filter_h, filter_w, sh, sw, dh, dw)
        cols = cols.reshape(n, filter_h * filter_w * in_depth)
    if groups == 1:
        # computed as (n, out_depth) and returned transposed: the requantizer keeps that
        # layout, so the NHWC output is written without a transposing copy
        return (cols @ mat.T).T
    cols = cols.reshape(n, filter_h, filter_w, groups, filter_depth)
    cols = cols.transpose(3, 0, 1, 2, 4).reshape(groups, n, -1)
    return np.matmul(mat, cols.transpose(0, 2, 1)).reshape(out_depth, n)


#: the folded product is a float64 product instead of a float32 one; it wins while the
#: output stage passes it removes outweigh that: up to this many im2col columns (2026-11,
#: vww / person_detect 1x1 layers of depth 8 and 16 gain 15-25 %, depths 27 to 64 lose)
FUSED_MAX_DEPTH = 16


def fused_conv_plan(data, cache, out_dtype):
    """(FusedRequant, (K + 1, O) float64 matrix) when the convolution's output stage can be
    folded into its matrix product (see :class:`~kernels.internal.quantization.FusedRequant`):
    a plain :class:`ChannelRequantizer` with an exact float64 plan, no groups, and a depth
    where the float64 product costs less than the separate output stage; else None. Kept on
    ``data`` for the constant cache."""
    held = data.fused
    if held is not None and held[0] is cache:
        return held[1]
    plan = None
    dtype, mat, requantizer = cache
    groups = data.geometry[13]
    if (type(requantizer) is ChannelRequantizer and groups == 1 and mat.ndim == 2
            and mat.shape[1] <= FUSED_MAX_DEPTH):
        fused = requantizer.fused(out_dtype)
        if fused is not None and fused.runtime_bound is None:
            plan = (fused, fused.weights(mat))
    data.fused = (cache, plan)
    return plan


def runtime_cache(data, build, *arrays):
    """The cache built by ``build()`` from run-time filter / bias ``arrays``, reused while
    they repeat value for value (decoded weights are the same on every invoke): compared
    with copies of the values it was built from."""
    held = data.runtime_cache
    if held is not None and len(held[0]) == len(arrays) and all(
            (a is None and b is None) or (a is not None and b is not None and a.shape == b.shape
                                          and a.dtype == b.dtype and np.array_equal(a, b))
            for a, b in zip(held[0], arrays)):
        return held[1]
    cache = build()
    data.runtime_cache = (tuple(None if a is None else np.array(a, copy=True) for a in arrays), cache)
    return cache


def fused_conv_into(data, x: np.ndarray, plan, out: np.ndarray) -> None:
    """The integer convolution with its output stage folded in: ``cols @ (w.T * k)`` in
    float64 (exactly x * k, see :class:`FusedRequant`), plus c along rows of one
    sample's pixels (exact too), then the clamp and narrowing straight into the NHWC
    output."""
    fused, matrix = plan
    (batches, in_h, in_w, in_depth, filter_h, filter_w, out_depth, out_h, out_w,
     sh, sw, dh, dw, groups, filter_depth) = data.geometry
    n = batches * out_h * out_w
    k = matrix.shape[0] - 1
    cols = work_buffer("conv-cols", (n, k), np.float64)
    if data.direct:
        np.subtract(x.reshape(n, in_depth), data.offset, out=cols, dtype=np.float64)
    else:
        buf = data.xbuf64
        if buf is None:
            buf = data.xbuf64 = np.zeros(data.padded_shape, dtype=np.float64)
        pad = data.padding
        np.subtract(x, data.offset, out=buf[:, pad.height:pad.height + in_h,
                                            pad.width:pad.width + in_w, :], dtype=np.float64)
        windows = window_view(buf, out_h, out_w, filter_h, filter_w, sh, sw, dh, dw)
        np.copyto(cols.reshape(windows.shape), windows)
    t = work_buffer("conv-out", (n, out_depth), np.float64)
    np.matmul(cols, matrix[:k], out=t)
    pixels = out_h * out_w
    rows = t.reshape(batches, pixels * out_depth)
    np.add(rows, fused.row("c", pixels), out=rows)
    fused.finish(rows, out.reshape(rows.shape), pixels)
