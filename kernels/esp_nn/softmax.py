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

Refused: a one-dimensional int8 input on the optimised function sets (the kernel reads
dims[1], past the shape, for the scratch size; prepare); at invoke, rows longer than
dims[1] on them (the routine writes one int32 per value into the 4 x dims[1]-byte
scratch buffer: past its end).
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.internal.tensor_utils import INT8
from kernels.softmax import OpData, Softmax

from .internal import routes
from .internal.common import function_set
from .internal.scratch_sizes import softmax_scratch_size


class EspSoftmaxOpData(OpData):
    """esp-tflite-micro's softmax NodeData (SoftmaxParams + buffer_idx) and host caches."""
    buffer_idx = -1
    esp_refusal = None


@register_variant("esp-nn")
class EspNNSoftmax(Softmax):
    op = "SOFTMAX"
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
        inp, out = ctx.input(node, 0), ctx.output(node, 0)
        shape, int8_to_int8 = tuple(inp.shape), inp.type == INT8 and out.type == INT8
        ctx.release(inp, out)
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
        if shape[-1] > shape[1] or size <= 0:
            data.esp_refusal = (
                f"input of shape {shape}: ESP-NN's softmax stores one int32 per value of a "
                f"{shape[-1]}-value row in a {max(size, 0)}-byte scratch buffer sized from dims[1] "
                f"({shape[1]}): the ESP build writes past it" if size > 0 else
                f"input of shape {shape}: ESP-NN's softmax scratch size is {size}: the ESP build "
                "requests none and the routine returns without writing the output")

    def invoke(self, ctx, node):
        data = node.user_data
        if data.esp_refusal is not None:
            raise ctx.error(data.esp_refusal)
        super().invoke(ctx, node)
