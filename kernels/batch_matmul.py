"""BATCH_MATMUL: float32, int8 and int16 (zero points 0) matrix products with broadcast
batch dimensions (ranks 2 to 5) and ``adj_x`` / ``adj_y``, as TFLM's reference kernel.

Allocations, in TFLM's order: init takes OpDataBatchMatmul; prepare takes the lhs, the
rhs and the output as temporary tensors, then, for int8/int16, the
QuantizationOpDataBatchMatmul struct; then a transposed copy of each operand TFLM
rearranges before multiplying (the lhs when ``adj_x``, the rhs unless ``adj_y``): a
TfLiteEvalTensor, its dims array (the operand's rank) and its data (the operand's bytes),
all persistent; last the output's dims move into a persistent TfLiteIntArray. Every
buffer but the transposed data is written while the temporaries are live.

Arithmetic: out[..., m, n] = sum over k of lhs[..., m, k] * rhs[..., k, n].

* float32: one float32 multiply and add per k, in k order (TFLM's loop);
* int8: int32 sum of (lhs - lhs_zp) * (rhs - rhs_zp) (wrapping like C++ int32), then the
  32-bit MultiplyByQuantizedMultiplier of (lhs_scale * rhs_scale, a float32 product) /
  output_scale, + output zero point, clamped to int8;
* int16: int64 sum, the 64-bit MultiplyByQuantizedMultiplier, clamped to int16.

The integer sums are exact float products of integers (every partial sum below 2^24 in
float32 or 2^53 in float64), fed to the shared :class:`ChannelRequantizer`. The model's
output shape must be the product's shape (TFLM rewrites it in place when only the
element count agrees; that is refused here).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.matmul import exact_float_dtype, float32_sequential_matmul
from .internal.quantization import ChannelRequantizer, quantize_multiplier, quantized_convolution_multiplier
from .internal.tensor_utils import (FLOAT32, INT16, INT8, check_io_count, flat_size,
                                    int_array_bytes, make_output_dims_writable, type_name)

SUPPORTED = (FLOAT32, INT8, INT16)
MIN_RANK, MAX_RANK = 2, 5
_RANGE = {INT8: (-128, 127), INT16: (-32768, 32767)}


class OpData:
    """TFLM's OpDataBatchMatmul and its quantization struct, plus host-side constants."""
    quantized = False
    adj_x = adj_y = False
    multiplier = shift = 0
    lhs_zero_point = rhs_zero_point = output_zero_point = 0
    requantizer = None
    compute_dtype = None      # float type in which the integer products are exact
    rhs_operand = None        # constant rhs as (..., k, n) in compute_dtype, offset applied


def _allocate_transposed_copy(ctx, tensor) -> None:
    """TFLM's AllocInitTransposeTensorFromTfLiteTensor: a persistent TfLiteEvalTensor,
    its dims and a buffer of the operand's bytes."""
    pointer = ctx.sizeof("pointer")
    ctx.allocate_persistent(ctx.sizeof("TfLiteEvalTensor"), written=((0, 2 * pointer + 4),))
    ctx.allocate_persistent(int_array_bytes(ctx, len(tensor.shape)), written=True)
    ctx.allocate_persistent(flat_size(tensor.shape) * tensor.dtype.itemsize)   # written at invoke


@register
class BatchMatMul(Kernel):
    op = "BATCH_MATMUL"
    supported_types = ("float32", "int8", "int16")

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("batch_matmul.OpDataBatchMatmul"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        check_io_count(ctx, node, 2)
        lhs = ctx.required_input(node, 0, "the lhs tensor")
        rhs = ctx.required_input(node, 1, "the rhs tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        for name, t in (("lhs", lhs), ("rhs", rhs)):
            if t.type not in SUPPORTED:
                raise ctx.error(f"{name} type {type_name(t.type)} is not supported (float32, int8 "
                                "or int16)")
        if lhs.type != rhs.type:
            raise ctx.error(f"lhs type {type_name(lhs.type)} and rhs type {type_name(rhs.type)} "
                            "differ (hybrid products are not supported)")
        if out.type != lhs.type:
            raise ctx.error(f"output type {type_name(out.type)} differs from the input type "
                            f"{type_name(lhs.type)}")
        a_shape, b_shape = tuple(lhs.shape), tuple(rhs.shape)
        for name, shape in (("lhs", a_shape), ("rhs", b_shape)):
            if not MIN_RANK <= len(shape) <= MAX_RANK:
                raise ctx.error(f"{name} has {len(shape)} dimensions; 2 to 5 are supported")
        params = node.params
        adj_x, adj_y = bool(params.adj_x), bool(params.adj_y)
        data.quantized = lhs.type != FLOAT32
        if data.quantized:
            ctx.allocate_persistent(ctx.sizeof("batch_matmul.QuantizationOpDataBatchMatmul"), written=True)
        if adj_x:
            _allocate_transposed_copy(ctx, lhs)
        if not adj_y:
            _allocate_transposed_copy(ctx, rhs)

        if data.quantized:
            self._prepare_quantized(ctx, data, lhs, rhs, out)

        rank = max(len(a_shape), len(b_shape))
        a_ext = (1,) * (rank - len(a_shape)) + a_shape
        b_ext = (1,) * (rank - len(b_shape)) + b_shape
        batch = []
        for i, (da, db) in enumerate(zip(a_ext[:-2], b_ext[:-2])):
            if da != db and da != 1 and db != 1:
                raise ctx.error(f"batch dimension {i} does not broadcast: lhs {a_shape}, rhs {b_shape}")
            batch.append(db if da == 1 else da)
        rows, depth_a = (a_ext[-1], a_ext[-2]) if adj_x else (a_ext[-2], a_ext[-1])
        depth_b, cols = (b_ext[-1], b_ext[-2]) if adj_y else (b_ext[-2], b_ext[-1])
        if depth_a != depth_b:
            raise ctx.error(f"the inner dimensions differ: lhs {a_shape} (adj_x={adj_x}) has {depth_a}, "
                            f"rhs {b_shape} (adj_y={adj_y}) has {depth_b}")
        expected = tuple(batch) + (rows, cols)
        if rank > len(out.shape):
            raise ctx.error(f"the product has {rank} dimensions, the output only {len(out.shape)}")
        make_output_dims_writable(ctx, len(out.shape))
        if tuple(out.shape) != expected:
            raise ctx.error(f"output shape {tuple(out.shape)} is not the product's shape {expected}")

        data.adj_x, data.adj_y = adj_x, adj_y
        if data.quantized:
            lo, hi = _RANGE[lhs.type]
            max_a = max(hi - data.lhs_zero_point, data.lhs_zero_point - lo)
            max_b = max(hi - data.rhs_zero_point, data.rhs_zero_point - lo)
            bound = float(depth_a) * max_a * max_b
            data.compute_dtype = exact_float_dtype(bound)
            if data.compute_dtype is None:
                raise ctx.error(f"accumulation depth {depth_a} too large for exact products")
            try:
                data.requantizer = ChannelRequantizer(
                    [data.multiplier], [data.shift], None, data.output_zero_point, lo, hi,
                    int64_accum=lhs.type == INT16, acc_bound=bound)
            except ValueError as e:
                raise ctx.error(f"output multiplier out of range: {e}") from None
            if rhs.data is not None:
                data.rhs_operand = self._operand(rhs.data.reshape(b_shape), adj_y, data.rhs_zero_point,
                                                 data.compute_dtype)
        elif rhs.data is not None:
            data.rhs_operand = np.ascontiguousarray(np.swapaxes(rhs.data.reshape(b_shape), -1, -2)
                                                    if adj_y else rhs.data.reshape(b_shape))
        ctx.release(lhs, rhs, out)

    @staticmethod
    def _prepare_quantized(ctx, data, lhs, rhs, out):
        try:
            real = quantized_convolution_multiplier(lhs.scale, rhs.scale, out.scale)
            data.multiplier, data.shift = quantize_multiplier(real)
        except (ValueError, ZeroDivisionError, OverflowError) as e:
            raise ctx.error(f"cannot quantize the output multiplier: {e}") from None
        if lhs.type == INT16:
            for name, t in (("lhs", lhs), ("rhs", rhs), ("output", out)):
                if t.zero_point != 0:
                    raise ctx.error(f"int16 {name} zero point must be 0, got {t.zero_point}")
        data.lhs_zero_point = lhs.zero_point
        data.rhs_zero_point = rhs.zero_point
        data.output_zero_point = out.zero_point

    @staticmethod
    def _operand(x: np.ndarray, transpose: bool, zero_point: int, dtype) -> np.ndarray:
        """``x`` (transposed over its last two axes when asked) minus its zero point, in
        ``dtype`` (exact: small integers)."""
        if transpose:
            x = np.swapaxes(x, -1, -2)
        y = x.astype(dtype)
        if zero_point:
            y -= dtype(zero_point)
        return y

    def invoke(self, ctx, node):
        data = node.user_data
        x, y = node.input_arrays[:2]
        out = node.output_arrays[0]
        if not data.quantized:
            a = np.swapaxes(x, -1, -2) if data.adj_x else x
            b = data.rhs_operand
            if b is None:
                b = np.swapaxes(y, -1, -2) if data.adj_y else y
            np.copyto(out, float32_sequential_matmul(a, b, fused=ctx.target.float_fma))
            return
        dtype = data.compute_dtype
        a = self._operand(x, data.adj_x, data.lhs_zero_point, dtype)
        b = data.rhs_operand
        if b is None:
            b = self._operand(y, data.adj_y, data.rhs_zero_point, dtype)
        acc = np.matmul(a, b)
        flat = out.reshape(1, -1)
        np.copyto(flat, data.requantizer(acc.reshape(1, -1)), casting="unsafe")
