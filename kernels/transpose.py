"""TRANSPOSE: float32, int8 and int16 on 1-D to 5-D tensors, as TFLM's reference kernel.

Prepare takes the input, the permutation and the output as temporary tensors (in that
order). The permutation must be a constant 1-D tensor with one entry per input
dimension, each in [0, dims); TFLM reads it as int32 words. TFLM loops over the output
shape with the input strides the permutation picks, so the output shape must be the
permuted input shape and the permutation must not repeat an axis (else it reads outside
the input); both are checked here.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import outputs_match
from .internal.tensor_utils import FLOAT32, INT8, INT16, int32_words, type_name

MAX_DIMS = 5
SUPPORTED = (FLOAT32, INT8, INT16)


class OpData:
    perm = None


@register
class Transpose(Kernel):
    op = "TRANSPOSE"
    supported_types = ("float32", "int8", "int16")

    def sample_rows(self, block):
        """Samples stay apart when the permutation (a constant) keeps the batch axis the
        samples replace in front; a prepended sample axis stays in front."""
        perm = block.constant(1)
        if not block.only_vary((0,)) or perm is None:
            return False
        inp = block.input(0)
        values = [int(v) for v in perm.reshape(-1)]
        if sorted(values) != list(range(len(inp.shape))):
            return False
        if block.merged(inp):
            if values[0] != 0:
                return False
        else:
            values = [0] + [v + 1 for v in values]
            block.rewrite_constant(1, np.asarray(values, dtype=perm.dtype))
        shape = block.shape(inp)
        return outputs_match(block, [[shape[v] for v in values]])

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 inputs and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.input(node, 0)
        perm_t = ctx.input(node, 1)
        out = ctx.output(node, 0)
        if inp is None or perm_t is None or out is None:
            raise ctx.error("the input, permutation or output tensor is missing")
        in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
        dims = len(in_shape)
        if dims > MAX_DIMS:
            raise ctx.error("Transpose op only supports 1D-5D input arrays.")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if perm_t.data is None:
            raise ctx.error("Non-constant >perm< tensor is not supported")
        if len(perm_t.shape) != 1 or perm_t.shape[0] != dims:
            raise ctx.error(f"the permutation must be 1-D with {dims} entries, got shape "
                            f"{tuple(perm_t.shape)}")
        if dims == 0:
            raise ctx.error("Transpose op only supports 1D-5D input arrays.")
        perm = int32_words(perm_t.data, dims)
        if perm is None:
            raise ctx.error(f"permutation tensor of type {type_name(perm_t.type)} is too short")
        if np.any(perm < 0) or np.any(perm >= dims):
            raise ctx.error("Transpose op permutations array is out of bounds.")
        if len(set(perm.tolist())) != dims:
            raise ctx.error(f"permutation {perm.tolist()} repeats an axis")
        expected = tuple(in_shape[p] for p in perm)
        if out_shape != expected:
            raise ctx.error(f"output shape {out_shape} is not the input shape {in_shape} "
                            f"permuted by {perm.tolist()} ({expected})")
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Type {type_name(inp.type)} is currently not supported by Transpose. "
                            "Only float32, int8 and int16 are supported")
        node.user_data.perm = tuple(int(p) for p in perm)
        ctx.release(inp, perm_t, out)

    def invoke(self, ctx, node):
        np.copyto(node.output_arrays[0], node.input_arrays[0].transpose(node.user_data.perm))
