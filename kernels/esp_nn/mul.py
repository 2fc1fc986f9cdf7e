"""MUL as esp-tflite-micro's ESP-NN kernel runs it (``kernels/esp_nn/mul.cc``).

Prepare and OpData are the reference kernel's (TFLM's MulPrepare, OpDataMul). An int8 mul
without broadcasting runs ``esp_nn_mul_elementwise_s8``: ``(input1 + offset1) x (input2 +
offset2)`` in int32, ``esp_nn_multiply_by_quantized_mult`` (TFLM's
MultiplyByQuantizedMultiplier), the output offset and the clamp: the reference values,
computed by the reference kernel. Broadcasts, int16, int32 and float32 run TFLM's
reference code.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.mul import Mul

from .internal import routes


@register_variant("esp-nn")
class EspNNMul(Mul):
    op = "MUL"
    supported_types = Mul.supported_types

    @classmethod
    def route(cls, target, graph, op):
        a, b = routes.tensor(graph, op, 0), routes.tensor(graph, op, 1)
        if a is None or a.type != routes.INT8:
            return routes.reference(f"{routes.type_name(a)} input (ESP-NN's mul takes int8)")
        if routes.broadcasts(a, b):
            return routes.reference("a broadcast (ESP-NN multiplies equal shapes)")
        return routes.esp_nn(target, "esp_nn_mul_elementwise_s8")
