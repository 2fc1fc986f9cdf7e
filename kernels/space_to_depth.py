"""SPACE_TO_DEPTH: float32 and int8 NHWC tensors, as TFLM's reference kernel (the
inverse of DEPTH_TO_SPACE; prepare shared with it).

out[n, h, w, ((by * b) + bx) * in_depth + d] = in[n, h * b + by, w * b + bx, d]; the
output shape must be (batch, height / b, width / b, depth * b^2).
"""
from __future__ import annotations

from .base import Kernel, register
from .depth_to_space import check_block_shapes


@register
class SpaceToDepth(Kernel):
    op = "SPACE_TO_DEPTH"
    supported_types = ("float32", "int8")

    def prepare(self, ctx, node):
        node.user_data = check_block_shapes(ctx, node, to_space=False)

    def invoke(self, ctx, node):
        b = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        n, h, w, d = x.shape
        # (n, h/b, by, w/b, bx, d) -> (n, h/b, w/b, by, bx, d)
        out.reshape(n, h // b, w // b, b, b, d)[...] = \
            x.reshape(n, h // b, b, w // b, b, d).transpose(0, 1, 3, 2, 4, 5)
