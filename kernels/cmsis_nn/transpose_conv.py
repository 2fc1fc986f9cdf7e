"""TRANSPOSE_CONV as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/transpose_conv.cc``:
``arm_transpose_conv_wrapper_s8`` for int8; the reference integer / float code
otherwise).

Allocations: OpData (ConvParams, three buffer indices, the per-channel multiplier and
shift pointers); the per-channel arrays (persistent, as the reference); int8: the
scratch of ``arm_transpose_conv_s8_get_buffer_size`` then one of
``arm_transpose_conv_s8_get_reverse_conv_buffer_size`` (possibly 0 bytes) instead of the
reference's output-sized accumulator; int16: the reference's requests.

Arithmetic:

* the quantized paths clamp to the whole output type: the fused activation is ignored
  (TFLM's CMSIS-NN prepare passes kTfLiteActNone), for int8 and int16 alike;
* int8 with both strides <= 2 and more than 16 input channels: ``arm_convolve_s8`` over
  the stride-upscaled input with the filter reversed -- the same sums as the reference;
* other int8 cases: ``arm_transpose_conv_s8``, a ring of max(filter_h, stride_h) int32
  rows of ((input_w - 1) * stride_w + max(filter_w, stride_w)) pixels that input rows are
  scattered into and output rows are read from, stride_h rows after every input row
  that needs no top cropping, then the remaining filter_h - stride_h rows. It matches the
  reference when the padding is a multiple of the stride; otherwise its rows land where
  its schedule puts them (the emulation follows the schedule, and refuses a case whose
  reads or writes would leave the buffers).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.internal.matmul import exact_int_matmul
from kernels.internal.padding import compute_padding_height_width, padding_mode
from kernels.internal.quantization import multiply_by_quantized_multiplier, wrap_int32
from kernels.internal.sample_rows import batch_axis_rows
from kernels.internal.tensor_utils import INT8, INT16, flat_size
from kernels.transpose_conv import BIAS, FILTER, INPUT, OUTPUT, OpData, TransposeConv

from .internal.buffer_sizes import conv_s8_im2col_size

#: REVERSE_TCOL_EFFICIENT_THRESHOLD: more input channels than this take the reverse conv
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16
_ACT_NONE = 0


def reverse_conv_used(stride_h: int, stride_w: int, input_c: int) -> bool:
    """arm_transpose_conv_wrapper_s8's choice of ``arm_convolve_s8`` on the upscaled input."""
    return stride_w <= 2 and stride_h <= 2 and input_c > REVERSE_TCOL_EFFICIENT_THRESHOLD


def transpose_conv_s8_buffer_size(stride_h: int, stride_w: int, input_w: int, input_c: int,
                                  filter_h: int, filter_w: int, output_c: int, mve: bool) -> int:
    """arm_transpose_conv_s8_get_buffer_size (bytes): the reverse conv's im2col buffer, or
    the int32 ring of ``arm_transpose_conv_s8`` (its width uses max(filter_w, stride_h),
    as CMSIS-NN writes it)."""
    if reverse_conv_used(stride_h, stride_w, input_c):
        return conv_s8_im2col_size(input_c, filter_h, filter_w, mve)
    buf_x = ((input_w - 1) * stride_w + max(filter_w, stride_h)) * output_c
    return buf_x * max(filter_h, stride_h) * 4


def ring_fits_its_buffer(stride_h: int, stride_w: int, filter_w: int) -> bool:
    """True when ``arm_transpose_conv_s8``'s ring (rows of max(filter_w, stride_w)
    pixels past the input's span) fits the buffer it asked for (rows sized with
    max(filter_w, stride_h)): the kernel then touches no arena memory but its ring."""
    return max(filter_w, stride_w) <= max(filter_w, stride_h)


def ring_rows_emitted(in_h: int, filter_h: int, stride_h: int, pad_y: int, out_h: int) -> int:
    """The output rows ``arm_transpose_conv_s8``'s schedule writes per batch: stride_h
    after every input row that needs no top cropping, then those of the last
    filter_h - stride_h ring rows that fall inside the output."""
    rows = stride_h * sum(1 for j in range(in_h) if pad_y - j * stride_h <= 0)
    return rows + sum(1 for y in range(filter_h - stride_h)
                      if pad_y <= in_h * stride_h + y < pad_y + out_h)


def transpose_conv_s8_reverse_buffer_size(stride_h: int, stride_w: int, input_c: int,
                                          filter_h: int, filter_w: int, output_c: int) -> int:
    """arm_transpose_conv_s8_get_reverse_conv_buffer_size (bytes): the reversed filter."""
    if reverse_conv_used(stride_h, stride_w, input_c):
        return input_c * filter_w * filter_h * output_c
    return 0


@register_variant("cmsis-nn")
class CmsisNnTransposeConv(TransposeConv):
    op = "TRANSPOSE_CONV"
    supported_types = ("float32", "int8 (bias int32)", "int16 x int8 (bias int16 or int64)")
    type_input = 2
    weights_input = 1

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.transpose_conv.OpData"))
        data = OpData()
        data.scratch_buffer_output_index = -1
        return data

    def sample_rows(self, block):
        """Batch rows are independent (the sample axis replaces the unit batch axis of
        the input and output; the output-shape input is not read): float32, int16 and
        int8 through the reverse convolution compute every batch alike. int8 through
        ``arm_transpose_conv_s8`` runs one schedule per batch from a ring reset to the
        bias, so batches stay apart when the ring stays inside its buffer and the
        schedule writes exactly the output's rows (else a sample's rows, or the memory
        past its ring or output, would land elsewhere in a block)."""
        if not batch_axis_rows(block, (INPUT,)):
            return False
        inp, flt, out = block.input(INPUT), block.input(FILTER), block.output(OUTPUT)
        if inp.type != INT8 or len(inp.shape) != 4 or len(flt.shape) != 4 or len(out.shape) != 4:
            return True
        params = block.params
        sh, sw = int(params.stride_h), int(params.stride_w)
        _, in_h, _, in_c = inp.shape
        _, filter_h, filter_w, _ = flt.shape
        _, out_h, out_w, _ = out.shape
        if reverse_conv_used(sh, sw, in_c):
            return True
        if sh < 1 or sw < 1 or not ring_fits_its_buffer(sh, sw, filter_w):
            return False
        padding, _, _ = compute_padding_height_width(sh, sw, 1, 1, out_h, out_w, filter_h,
                                                     filter_w, padding_mode(params))
        return ring_rows_emitted(in_h, filter_h, sh, padding.height, out_h) == out_h

    def _request_scratch(self, ctx, data, inp, flt, out, params) -> None:
        if inp.type == INT8:
            _, in_h, in_w, in_c = inp.shape
            out_c, filter_h, filter_w, _ = flt.shape
            sh, sw = int(params.stride_h), int(params.stride_w)
            data.scratch_buffer_index = ctx.request_scratch(transpose_conv_s8_buffer_size(
                sh, sw, in_w, in_c, filter_h, filter_w, out_c, bool(ctx.target.mve)))
            data.scratch_buffer_output_index = ctx.request_scratch(
                transpose_conv_s8_reverse_buffer_size(sh, sw, in_c, filter_h, filter_w, out_c))
        elif inp.type == INT16:
            data.scratch_buffer_index = ctx.request_scratch(flat_size(out.shape) * 8)

    def _quantized_activation(self, activation: int) -> int:
        return _ACT_NONE

    def invoke(self, ctx, node):
        data = node.user_data
        if data.kind != INT8:
            return super().invoke(ctx, node)
        (batches, in_h, in_w, in_c, filter_h, filter_w, out_c, out_h, out_w,
         sh, sw) = data.geometry
        if reverse_conv_used(sh, sw, in_c):
            return super().invoke(ctx, node)
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        w = data.filter_const if data.filter_const is not None else node.input_arrays[FILTER]
        bias = None
        if data.has_bias:
            bias = data.bias_const if data.bias_const is not None else node.input_arrays[BIAS]
        self._ring_buffer_s8(ctx, data, x, w, bias, out)
        return None


    def _ring_buffer_s8(self, ctx, data, x, w, bias, out) -> None:
        """``arm_transpose_conv_s8``, schedule for schedule (rows and pixels vectorised),
        in the arena itself: the int32 ring starts at the scratch buffer and spans what
        the kernel uses, which can be more than ``arm_transpose_conv_s8_get_buffer_size``
        asked for (that function sizes a row with max(filter_w, stride_h), the kernel
        with max(filter_w, stride_w)): the excess lands on whatever follows in the arena,
        as on the device; input rows are read as each is needed, and output rows
        written in order, possibly past the output tensor (a schedule that emits more
        rows than the output has).

        Every batch runs the same schedule from a ring reset to the bias. When the ring
        fits its buffer (it then touches no other memory) the batches run side by side,
        one ring per batch on the host, and the arena's ring is left holding the last
        batch's, as the batch-by-batch kernel leaves it; otherwise batch by batch in the
        arena."""
        (batches, in_h, in_w, in_c, filter_h, filter_w, out_c, out_h, out_w,
         sh, sw) = data.geometry
        pad_y, pad_x = data.padding.height, data.padding.width
        row_pixels = (in_w - 1) * sw + max(filter_w, sw)
        ring_rows = max(filter_h, sh)
        ring_values = ring_rows * row_pixels * out_c
        arena = ctx.allocator.arena
        ring_address = ctx.allocator.scratch_addresses[data.scratch_buffer_index]
        if ring_address + 4 * ring_values > arena.size:
            raise ctx.error("arm_transpose_conv_s8's ring buffer would run past the arena")
        arena_ring = arena.view(ring_address, np.int32, ring_values).reshape(-1, out_c)
        out_tensor = ctx.eval_tensor(node_output(ctx))
        bias_row = (np.zeros(out_c, np.int64) if bias is None
                    else np.asarray(bias, np.int64).reshape(-1)[:out_c])
        weights = np.asarray(w, np.float64).reshape(out_c, filter_h, filter_w, in_c)
        weights = weights.transpose(3, 1, 2, 0).reshape(in_c, -1)
        multipliers = np.asarray(data.per_channel_multiplier, np.int64)
        shifts = np.asarray(data.per_channel_shift, np.int64)
        lo, hi = data.output_activation_min, data.output_activation_max
        side_by_side = ring_fits_its_buffer(sh, sw, filter_w)
        if side_by_side:
            groups = [np.arange(batches)]
            rings = np.empty((batches,) + arena_ring.shape, np.int32)
        else:
            groups = [np.arange(b, b + 1) for b in range(batches)]
            rings = arena_ring[None]
        emitted = []                  # per group: output rows in order, (batches, values)

        for group in groups:
            ring = rings[:len(group)]
            rows_out = []

            def emit(ring_row: int) -> None:
                start = ring_row * row_pixels + pad_x
                if start + out_w > ring.shape[1]:
                    raise ctx.error("arm_transpose_conv_s8 would read past its ring buffer for "
                                    "this geometry")
                acc = ring[:, start:start + out_w].astype(np.int64)
                acc = multiply_by_quantized_multiplier(acc, multipliers, shifts)
                values = np.minimum(np.maximum(acc + data.output_zero_point, lo), hi)
                rows_out.append(values.astype(np.int8).reshape(len(group), -1))

            ring[...] = bias_row
            row = 0
            for j in range(in_h):
                skip_top = max(0, pad_y - j * sh)
                skip_bottom = max(0, (j * sh + filter_h) - (pad_y + out_h) - 1)
                lhs = np.asarray(x[group, j], np.float64).reshape(-1, in_c) + data.input_offset
                taps = exact_int_matmul(lhs, weights).reshape(len(group), in_w, filter_h,
                                                               filter_w, out_c)
                for r in range(filter_h - skip_top - skip_bottom):
                    first = ((row + r) % ring_rows) * row_pixels
                    target = ring[:, first:first + row_pixels]
                    for fx in range(filter_w):
                        cols = slice(fx, fx + (in_w - 1) * sw + 1, sw)
                        target[:, cols] = wrap_int32(target[:, cols].astype(np.int64)
                                                     + taps[:, :, skip_top + r, fx])
                if skip_top == 0:
                    for _ in range(sh):
                        emit(row)
                        ring[:, row * row_pixels:(row + 1) * row_pixels] = bias_row
                        row = (row + 1) % ring_rows
            for y in range(filter_h - sh):
                if pad_y <= in_h * sh + y < pad_y + out_h:
                    emit(row)
                row = (row + 1) % ring_rows
            if rows_out:
                emitted.append(np.concatenate(rows_out, axis=1).reshape(-1))
        if side_by_side and batches:
            arena_ring[...] = rings[-1]
        values = np.concatenate(emitted) if emitted else np.zeros(0, np.int8)
        if values.size <= out.size:
            out.reshape(-1)[:values.size] = values
            return
        if out_tensor.address + values.size > arena.size:
            raise ctx.error("arm_transpose_conv_s8 would write past the arena for this geometry")
        arena.view(out_tensor.address, np.int8, values.size)[...] = values


def node_output(ctx) -> int:
    """The tensor index of the current node's output."""
    return ctx.node.outputs[OUTPUT]
