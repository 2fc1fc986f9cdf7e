"""MUL as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/mul.cc`` with
``arm_elementwise_mul_s8`` / ``_s16``; Init and Prepare are the reference kernel's).

Arithmetic: the reference kernel's values. ``arm_elementwise_mul_s8`` is the reference
int8 routine; ``arm_elementwise_mul_s16`` ignores the zero points, which TFLM's Prepare
requires to be 0. Broadcasts of int8 / int16 tensors run TFLM's 4-D reference routine:
more than 4 dimensions abort in TFLM's CMSIS-NN build (a debug check), refused here in
Prepare.
"""
from __future__ import annotations

from kernels.base import register_variant
from kernels.internal.tensor_utils import INT8, INT16
from kernels.mul import Mul

from .internal.prepare import needs_4d_broadcast_check, tensor_info


@register_variant("cmsis-nn")
class CmsisNNMul(Mul):
    op = "MUL"
    supported_types = Mul.supported_types

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        in1, in2 = tensor_info(ctx, node, 0), tensor_info(ctx, node, 1)
        out = tensor_info(ctx, node, 0, output=True)
        if in1.type in (INT8, INT16):
            needs_4d_broadcast_check(ctx, in1.shape, in2.shape, out.shape, rank_only=False)
