"""ADD as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/add.cc`` with
``arm_elementwise_add_s8`` / ``_s16``).

Prepare is the reference kernel's plus the CMSIS-NN build's own checks: int16 zero points
must be 0 (inputs and output). OpData: the same layout as the reference OpDataAdd.

Arithmetic: the reference kernel's values for every type: CMSIS-NN's element-wise add
offsets, shifts left by 20 (int8) / 15 (int16), requantises each input and the sum with
``arm_nn_requantize`` (TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp), adds the
output offset and clamps; its DSP path reads the offset inputs as zero-extended
halfwords, which the 20-bit left shift makes equal modulo 2^32. Broadcasting runs TFLM's
reference routines (its "4D" broadcasts are the 6-D ones).
"""
from __future__ import annotations

from kernels.add import Add, OpData
from kernels.base import register_variant
from kernels.internal.sample_rows import elementwise_rows
from kernels.internal.tensor_utils import INT16

from .internal.prepare import tensor_info


@register_variant("cmsis-nn")
class CmsisNNAdd(Add):
    op = "ADD"
    supported_types = Add.supported_types

    def sample_rows(self, block):
        """Element-wise with broadcasting (samples stay apart when their axes line up):
        ``arm_elementwise_add_s8`` / ``_s16`` and the reference broadcasts give the same
        values, so a block needing a broadcast where one sample does not is fine."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.add.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        in1, in2 = tensor_info(ctx, node, 0), tensor_info(ctx, node, 1)
        out = tensor_info(ctx, node, 0, output=True)
        if in1 is not None and in2 is not None and out is not None:
            if in1.type == INT16:
                for name, t in (("input 0", in1), ("input 1", in2), ("output", out)):
                    if t.zero_point != 0:
                        raise ctx.error(f"int16 {name} zero point must be 0, got {t.zero_point}")
        super().prepare(ctx, node)
