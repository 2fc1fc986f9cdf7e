"""ADD as esp-tflite-micro's ESP-NN kernel runs it (``kernels/esp_nn/add.cc``).

Prepare and OpData are the reference kernel's (TFLM's AddPrepare, OpDataAdd). An int8 add
without broadcasting runs ``esp_nn_add_elementwise_s8``: its C offsets both inputs, shifts
them left by ``left_shift`` (20), scales each with the saturating doubling high multiply
and a rounding right shift, adds, scales the sum the same way, adds the output offset and
clamps, which is TFLM's reference Add step for step (MultiplyByQuantizedMultiplierSmaller
ThanOneExp): the reference values, computed by the reference kernel. Broadcasts, int16,
int32 and float32 run TFLM's reference code.
"""
from __future__ import annotations

from kernels.add import Add
from kernels.base import register_variant

from .internal import routes


@register_variant("esp-nn")
class EspNNAdd(Add):
    op = "ADD"
    supported_types = Add.supported_types

    @classmethod
    def route(cls, target, graph, op):
        a, b = routes.tensor(graph, op, 0), routes.tensor(graph, op, 1)
        out = routes.tensor(graph, op, 0, output=True)
        if out is None or out.type != routes.INT8:
            return routes.reference(f"{routes.type_name(out)} output (ESP-NN's add takes int8)")
        if routes.broadcasts(a, b):
            return routes.reference("a broadcast (ESP-NN adds equal shapes)")
        return routes.esp_nn(target, "esp_nn_add_elementwise_s8")
