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


@register_variant("esp-nn")
class EspNNMul(Mul):
    op = "MUL"
    supported_types = Mul.supported_types
