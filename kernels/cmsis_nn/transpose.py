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

from typing import List, Optional

import numpy as np

from kernels.base import register_variant
from kernels.internal.tensor_utils import INT8
from kernels.transpose import Transpose


def applied_permutation(perm, mve: bool) -> Optional[List[int]]:
    """The permutation ``arm_transpose_s8`` (as TFLM's CMSIS-NN build calls it) applies
    to an int8 tensor given ``perm``: a 2-D input is always transposed; on MVE cores a
    4-D permutation starting [0, 1] swaps the last two axes; None beyond 4-D (the node
    is refused)."""
    perm = [int(v) for v in perm]
    if len(perm) > 4:
        return None
    if len(perm) == 2:
        return [1, 0]
    if len(perm) == 4 and mve and perm[:2] == [0, 1]:
        return [0, 1, 3, 2]
    return perm


@register_variant("cmsis-nn")
class CmsisNnTranspose(Transpose):
    op = "TRANSPOSE"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """As the reference kernel (samples stay apart when the permutation keeps the
        batch axis they replace in front; a prepended sample axis stays in front), and
        for int8 only where the permutation ``arm_transpose_s8`` applies to the block is
        the one it applies to each sample, with the sample axis in front, on MVE cores
        and others alike (:func:`applied_permutation`): a 2-D identity (transposed
        anyway) or a 3-D permutation keeping axis 0 that a sample axis makes 4-D
        [0, 1, ...] (MVE swaps the last two axes of those) run sample by sample, as
        does a block beyond 4-D."""
        single = block.constant(1)
        if not super().sample_rows(block):
            return False
        inp = block.input(0)
        if inp.type != INT8:
            return True
        one = [int(v) for v in np.asarray(single).reshape(-1)]
        rewritten = [int(v) for v in np.asarray(block.new_constants.get(1, single)).reshape(-1)]
        merged = block.merged(inp)
        for mve in (False, True):
            per_sample, whole = applied_permutation(one, mve), applied_permutation(rewritten, mve)
            if per_sample is None or whole is None:
                return False
            if merged:
                expected = per_sample if per_sample[0] == 0 else None
            else:
                expected = [0] + [v + 1 for v in per_sample]
            if whole != expected:
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
        applied = applied_permutation(perm, node.user_data.mve)
        if applied is None:
            raise ctx.error(f"CMSIS-NN transposes int8 tensors of at most 4 dimensions, not "
                            f"{len(perm)}: TFLM's CMSIS-NN build skips the operator (its error "
                            "status is dropped) and leaves the output unwritten")
        out = node.output_arrays[0]
        result = x.transpose(applied)
        np.copyto(out.reshape(-1), np.ascontiguousarray(result).reshape(-1))
        return None
