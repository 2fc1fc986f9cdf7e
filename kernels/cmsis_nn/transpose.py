"""TRANSPOSE as TFLM's CMSIS-NN build runs it (``kernels/cmsis_nn/transpose.cc``): int8 by
``arm_transpose_s8``, float32 / int16 by the reference code; the reference prepare.

``arm_transpose_s8`` differs from the reference:

* permutations of more than 4 entries: TFLM's TF_LITE_ENSURE(size <= 4) fails, but the
  generic registration drops the status, so the invoke succeeds with the output never
  written (undefined values): the emulator refuses the node at invoke;
* a 2-D input is always transposed, whatever the permutation (an identity [0, 1] too);
* on MVE cores a 4-D permutation starting [0, 1] always swaps the last two axes (its
  ``arm_transpose_s8_nhcw`` path), an identity [0, 1, 2, 3] too.
Everything else is the reference's permutation.
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.transpose import Transpose


@register_variant("cmsis-nn")
class CmsisNnTranspose(Transpose):
    op = "TRANSPOSE"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        return False      # int8 behaviour depends on the rank: no extra sample axis

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        node.user_data.mve = bool(ctx.target.mve)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        if x.dtype != np.int8:
            return super().invoke(ctx, node)
        perm = node.user_data.perm
        if len(perm) > 4:
            raise ctx.error(f"CMSIS-NN transposes int8 tensors of at most 4 dimensions, not "
                            f"{len(perm)}: TFLM's CMSIS-NN build skips the operator (its error "
                            "status is dropped) and leaves the output unwritten")
        out = node.output_arrays[0]
        if len(perm) == 2:
            result = x.T
        elif len(perm) == 4 and node.user_data.mve and perm[:2] == (0, 1):
            result = x.transpose(0, 1, 3, 2)
        else:
            result = x.transpose(perm)
        np.copyto(out.reshape(-1), np.ascontiguousarray(result).reshape(-1))
        return None
