"""BATCH_MATMUL as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/batch_matmul.cc``:
``arm_batch_matmul_s8`` / ``_s16``; float32 by the reference code).

Allocations: OpData = the reference OpDataBatchMatmul, the output's cmsis_nn_dims and a
buffer index; the reference's persistent quantization struct and transposed operand
copies and output dims; on MVE cores, for int8, the scratch of
``arm_fully_connected_s8_get_buffer_size`` (one int32 kernel sum per output column).
Operands of rank 2 to 4 only (the reference takes 5).

Arithmetic: int8 is the reference's ((lhs - zp) x (rhs - zp) in int32, TFLM's
requantisation, output zero point); int16 sums exactly in 64 bits and requantises with
``arm_nn_requantize_s64``: TFLM's 64-bit MultiplyByQuantizedMultiplier (the same Q15
multiplier and rounding) except that its intermediate is an int32, which wraps for huge
accumulators. Batch broadcasting (CMSIS-NN's pointer strides and TFLM's
folding of a broadcast rhs dimension) gives the standard result.
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.batch_matmul import BatchMatMul, OpData
from kernels.internal.tensor_utils import INT8, INT16

from .internal.buffer_sizes import fully_connected_s8_size
from .internal.kernel_sums import requantize_s64

MAX_RANK = 4


@register_variant("cmsis-nn")
class CmsisNnBatchMatMul(BatchMatMul):
    op = "BATCH_MATMUL"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Batch products are independent: ``arm_batch_matmul_s8`` / ``_s16`` (and the
        float code) multiply every output batch's operands on their own, whatever TFLM's
        glue folds into rows, and the MVE buffer depends on the output's columns only.
        The sample axis may replace a unit *batch* axis: the output and every varying
        operand have it (rank >= 3, the output's rank), and a constant operand of that
        rank has a unit first dimension (it broadcasts over the samples). A varying
        rank-2 operand is a matrix whose rows the samples would become: not taken."""
        if len(block.inputs) != 2 or len(block.outputs) != 1:
            return False
        lhs, rhs, out = block.input(0), block.input(1), block.output(0)
        if lhs is None or rhs is None or out is None or not block.varies(out):
            return False
        rank = len(out.shape)
        if rank < 3 or not block.merged(out) or not (block.varies(lhs) or block.varies(rhs)):
            return False
        for operand in (lhs, rhs):
            if block.varies(operand):
                if len(operand.shape) != rank or not block.merged(operand):
                    return False
            elif len(operand.shape) == rank and operand.shape[0] != 1:
                return False
        return True

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.batch_matmul.OpData"))
        data = OpData()
        data.buffer_idx = -1
        data.is_int16 = False
        return data

    def prepare(self, ctx, node):
        for i in (0, 1):
            tensor = ctx.eval_tensor(node.inputs[i]) if i < len(node.inputs) and node.inputs[i] >= 0 else None
            if tensor is not None and len(tensor.shape) > MAX_RANK:
                raise ctx.error(f"{'lhs' if i == 0 else 'rhs'} has {len(tensor.shape)} dimensions; "
                                f"CMSIS-NN's batch matmul takes 2 to {MAX_RANK}")
        super().prepare(ctx, node)
        data = node.user_data
        data.is_int16 = ctx.eval_tensor(node.inputs[0]).type == INT16
        if ctx.eval_tensor(node.inputs[0]).type == INT8 and ctx.target.mve:
            out_c = int(ctx.eval_tensor(node.outputs[0]).shape[-1])
            size = fully_connected_s8_size(out_c, True)
            if size > 0:
                data.buffer_idx = ctx.request_scratch(size)

    def invoke(self, ctx, node):
        data = node.user_data
        if not (data.quantized and data.is_int16):
            return super().invoke(ctx, node)
        x, y = node.input_arrays[:2]
        out = node.output_arrays[0]
        dtype = data.compute_dtype
        a = self._operand(x, data.adj_x, 0, dtype)
        b = data.rhs_operand
        if b is None:
            b = self._operand(y, data.adj_y, 0, dtype)
        acc = np.matmul(a, b).astype(np.int64)
        values = np.clip(requantize_s64(acc, data.multiplier, data.shift), -32768, 32767)
        np.copyto(out, values.reshape(out.shape), casting="unsafe")
        return None

