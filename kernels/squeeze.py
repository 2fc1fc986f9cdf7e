"""SQUEEZE: any tensor type, as TFLM's reference kernel.

Prepare (temporary input, then output) finds the dimensions to drop: the listed
``squeeze_dims`` (negative counts from the end; each must be a dimension of size 1) or,
with none listed, every dimension of size 1. TFLM then only requires each kept input
dimension to be <= the output dimension at the same position, and eval copies the
input bytes into the output when both byte sizes are equal (types are not compared);
those checks are made here in prepare.
"""
from __future__ import annotations

from .base import Kernel, register
from .internal.sample_rows import flat_copy_rows
from .internal.tensor_utils import copy_flat, normalize_axis

MAX_DIMS = 8


@register
class Squeeze(Kernel):
    op = "SQUEEZE"
    supported_types = ("*",)

    def sample_rows(self, block):
        """A copy of the bytes; the block squeezes the unit axes that turn the block
        input shape into the block output shape."""
        if not flat_copy_rows(block) or len(block.outputs) != 1:
            return False
        shape_in, shape_out = block.shape(block.input(0)), block.shape(block.output(0))
        axes, j = [], 0
        for i, d in enumerate(shape_in):
            if j < len(shape_out) and d == shape_out[j]:
                j += 1
            elif d == 1:
                axes.append(i)
            else:
                return False
        if j != len(shape_out) or not axes:
            return False
        block.rewrite_params(squeeze_dims=tuple(axes))
        return True

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.input(node, 0)
        out = ctx.output(node, 0)
        if inp is None or out is None:
            raise ctx.error("the input or output tensor is missing")
        in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
        ndims = len(in_shape)
        if ndims > MAX_DIMS:
            raise ctx.error(f"input has {ndims} dimensions, at most {MAX_DIMS} are supported")
        dims = tuple(node.params.get("squeeze_dims", ()) or ())
        squeeze = [False] * ndims
        if not dims:
            squeeze = [d == 1 for d in in_shape]
        else:
            for d in dims:
                axis = normalize_axis(int(d), ndims)
                if not 0 <= axis < ndims or in_shape[axis] != 1:
                    raise ctx.error(f"squeeze dimension {d} is not a dimension of size 1 of the "
                                    f"input shape {in_shape}")
                squeeze[axis] = True
        kept = [d for d, s in zip(in_shape, squeeze) if not s]
        if len(out_shape) < len(kept) or any(o < k for o, k in zip(out_shape, kept)):
            raise ctx.error(f"output shape {out_shape} does not hold the squeezed input "
                            f"shape {tuple(kept)}")
        if inp.nbytes != out.nbytes:
            raise ctx.error(f"input ({inp.nbytes} bytes) and output ({out.nbytes} bytes) "
                            "sizes differ")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        copy_flat(node.output_arrays[0], node.input_arrays[0])
