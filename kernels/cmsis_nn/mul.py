"""MUL as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/mul.cc`` with
``arm_elementwise_mul_s8`` / ``_s16``; Init and Prepare are the reference kernel's).

Arithmetic: the reference kernel's values. ``arm_elementwise_mul_s8`` is the reference
int8 routine; ``arm_elementwise_mul_s16`` ignores the zero points, which TFLM's Prepare
requires to be 0. Broadcasts run TFLM's reference routines (its "4D" broadcasts are the
6-D ones). Init, Prepare and OpData are the reference kernel's.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.mul import Mul


@register_variant("cmsis-nn")
class CmsisNNMul(Mul):
    op = "MUL"
    supported_types = Mul.supported_types
