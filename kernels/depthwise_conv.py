"""DEPTHWISE_CONV_2D as TFLM's reference kernels compute it.

Type paths (input / filter / bias -> output):

* float32 / float32 / float32: one float32 multiply-add per tap in TFLM's order
  (filter_y, filter_x), taps outside the image skipped, then bias, then the clamp;
* int8 / int8 or int4 / int32: per-channel or per-tensor quantization (per-channel
  multipliers always; the filter zero point is ignored), int32 accumulator (wrapping as
  C++ does), 32-bit double-rounding requantisation;
* int16 / int8 / int64 (or none): int64 accumulator, no input / output offsets, 64-bit
  requantisation.

Output channel ``ic * depth_multiplier + m`` reads input channel ``ic``. The sums run
over the kernel taps with whole-tensor numpy operations: for each tap only the
rectangle of outputs whose input lies inside the image is updated (TFLM skips the other
taps), so no padding copy is needed. Integer accumulators are int32 (int8 path: the
wrap-around of numpy int32 is TFLM's) or int64 (int16 path).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import batch_axis_rows
from .conv import (FUSED_MAX_DEPTH, OpData, check_bias, check_weight_types, conv_geometry,
                   filter_values, float_finish, make_requantizer, populate_conv_quantization,
                   require_4d, runtime_cache, write_channels_first)
from .internal.matmul import exact_float_dtype
from .internal.quantization import ChannelRequantizer, work_buffer
from .internal.padding import check_host_buffer, padded_extent, tap_range
from .internal.tensor_utils import FLOAT32, INT4, INT8, INT16, INT32, INT64, flat_size, type_name

INPUT, FILTER, BIAS = 0, 1, 2
OUTPUT = 0
QUANTIZED_DIMENSION = 3


@register
class DepthwiseConv2D(Kernel):
    op = "DEPTHWISE_CONV_2D"
    supported_types = ("float32", "int8 (bias int32)", "int8 x int4 (packed, bias int32)",
                       "int16 x int8 (bias int64)")
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
        require_4d(ctx, input=inp, filter=flt, output=out)
        batches, in_h, in_w, in_depth = inp.shape
        _, filter_h, filter_w, out_depth = flt.shape
        multiplier = int(params.depth_multiplier)
        if flt.shape[0] < 1:
            raise ctx.error(f"filter of shape {flt.shape} is empty")
        if out.shape[0] != batches:
            raise ctx.error(f"output batch {out.shape[0]} differs from input batch {batches}")
        if out.shape[3] != out_depth:
            raise ctx.error(f"output has {out.shape[3]} channels but the filter has {out_depth}")
        if out_depth != in_depth * multiplier:
            raise ctx.error(f"output depth {out_depth} is not input depth {in_depth} x "
                            f"depth_multiplier {multiplier}")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")

        num_channels = flt.shape[QUANTIZED_DIMENSION]
        data.per_channel_multiplier = ctx.persistent_array(np.int32, num_channels)
        data.per_channel_shift = ctx.persistent_array(np.int32, num_channels)
        if inp.type == INT8:
            q = flt.quantization
            if q is None:
                raise ctx.error("quantized filter has no quantization parameters")
            if q.scales.size not in (1, num_channels):
                raise ctx.error(f"filter has {q.scales.size} quantization scales; expected 1 or "
                                f"{num_channels}")
            if q.scales.size != q.zero_points.size:
                raise ctx.error(f"filter has {q.scales.size} scales but {q.zero_points.size} "
                                "zero points")
        check_weight_types(ctx, inp, flt)
        if flt.type == INT4:
            if flt.data is None:
                raise ctx.error("an int4 filter must be a constant tensor")
            data.filter_buffer_index = ctx.request_scratch(flat_size(flt.shape))

        # --- TFLM's CalculateOpDataDepthwiseConv
        if len(node.inputs) not in (2, 3) or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 or 3 inputs and 1 output (got {len(node.inputs)} and "
                            f"{len(node.outputs)})")
        if len(node.inputs) == 3 and node.inputs[BIAS] < 0:
            # TFLM counts a third input as a bias and releases its (null) temp tensor
            raise ctx.error("an omitted bias (input 2 = -1) crashes TFLM's depthwise conv "
                            "prepare; give the node two inputs instead")
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
            check_bias(ctx, bias, inp.type, (INT32,) if inp.type == INT8 else (INT64,), out_depth)
        data.input_zero_point = inp2.zero_point
        data.filter_zero_point = flt2.zero_point
        data.output_zero_point = out2.zero_point
        data.has_bias = bias is not None
        bias_data = bias.data if bias is not None else None
        ctx.release(inp2, flt2, bias, out2)
        if ctx.is_tensor_compressed(node, FILTER) and flt.type == INT4:
            raise ctx.error("Compression not supported with INT4 tensors")
        data.decompress = ctx.decompression_scratch(node, FILTER, BIAS)

        # --- host-side caches
        data.kind = inp.type
        data.activation = activation
        data.geometry = (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w,
                         out.shape[1], out.shape[2], sh, sw, dh, dw)
        data.filter_type, data.filter_shape = flt.type, flt.shape
        data.filter_const = None if flt.data is None else self._taps(data, flt.data)
        data.bias_const = None if bias_data is None else np.asarray(bias_data).reshape(-1)
        if inp.type != FLOAT32:
            data.int64_accum = inp.type == INT16
            data.offset = data.input_zero_point if inp.type == INT8 else 0
            data.output_offset = data.output_zero_point if inp.type == INT8 else 0
            self._plan_flat_taps(data)
            wp, pitch, length, rows = data.flat
            channels = in_depth * multiplier
            # the layout whose innermost loop is longer (see _invoke_channels_last)
            data.channels_last = (channels >= 16 or channels > length) and not (in_depth == 1 and multiplier > 1)
            pad = data.padding
            data.padded_hw = (
                padded_extent(in_h, pad.height, out.shape[1], filter_h, sh, dh),
                padded_extent(in_w, pad.width, out.shape[2], filter_w, sw, dw))
            # the padded input of the channels-last and row layouts (the latter rounds the
            # width up to a multiple of the stride)
            check_host_buffer(ctx, batches * data.padded_hw[0] * (data.padded_hw[1] + sw) * channels,
                              "the padded input")
            if not data.channels_last:
                check_host_buffer(ctx, in_depth * batches * rows * wp, "the padded input")
            check_host_buffer(ctx, channels * batches * length, "the accumulator")
            if data.filter_const is not None and (data.bias_const is not None or not data.has_bias):
                try:
                    data.cache = self._integer_cache(data, data.filter_const, data.bias_const)
                except (ValueError, OverflowError) as e:
                    raise ctx.error(str(e)) from None
        ctx.release(out, inp, flt)

    @staticmethod
    def _taps(data, raw) -> np.ndarray:
        """Filter as (filter_h, filter_w, in_depth, depth_multiplier): float32, or int64
        for the integer paths (first filter row only, as TFLM reads it)."""
        (_, _, _, in_depth, multiplier, filter_h, filter_w, *_rest) = data.geometry
        w = filter_values(data.filter_type, raw, data.filter_shape)[0]
        dtype = np.float32 if data.kind == FLOAT32 else np.int64
        return np.ascontiguousarray(w.reshape(filter_h, filter_w, in_depth, multiplier),
                                    dtype=dtype)

    @staticmethod
    def _integer_cache(data, taps, bias):
        """(float dtype in which the sums are exact, taps in it shaped for channels-first
        broadcasting, requantizer). The bound of every sum is sum |filter| x the largest
        |input - offset|."""
        (_, _, _, in_depth, multiplier, filter_h, filter_w, *_rest) = data.geometry
        limit = 128 + abs(data.offset) if data.kind == INT8 else 1 << 15
        bound = float((np.abs(taps).sum(axis=(0, 1)) * limit).max(initial=0))
        dtype = exact_float_dtype(bound)
        if dtype is None:
            raise OverflowError("depthwise sums exceed 2^53: not computable exactly")
        wt = taps.astype(dtype).reshape(filter_h, filter_w, in_depth, multiplier, 1, 1)
        return dtype, wt, make_requantizer(data, bias, bound)

    @staticmethod
    def _plan_flat_taps(data) -> None:
        """Layout of the integer paths' input buffer: channels first, zero-point shifted,
        zero padded, each (channel, batch) image flattened with a row pitch ``wp`` (a
        multiple of the stride). Output (y, x) of tap (fy, fx) then reads flat position
        ``fy * dh * wp + fx * dw + sw * (y * pitch + x)`` with ``pitch = sh * wp / sw``:
        every tap is one strided 1-D slice of length out_h * pitch (columns x >= out_w
        are computed and dropped), so numpy runs long inner loops."""
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        pad = data.padding
        wp = padded_extent(in_w, pad.width, out_w, filter_w, sw, dw)
        wp = -(-wp // sw) * sw
        pitch = sh * wp // sw
        length = out_h * pitch
        need = (filter_h - 1) * dh * wp + (filter_w - 1) * dw + sw * (length - 1) + 1
        rows = max(padded_extent(in_h, pad.height, out_h, filter_h, sh, dh), -(-need // wp))
        data.flat = (wp, pitch, length, rows)

    def invoke(self, ctx, node):
        data = node.user_data
        if data.decompress:
            ctx.decompress_inputs(node, data.decompress)
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        if out.size == 0:
            return
        w = data.filter_const
        if w is None:
            w = self._taps(data, node.input_arrays[FILTER])
        bias = data.bias_const
        if bias is None and data.has_bias:
            bias = np.asarray(node.input_arrays[BIAS]).reshape(-1)
        if data.kind == FLOAT32:
            with np.errstate(over="ignore", invalid="ignore"):
                self._invoke_float(data, x, w, bias, out)
            return
        cache = data.cache
        if cache is None:
            cache = runtime_cache(data, lambda: self._integer_cache(data, w, bias), w, bias)
        rows_plan = self._rows_plan(data, cache, out.dtype)
        if rows_plan is not None:
            self._invoke_rows(data, x, rows_plan, out)
            return
        dtype, wt, requantizer = cache
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        if data.channels_last:
            self._invoke_channels_last(data, x, dtype, wt, requantizer, out)
            return
        wp, pitch, length, rows = data.flat
        buf = data.xbuf
        if buf is None or buf.dtype != dtype:
            buf = data.xbuf = np.zeros((in_depth, batches, rows * wp), dtype=dtype)
        pad = data.padding
        image = buf.reshape(in_depth, batches, rows, wp)
        np.subtract(np.moveaxis(x, 3, 0), data.offset, dtype=dtype,
                    out=image[:, :, pad.height:pad.height + in_h, pad.width:pad.width + in_w])
        if in_depth == 1 and multiplier > 1:
            # one input channel: a convolution from a single channel; im2col + one exact
            # matrix product (every partial sum is an integer below the dtype's exact limit)
            fused = self._single_channel_plan(data, cache, out.dtype)
            n, taps, pixels = batches * out_h * out_w, filter_h * filter_w, out_h * out_w
            if fused is not None:
                # the output stage folded into a float64 product (FusedRequant)
                requant, matrix = fused
                cols = self._single_channel_columns(data, image[0], np.float64)
                t = work_buffer("conv-out", (n, multiplier), np.float64)
                np.matmul(cols, matrix[:taps], out=t)
                rows = t.reshape(batches, pixels * multiplier)
                np.add(rows, requant.row("c", pixels), out=rows)
                requant.finish(rows, out.reshape(rows.shape), pixels)
                return
            cols = self._single_channel_columns(data, image[0], dtype)
            acc = cols @ wt.reshape(taps, multiplier)
            stage = (requantizer.fused(out.dtype) if type(requantizer) is ChannelRequantizer
                     and ROWS_ENABLED else None)
            if stage is not None and stage.covers(acc):
                # the fused form's output stage on the (pixels, channels) product
                rows = acc.reshape(batches, -1)
                t = work_buffer("conv-out", rows.shape, np.float64)
                stage.scale_into(rows, t, out_h * out_w)
                stage.finish(t, out.reshape(rows.shape), out_h * out_w)
                return
            write_channels_first(requantizer(acc.T), out)
            return
        shape = (in_depth, multiplier, batches, length)
        scratch = data.acc_buffers
        if scratch is None or scratch[0].dtype != dtype:
            scratch = data.acc_buffers = (np.empty(shape, dtype), np.empty(shape, dtype))
        acc, term = scratch
        first = True
        for fy in range(filter_h):
            for fx in range(filter_w):
                start = fy * dh * wp + fx * dw
                taps = buf[:, None, :, start:start + sw * (length - 1) + 1:sw]
                if first:
                    np.multiply(taps, wt[fy, fx], out=acc)
                    first = False
                else:
                    np.multiply(taps, wt[fy, fx], out=term)
                    acc += term
        # requantize every computed column (contiguous), then keep the first out_w
        values = requantizer(acc.reshape(in_depth * multiplier, -1))
        write_channels_first(values.reshape(in_depth * multiplier, batches, out_h, pitch)[..., :out_w], out)

    @staticmethod
    def _single_channel_columns(data, image: np.ndarray, dtype) -> np.ndarray:
        """The (pixels, taps) im2col matrix of a one-channel padded ``image`` (batches,
        rows, pitch), as the transposed view of a (taps, pixels) work buffer filled one
        tap at a time (each tap's strided slice of the image is one contiguous row: a
        few times faster than copying the windows, whose innermost run is one value)."""
        (batches, _, _, _, _, filter_h, filter_w, out_h, out_w, sh, sw, dh, dw) = data.geometry
        by_tap = work_buffer("depthwise-taps", (filter_h * filter_w, batches * out_h * out_w), dtype)
        rows = by_tap.reshape(filter_h * filter_w, batches, out_h, out_w)
        for fy in range(filter_h):
            for fx in range(filter_w):
                y0, x0 = fy * dh, fx * dw
                np.copyto(rows[fy * filter_w + fx],
                          image[:, y0:y0 + sh * (out_h - 1) + 1:sh, x0:x0 + sw * (out_w - 1) + 1:sw])
        return by_tap.T

    @staticmethod
    def _rows_plan(data, cache, out_dtype):
        """The row layout's set-up (see :meth:`_invoke_rows`), kept on ``data`` with its
        cache: None unless the output stage is a plain 32-bit ChannelRequantizer (its fused
        float64 form, :class:`~kernels.internal.quantization.FusedRequant`, when it has
        one), and not for the one-input-channel case (im2col is faster there)."""
        held = data.rows
        if held is not None and held[0] is cache:
            return held[1]
        plan = None
        dtype, wt, requantizer = cache
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        if (ROWS_ENABLED and type(requantizer) is ChannelRequantizer
                and not requantizer.int64_accum and not (in_depth == 1 and multiplier > 1)):
            # without a fused form (None) the sums go through the integer output stage
            fused = requantizer.fused(out_dtype)
            # the buffers depend on the geometry only: kept across run-time filters
            layout = data.rows_layout
            if layout is None or layout.buffer.dtype != dtype:
                layout = data.rows_layout = DepthwiseRows(data, dtype)
            plan = (layout, fused, layout.tap_weights(wt), requantizer)
        data.rows = (cache, plan)
        return plan

    @staticmethod
    def _single_channel_plan(data, cache, out_dtype):
        """(FusedRequant, (taps + 1, multiplier) float64 matrix) for the one-input-channel
        case when its output stage folds into the product (as CONV_2D's, see
        :func:`~kernels.conv.fused_conv_plan`), else None; kept on ``data``."""
        held = data.fused
        if held is not None and held[0] is cache:
            return held[1]
        plan = None
        dtype, wt, requantizer = cache
        (_, _, _, _, multiplier, filter_h, filter_w, *_rest) = data.geometry
        if ROWS_ENABLED and type(requantizer) is ChannelRequantizer:
            fused = requantizer.fused(out_dtype)
            if (fused is not None and fused.runtime_bound is None
                    and filter_h * filter_w <= FUSED_MAX_DEPTH):
                plan = (fused, fused.weights(wt.reshape(filter_h * filter_w, multiplier).T))
        data.fused = (cache, plan)
        return plan

    @staticmethod
    def _invoke_rows(data, x, plan, out) -> None:
        """The integer sums in the row layout (:class:`DepthwiseRows`): per stride phase one
        einsum over its taps' stretches times their repeated weights (an add between
        phases), then the fused output stage over the stretch and the clamp and narrowing
        of the output columns; beyond a run-time bound of the plan, the integer output
        stage on the output columns."""
        layout, fused, tap_weights, requantizer = plan
        layout.fill(x, data.offset)
        acc, term = layout.acc, layout.term
        first = True
        for (view, _, _), weights in zip(layout.groups, tap_weights):
            # every partial sum, in any order, is an integer below the dtype's exact limit
            if first:
                np.einsum("byxs,yxs->bs", view, weights, out=acc)
                first = False
            else:
                np.einsum("byxs,yxs->bs", view, weights, out=term)
                np.add(acc, term, out=acc)
        batches, out_h, out_w, channels = out.shape
        if fused is None or not fused.covers(acc):
            # no fused form, or sums beyond its run-time bound: the integer output stage
            valid = acc.reshape(batches, out_h, -1)[:, :, :out_w * channels]
            write_channels_first(requantizer(valid.reshape(-1, channels).T), out)
            return
        # the output stage and clamp over every computed column (one contiguous stretch
        # per sample), then the narrowing of the output columns only
        t = work_buffer("depthwise-out", acc.shape, np.float64)
        fused.scale_into(acc, t, layout.pixels)
        fused.clamp(t, layout.pixels)
        valid = t.reshape(batches, out_h, -1)[:, :, :out_w * channels]
        fused.narrow(valid, out.reshape(valid.shape))

    @staticmethod
    def _invoke_channels_last(data, x, dtype, wt, requantizer, out):
        """The integer sums in NHWC order: each tap is one strided (B, out_h, out_w, C x M)
        view whose innermost axis (the channels) is contiguous, so numpy's inner loops run
        over the channels. Chosen when there are more channels than output columns per
        channel (late, small, wide layers)."""
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        rows, cols = data.padded_hw
        channels = in_depth * multiplier
        buf = data.xbuf
        if buf is None or buf.dtype != dtype:
            buf = data.xbuf = np.zeros((batches, rows, cols, in_depth, multiplier), dtype=dtype)
        pad = data.padding
        np.subtract(x[..., None], data.offset, dtype=dtype,
                    out=buf[:, pad.height:pad.height + in_h, pad.width:pad.width + in_w])
        flat = buf.reshape(batches, rows, cols, channels)
        weights = wt.reshape(filter_h, filter_w, channels)
        shape = (batches, out_h, out_w, channels)
        scratch = data.acc_buffers
        if scratch is None or scratch[0].dtype != dtype:
            scratch = data.acc_buffers = (np.empty(shape, dtype), np.empty(shape, dtype))
        acc, term = scratch
        y_span, x_span = sh * (out_h - 1) + 1, sw * (out_w - 1) + 1
        for fy in range(filter_h):
            for fx in range(filter_w):
                taps = flat[:, fy * dh:fy * dh + y_span:sh, fx * dw:fx * dw + x_span:sw]
                if fy == 0 and fx == 0:
                    np.multiply(taps, weights[0, 0], out=acc)
                else:
                    np.multiply(taps, weights[fy, fx], out=term)
                    acc += term
        write_channels_first(requantizer(acc.reshape(-1, channels).T), out)

    @staticmethod
    def _invoke_float(data, x, w, bias, out):
        """TFLM's order: per output, filter_y then filter_x, skipping taps outside the
        image, from 0.0f; then bias and the clamp."""
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        xt = np.moveaxis(x, 3, 0)
        wt = w.reshape(filter_h, filter_w, in_depth, multiplier, 1, 1, 1)
        acc = np.zeros((in_depth, multiplier, batches, out_h, out_w), dtype=np.float32)
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
                acc[:, :, :, oy0:oy1, ox0:ox1] += xt[:, None, :, rows, cols] * wt[fy, fx]
        total = np.ascontiguousarray(acc.reshape(in_depth * multiplier, -1).T)
        float_finish(total.reshape(out.shape), bias, data.activation, out)


#: the fused output stage paths (the row layout, the one-channel folded product) are used
#: when they apply; False leaves the earlier paths (for comparisons)
ROWS_ENABLED = True


class DepthwiseRows:
    """Buffers and views of the row layout of the integer depthwise sums (one node).

    The zero-point-shifted input sits in a zero-bordered buffer split by stride phases,
    (B, stride_h, stride_w, rows, cols, in_depth, multiplier): padded pixel (Y, X) is
    stored in phase (Y % sh, X % sw) at (Y // sh, X // sw), each input channel repeated
    for its multiplier's output channels. Output pixel (y, x) of tap (fy, fx) reads padded
    pixel (y sh + fy dh, x sw + fx dw): phase ((fy dh) % sh, (fx dw) % sw), position
    (y + (fy dh) // sh, x + (fx dw) // sw). Computed over every column x < cols of the
    phase (the columns x >= out_w are computed and dropped), the tap reads one contiguous
    stretch of its phase per sample, (out_h x cols x channels) long, which it multiplies
    by its weights repeated along the stretch; the taps of one phase are equally spaced
    stretches, summed by one einsum. Sums are in the cache's exact float dtype
    (every partial sum an integer below its exact limit, as for the other layouts)."""

    def __init__(self, data, dtype):
        (batches, in_h, in_w, in_depth, multiplier, filter_h, filter_w, out_h, out_w,
         sh, sw, dh, dw) = data.geometry
        rows, cols = data.padded_hw
        pad = data.padding
        channels = in_depth * multiplier
        width = -(-cols // sw)
        # every phase row a tap reads, plus one: a stretch that starts (fx dw) // sw
        # columns into its first row ends that far into the row after its last
        height = max(-(-rows // sh), ((filter_h - 1) * dh) // sh + out_h + 1)
        self.buffer = np.zeros((batches, sh, sw, height, width, in_depth, multiplier), dtype=dtype)
        # each phase's input pixels: (first input row, first input column, target view)
        self.phases = []
        for ph in range(sh):
            rows_span = _phase_span(ph, pad.height, sh, in_h)
            if rows_span is None:
                continue
            i0, r0, nr = rows_span
            for pw in range(sw):
                cols_span = _phase_span(pw, pad.width, sw, in_w)
                if cols_span is None:
                    continue
                j0, c0, nc = cols_span
                self.phases.append((i0, j0, self.buffer[:, ph, pw, r0:r0 + nr, c0:c0 + nc]))
        stretch = out_h * width * channels
        # the taps of one phase form a grid (rows fy0, fy0 + ty, ..., columns likewise)
        # whose stretches are equally spaced in the phase: one (B, ny, nx, stretch) view
        # per phase, summed over its taps in one pass
        self.groups = []
        for ph in range(sh):
            fys = [fy for fy in range(filter_h) if (fy * dh) % sh == ph]
            for pw in range(sw):
                fxs = [fx for fx in range(filter_w) if (fx * dw) % sw == pw]
                if not fys or not fxs:
                    continue
                qy0, qx0 = (fys[0] * dh) // sh, (fxs[0] * dw) // sw
                step_y = ((fys[1] - fys[0]) * dh) // sh if len(fys) > 1 else 0
                step_x = ((fxs[1] - fxs[0]) * dw) // sw if len(fxs) > 1 else 0
                phase = self.buffer[:, ph, pw].reshape(batches, height * width * channels)
                start = (qy0 * width + qx0) * channels
                base = phase[:, start:]
                item = base.itemsize
                view = np.lib.stride_tricks.as_strided(
                    base, (batches, len(fys), len(fxs), stretch),
                    (base.strides[0], step_y * width * channels * item, step_x * channels * item, item),
                    writeable=False)
                self.groups.append((view, fys, fxs))
        self.kernel_shape = (filter_h, filter_w, channels)
        self.acc = np.empty((batches, stretch), dtype=dtype)
        self.term = np.empty_like(self.acc)
        self.pixels = out_h * width          # computed pixels per sample
        self.strides = (sh, sw)
        self.shifted = None                  # strided layers: the converted input

    def tap_weights(self, wt: np.ndarray):
        """Each tap's weights (the cache's taps, in the buffer's dtype) repeated along the
        stretch of computed pixels."""
        weights = wt.reshape(self.kernel_shape)
        return [np.tile(weights[np.ix_(fys, fxs)], (1, 1, self.pixels))
                for _, fys, fxs in self.groups]

    def fill(self, x: np.ndarray, offset: int) -> None:
        """The input minus ``offset`` (exact in the buffer's float dtype) into the interior;
        with strides, converted contiguously first, then split by phase (strided copies
        without a cast are faster than strided converting ones)."""
        sh, sw = self.strides
        if sh == 1 and sw == 1:
            for _, _, target in self.phases:
                np.subtract(x[..., None], offset, out=target, dtype=target.dtype)
            return
        shifted = self.shifted
        if shifted is None or shifted.shape[:4] != x.shape:
            shifted = self.shifted = np.empty(x.shape + (1,), self.buffer.dtype)
        np.subtract(x[..., None], offset, out=shifted, dtype=shifted.dtype)
        for i0, j0, target in self.phases:
            np.copyto(target, shifted[:, i0::sh, j0::sw])


def _phase_span(phase: int, pad: int, stride: int, size: int):
    """Along one axis of the padded input split into ``stride`` phases: (the first input
    index that lands in ``phase``, its position in the phase, how many inputs land
    there), or None when none does."""
    first = (phase - pad) % stride
    if first >= size:
        return None
    return first, (pad + first) // stride, (size - 1 - first) // stride + 1
