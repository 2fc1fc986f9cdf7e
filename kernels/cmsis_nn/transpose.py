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
from kernels.internal.tensor_utils import INT8
from kernels.transpose import Transpose


def applied_as_given(perm) -> bool:
    """True when ``arm_transpose_s8`` (as TFLM's CMSIS-NN build calls it) permutes an
    int8 tensor by ``perm`` on every core: 3 or 4 dimensions, except the 4-D identity
    (MVE swaps its last two axes), or the 2-D [1, 0]; 1-D identity."""
    perm = [int(v) for v in perm]
    if len(perm) > 4:
        return False
    if len(perm) == 2:
        return perm == [1, 0]
    if len(perm) == 4 and perm[:2] == [0, 1]:
        return perm == [0, 1, 3, 2]
    return True


@register_variant("cmsis-nn")
class CmsisNnTranspose(Transpose):
    op = "TRANSPOSE"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """As the reference kernel (samples stay apart when the permutation keeps the
        batch axis they replace in front; a prepended sample axis stays in front), and
        for int8 only where ``arm_transpose_s8`` applies the permutation as given, for
        one sample and for the block alike, on MVE cores and others: at most 4
        dimensions, a 2-D permutation [1, 0] (2-D inputs are always transposed) and no
        4-D permutation [0, 1, 2, 3] (MVE swaps the last two axes of those)."""
        single = block.constant(1)
        if not super().sample_rows(block):
            return False
        inp = block.input(0)
        if inp.type != INT8:
            return True
        rewritten = block.new_constants.get(1, single)
        for perm in (single, rewritten):
            values = [int(v) for v in np.asarray(perm).reshape(-1)]
            if not applied_as_given(values):
                return False
        return True

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
