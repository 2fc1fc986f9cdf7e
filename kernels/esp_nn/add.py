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


@register_variant("esp-nn")
class EspNNAdd(Add):
    op = "ADD"
    supported_types = Add.supported_types
