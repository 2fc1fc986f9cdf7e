"""RESHAPE: any tensor type, as TFLM's reference kernel.

Prepare takes the input and output as temporary tensors (in that order) and checks that
their types match and that they hold the same number of elements; the optional shape
input (index 1) is never read, the output shape is the one in the model. Eval copies
the input bytes into the output unless both are the same buffer.

Not supported (TFLM either crashes or needs dynamic shapes): an output shape with a -1
(stretch) dimension, which the model loader already refuses, and the legacy scalar
reshape (one input, output shape ``[0]``), whose output TFLM writes past its planned
zero-byte buffer.
"""
from __future__ import annotations

from .base import Kernel, register
from .internal.sample_rows import flat_copy_rows
from .internal.tensor_utils import copy_flat, type_name


@register
class Reshape(Kernel):
    op = "RESHAPE"
    supported_types = ("*",)

    def sample_rows(self, block):
        """A copy of the bytes: each sample's bytes land in its own rows."""
        return flat_copy_rows(block)

    def prepare(self, ctx, node):
        n_in = len(node.inputs)
        if n_in not in (1, 2) or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 or 2 inputs and 1 output, got {n_in} and {len(node.outputs)}")
        inp = ctx.input(node, 0)
        if inp is None:
            raise ctx.error("the input tensor is missing")
        out = ctx.output(node, 0)
        if out is None:
            raise ctx.error("the output tensor is missing")
        if n_in == 1 and tuple(out.shape) == (0,):
            raise ctx.error("legacy scalar reshape (output shape [0]) is not supported")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if inp.num_elements != out.num_elements:
            raise ctx.error(f"cannot reshape {tuple(inp.shape)} ({inp.num_elements} elements) "
                            f"into {tuple(out.shape)} ({out.num_elements} elements)")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        copy_flat(node.output_arrays[0], node.input_arrays[0])
