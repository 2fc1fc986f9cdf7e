"""AVERAGE_POOL_2D and MAX_POOL_2D as esp-tflite-micro's ESP-NN kernels run them
(``kernels/esp_nn/pooling.cc``).

Prepare and OpData are the reference kernel's (TFLM's PoolingPrepare, OpDataPooling; no
scratch buffer). int8 pools run ``esp_nn_avg_pool_s8`` / ``esp_nn_max_pool_s8`` per batch
(the function set's routine for channels a multiple of 4, the plain C otherwise). Their C
sums (or takes the maximum of) the taps inside the image, rounds the average as
``(sum +- count / 2) / count`` with C's truncating division and clamps: TFLM's reference
values, computed by the reference kernel. int16 and float32 run TFLM's reference code.

Refused at invoke: int8 sizes ESP-NN takes as 16-bit values and would truncate.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.internal.tensor_utils import INT8
from kernels.pooling import AveragePool2D, MaxPool2D

from .internal import routes
from .internal.common import uint16_problem


class _EspPooling:
    """The ESP kernels' shared check: ESP-NN's uint16_t arguments."""

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        data = node.user_data
        data.esp_refusal = None
        inp = ctx.eval_tensor(node.inputs[0])
        kind, shape = inp.type, tuple(inp.shape)
        if kind != INT8:
            return
        fh, fw, sh, sw, _ = data.window
        pad = data.padding
        data.esp_refusal = uint16_problem("esp_nn_avg_pool_s8 / esp_nn_max_pool_s8", input_width=shape[2],
                                          input_height=shape[1], channels=shape[3], output_width=data.out_w,
                                          output_height=data.out_h, stride_width=sw, stride_height=sh,
                                          filter_width=fw, filter_height=fh, padding_width=pad.width,
                                          padding_height=pad.height)

    #: the ESP-NN routine's name
    routine = ""

    @classmethod
    def route(cls, target, graph, op):
        inp = routes.tensor(graph, op, 0)
        why = routes.int8_only("pooling", inp)
        if why:
            return routes.reference(why)
        if inp.shape and inp.shape[-1] % 4:
            return (f"ESP-NN {cls.routine}_ansi: ESP-NN's plain C ({inp.shape[-1]} channels, not a "
                    "multiple of 4)")
        return routes.esp_nn(target, cls.routine)

    def invoke(self, ctx, node):
        refusal = getattr(node.user_data, "esp_refusal", None)
        if refusal is not None:
            raise ctx.error(refusal)
        super().invoke(ctx, node)


@register_variant("esp-nn")
class EspNNAveragePool2D(_EspPooling, AveragePool2D):
    op = "AVERAGE_POOL_2D"
    supported_types = AveragePool2D.supported_types
    routine = "esp_nn_avg_pool_s8"


@register_variant("esp-nn")
class EspNNMaxPool2D(_EspPooling, MaxPool2D):
    op = "MAX_POOL_2D"
    supported_types = MaxPool2D.supported_types
    routine = "esp_nn_max_pool_s8"
