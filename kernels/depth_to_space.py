"""DEPTH_TO_SPACE: float32 and int8 NHWC tensors, as TFLM's reference kernel.

No init / OpData: prepare takes the input and the output as temporary tensors, checks a
4-D input, the type and ``block_size`` > 0 with a depth divisible by block_size^2, and
moves the output's dims into a persistent TfLiteIntArray (the model's output rank); the
output shape must be (batch, height * b, width * b, depth / b^2).

out[n, h, w, d] = in[n, h // b, w // b, ((h % b) * b + w % b) * out_depth + d]: each
run of out_depth values moves as one item (a reshape and an axis swap).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import (FLOAT32, INT8, check_io_count, make_output_dims_writable,
                                    type_name)

SUPPORTED = (FLOAT32, INT8)


def check_block_shapes(ctx, node, to_space: bool):
    """The shared prepare of DEPTH_TO_SPACE / SPACE_TO_DEPTH (TFLM's checks, in order);
    returns the block size. ``to_space``: depth -> space."""
    check_io_count(ctx, node, 1)
    inp = ctx.required_input(node, 0, "the input tensor")
    out = ctx.required_output(node, 0, "the output tensor")
    if len(inp.shape) != 4:
        raise ctx.error(f"the input must be 4-D (NHWC), got shape {tuple(inp.shape)}")
    if out.type not in SUPPORTED:
        raise ctx.error(f"type {type_name(out.type)} is not supported (float32 or int8)")
    if inp.type != out.type:
        raise ctx.error(f"input type {type_name(inp.type)} and output type "
                        f"{type_name(out.type)} differ")
    block = int(node.params.block_size)
    batch, height, width, depth = inp.shape
    if block < 1:
        raise ctx.error(f"block_size must be > 0, got {block}")
    if to_space:
        if depth % (block * block):
            raise ctx.error(f"input depth {depth} is not a multiple of block_size^2 = {block * block}")
        expected = (batch, height * block, width * block, depth // (block * block))
    else:
        if height % block or width % block:
            raise ctx.error(f"input height {height} and width {width} must be multiples of "
                            f"block_size {block}")
        expected = (batch, height // block, width // block, depth * block * block)
    make_output_dims_writable(ctx, len(out.shape))
    if tuple(out.shape) != expected:
        raise ctx.error(f"output shape {tuple(out.shape)} is not {expected}")
    ctx.release(inp, out)
    return block


@register
class DepthToSpace(Kernel):
    op = "DEPTH_TO_SPACE"
    supported_types = ("float32", "int8")

    def prepare(self, ctx, node):
        node.user_data = check_block_shapes(ctx, node, to_space=True)

    def invoke(self, ctx, node):
        b = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        n, h, w, _ = x.shape
        d = out.shape[3]
        # (n, h, w, by, bx, d) -> (n, h, by, w, bx, d)
        out.reshape(n, h, b, w, b, d)[...] = x.reshape(n, h, w, b, b, d).transpose(0, 1, 3, 2, 4, 5)
