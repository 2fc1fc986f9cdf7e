"""MUL as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/mul.cc`` with
``arm_elementwise_mul_s8`` / ``_s16``; Init and Prepare are the reference kernel's).

Arithmetic: the reference kernel's values. ``arm_elementwise_mul_s8`` is the reference
int8 routine; ``arm_elementwise_mul_s16`` ignores the zero points, which TFLM's Prepare
requires to be 0. Broadcasts run TFLM's reference routines (its "4D" broadcasts are the
6-D ones). Init, Prepare and OpData are the reference kernel's.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.internal.sample_rows import elementwise_rows
from kernels.mul import Mul


@register_variant("cmsis-nn")
class CmsisNNMul(Mul):
    op = "MUL"
    supported_types = Mul.supported_types

    def sample_rows(self, block):
        """Element-wise with broadcasting (samples stay apart when their axes line up):
        ``arm_elementwise_mul_s8`` / ``_s16`` and the reference broadcasts give the same
        values, so a block needing a broadcast where one sample does not is fine."""
        return elementwise_rows(block)
