"""SOFTMAX as esp-tflite-micro's ESP-NN kernel runs it (``kernels/esp_nn/softmax.cc`` with
``esp_nn_softmax_s8`` of the target's ESP-NN function set).

Prepare is the reference kernel's (TFLM's CalculateSoftmaxParams) in a larger OpData
(NodeData: SoftmaxParams + a scratch-buffer index); int8 -> int8 also requests
``esp_nn_get_softmax_scratch_size(dims[1], dims[2])`` bytes of the input when positive:
4 x dims[1] (one int32 exponential per value of a row) for the optimised function sets,
0 for the plain C.

Arithmetic: int8 -> int8 runs ESP-NN's softmax. Its C (generic optimised and plain)
computes each row as TFLM's reference does: differences to the row maximum rescaled to
Q5.26 with the saturating doubling high multiply, gemmlowp's exp_on_negative_values (the
same polynomial and barrel shifter), the Q12.19 sum, the reciprocal by three Newton steps
of one_over_one_plus_x_for_x_in_0_1 with the same saturating shifts, and a rounding shift
by ``bits_over_unit + 23``. Where that shift reaches 32 (rows with 512 or more values at
the maximum) TFLM's reference aborts; ESP-NN's shift uses its low 5 bits (RISC-V and
Xtensa shift instructions): modelled. int8 -> int16, int16 and float32 run TFLM's
reference code.

Rows longer than dims[1] (inputs of rank 3 or 4) on the optimised function sets: the
routine stores one int32 exponential per value of a row in a scratch buffer of 4 x dims[1]
bytes, so it writes past the buffer into whatever the arena holds there (other tensors,
possibly this operator's input or output) and reads the values back. Emulated byte for
byte on the arena: the input read again after each write, the exponentials read back
from the arena, the clobbered bytes left for the operators after it. Refused when the
writes reach TFLM's persistent section (the interpreter's own structures) or the tensors
are not arena memory (batched evaluation).

Refused in prepare: a one-dimensional int8 input on the optimised function sets (the
kernel reads dims[1], past the shape, for the scratch size).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.internal.quantization import (clip_into, exp_on_negative_values, get_reciprocal,
                                           multiply_by_quantized_multiplier_greater_than_one,
                                           rounding_divide_by_pot,
                                           saturating_rounding_doubling_high_mul, wrap_int32)
from kernels.internal.tensor_utils import INT8
from kernels.softmax import OpData, Softmax

from .internal import routes
from .internal.common import function_set
from .internal.scratch_sizes import softmax_scratch_size


class EspSoftmaxOpData(OpData):
    """esp-tflite-micro's softmax NodeData (SoftmaxParams + buffer_idx) and host caches."""
    buffer_idx = -1
    esp_refusal = None
    #: rows longer than the scratch buffer: invoke emulates the writes past it
    overflows = False


@register_variant("esp-nn")
class EspNNSoftmax(Softmax):
    op = "SOFTMAX"
    invoke_allocates = True     # writes arena bytes beyond its buffers
    supported_types = Softmax.supported_types

    @classmethod
    def route(cls, target, graph, op):
        inp, out = routes.tensor(graph, op, 0), routes.tensor(graph, op, 0, output=True)
        if inp is None or out is None or inp.type != routes.INT8 or out.type != routes.INT8:
            return routes.reference(f"{routes.type_name(inp)} -> {routes.type_name(out)} (ESP-NN's "
                                    "softmax takes int8 -> int8)")
        return routes.esp_nn(target, "esp_nn_softmax_s8")

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("esp_nn.softmax.NodeData"))
        return EspSoftmaxOpData()

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        data = node.user_data
        inp, out = ctx.eval_tensor(node.inputs[0]), ctx.eval_tensor(node.outputs[0])
        shape, int8_to_int8 = tuple(inp.shape), inp.type == INT8 and out.type == INT8
        if not int8_to_int8:
            return
        variant = function_set(ctx)
        data.shift_mod_32 = True
        if variant == "ansi":
            data.buffer_idx = -1
            return
        if len(shape) < 2:
            raise ctx.error(f"a one-dimensional int8 input {shape}: esp-tflite-micro's softmax reads "
                            "the input's dims[1] (past its shape) for ESP-NN's scratch size")
        size = softmax_scratch_size(variant, shape[1], shape[2] if len(shape) > 2 else 0)
        data.buffer_idx = ctx.request_scratch(size) if size > 0 else -1
        if size <= 0:
            data.esp_refusal = (f"input of shape {shape}: ESP-NN's softmax scratch size is {size}: "
                                "the ESP build requests none and the routine returns without "
                                "writing the output")
        data.overflows = shape[-1] > shape[1]

    def invoke(self, ctx, node):
        data = node.user_data
        if data.esp_refusal is not None:
            raise ctx.error(data.esp_refusal)
        if data.overflows and node.input_arrays[0].size:
            self._invoke_overflowing(ctx, node, data)
            return
        super().invoke(ctx, node)

    @staticmethod
    def _invoke_overflowing(ctx, node, data) -> None:
        """``esp_nn_softmax_s8`` (optimised sets) on the arena's bytes, for rows longer than
        its scratch buffer: row by row, the maximum, then per value the exponential stored
        at scratch + 4 x column (little-endian int32, past the buffer) and summed, then per
        value the exponential read back from there and the output written."""
        x, y = node.input_arrays[0], node.output_arrays[0]
        scratch = ctx.scratch(data.buffer_idx)
        offsets = [ctx.arena_offset(a) for a in (x, y, scratch)]
        depth = data.depth
        mem, copied, low = None, False, 0
        if None not in offsets:
            x_at, y_at, s_at = offsets
            persistent = ctx.persistent_start
            if s_at + 4 * depth > persistent:
                raise ctx.error(f"ESP-NN's softmax writes 4 x {depth} bytes into a {scratch.size}-byte "
                                f"scratch buffer at arena offset {s_at}: past {persistent}, into "
                                "TFLM's persistent allocations (the ESP build corrupts its "
                                "interpreter)")
            low = min(x_at, y_at, s_at)
            window = ctx.arena_window(low, max(x_at + x.nbytes, y_at + y.nbytes, s_at + 4 * depth))
            if window is not None:
                mem, copied = window
            x_at, y_at, s_at = x_at - low, y_at - low, s_at - low     # offsets in ``mem``
        if mem is None:
            raise ctx.error(f"ESP-NN's softmax writes 4 x {depth} bytes into a {scratch.size}-byte "
                            "scratch buffer: emulated on arena memory only (not in batched "
                            "evaluation)")
        table = _exp_table(data)                # [exp Q0.31, its Q12.19 share, used] by diff + 255
        rows = x.size // depth
        written = range(s_at, s_at + 4 * depth)
        sequential = (max(s_at, x_at) < min(written.stop, x_at + x.nbytes)
                      or max(s_at, y_at) < min(written.stop, y_at + y.nbytes))
        for r in range(rows):
            row_in, row_out = x_at + r * depth, y_at + r * depth
            values = mem[row_in:row_in + depth].view(np.int8).astype(np.int64)
            top = int(values.max())
            if not sequential:
                index = values - top + 255
                used = table[2, index].astype(bool)
                exps = table[0, index]
                mem[s_at:s_at + 4 * depth].view("<i4")[used] = exps[used]
                total = int(wrap_int32(table[1, index][used].sum()))
                scale, exponent = _reciprocal(total)
                back = mem[s_at:s_at + 4 * depth].view("<i4").astype(np.int64)
                result = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(scale, back),
                                                exponent) - 128
                out = np.where(used, clip_into(result, -128, 127), -128)
                mem[row_out:row_out + depth] = out.astype(np.int8).view(np.uint8)
                continue
            total = 0
            for col in range(depth):
                i = int(np.int8(mem[row_in + col])) - top + 255
                if table[2, i]:
                    mem[s_at + 4 * col:s_at + 4 * col + 4] = np.array([table[0, i]], "<i4").view(np.uint8)
                    total = int(wrap_int32(total + int(table[1, i])))
            scale, exponent = _reciprocal(total)
            for col in range(depth):
                i = int(np.int8(mem[row_in + col])) - top + 255
                if table[2, i]:
                    back = int(mem[s_at + 4 * col:s_at + 4 * col + 4].view("<i4")[0])
                    v = int(rounding_divide_by_pot(saturating_rounding_doubling_high_mul(scale, back),
                                                   exponent)) - 128
                    mem[row_out + col] = np.int8(min(max(v, -128), 127)).view(np.uint8)
                else:
                    mem[row_out + col] = 0x80
        if copied:
            ctx.arena_write_back(low, mem)


def _exp_table(data) -> np.ndarray:
    """[exponential (Q0.31), its Q12.19 share of the sum, used] for every difference to the
    row maximum from -255 to +255 (values the routine itself overwrote can exceed the
    maximum it took: the C computes those too)."""
    diff = np.arange(-255, 256, dtype=np.int64)
    used = diff >= data.diff_min
    rescaled = multiply_by_quantized_multiplier_greater_than_one(diff, data.input_multiplier,
                                                               data.input_left_shift)
    exps = exp_on_negative_values(rescaled, 5)
    return np.stack([exps, rounding_divide_by_pot(exps, 12), used.astype(np.int64)])


def _reciprocal(total: int):
    """(shifted scale, rounding shift) of a row's Q12.19 sum of exponentials, the shift
    taken modulo 32 as ESP-NN's C does on RISC-V and Xtensa."""
    scale, over = get_reciprocal(int(total), 12)
    return int(scale), (int(over) + 31 - 8) & 31
