"""CONCATENATION: float32, int8, int16, int32, int64 and bool, as TFLM's reference kernel.

TFLM's micro kernel never requantizes: every int8 input must share the output's scale
and zero point, and int16 inputs and output must have a zero point of 0. No fused
activation is allowed. At most 10 inputs of at most 6 dimensions.

Init allocates TFLM's OpData. Prepare's temporary tensors follow TFLM: input 0 and the
output, input 0 released, then each input in turn (allocated, checked, released), the
output released last. The shape checks TFLM only makes in debug builds (same rank, same
dimensions off the axis, axis sizes summing to the output's) are made here too.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import block_shape, outputs_match
from .internal.tensor_utils import (BOOL, FLOAT32, INT8, INT16, INT32, INT64, copy_rows, flat_size,
                           normalize_axis, type_name)

MAX_INPUTS = 10
MAX_DIMS = 6
SUPPORTED = (FLOAT32, INT8, INT16, INT32, INT64, BOOL)


class OpData:
    axis = 0
    outer = 0
    decompress: dict = {}   # compressed inputs (COMPRESSION_METADATA): input -> scratch index
    blocks = ()     # (start, stop) of each input's columns in the (outer, -1) output


@register
class Concatenation(Kernel):
    op = "CONCATENATION"
    supported_types = ("float32", "int8", "int16", "int32", "int64", "bool")

    def sample_rows(self, block):
        """Samples stay apart when every input has the sample axis in the same place and
        the axis is not the batch axis the samples replace; constant inputs are repeated
        once per sample in the block."""
        inputs, out = block.inputs, block.output(0)
        varying = [t for t in inputs if block.varies(t)]
        if not varying or out is None or not block.varies(out) or len(block.outputs) != 1:
            return False
        rank = len(out.shape)
        first = varying[0]
        unit = block.merged(first)
        for t in inputs:
            if t is None or len(t.shape) != rank or (rank and (t.shape[0] == 1) != unit):
                return False
        if rank == 0 or not -rank <= int(block.params.axis) < rank:
            return False
        axis = block.block_axis(first, int(block.params.axis))
        if axis is None:
            return False
        shapes = []
        for i, t in enumerate(inputs):
            if block.varies(t):
                shapes.append(block.shape(t))
                continue
            data = block.constant(i)
            if data is None or block.batch is None:
                return False       # computed once per block: not repeated per sample here
            shapes.append(block_shape(data.shape, block.samples))
            block.rewrite_constant(i, np.broadcast_to(data, block_shape(data.shape, block.batch)))
        total = shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1:]
        if not outputs_match(block, [total]):
            return False
        block.rewrite_params(axis=axis)
        return True

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("concatenation.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        params = node.params
        first = ctx.required_input(node, 0)
        in_type = first.type
        out = ctx.required_output(node, 0, "the output tensor")
        ctx.release(first)
        if params.fused_activation_function != 0:
            raise ctx.error("a fused activation is not supported")
        if in_type not in SUPPORTED:
            raise ctx.error(f"Op Concatenation does not currently support type '{type_name(in_type)}'.")
        if out.type != in_type:
            raise ctx.error(f"input type {type_name(in_type)} and output type "
                            f"{type_name(out.type)} differ")
        n = len(node.inputs)
        if n > MAX_INPUTS:
            raise ctx.error(f"{n} inputs, at most {MAX_INPUTS} are supported")
        shapes = []
        data = node.user_data
        data.decompress = {}
        for i in range(n):
            t = ctx.input(node, i)
            if t is None:
                raise ctx.error(f"input {i} is missing")
            if t.type != in_type:
                raise ctx.error(f"input {i} has type {type_name(t.type)}, input 0 {type_name(in_type)}")
            if len(t.shape) > MAX_DIMS:
                raise ctx.error(f"Op Concatenation does not currently support num dimensions > "
                                f"{MAX_DIMS} Tensor has {len(t.shape)} dimensions.")
            if in_type == INT8:
                if float(t.scale) != float(out.scale) or t.zero_point != out.zero_point:
                    raise ctx.error(f"input {i} quantization (scale {t.scale}, zero point "
                                    f"{t.zero_point}) differs from the output's (scale {out.scale}, "
                                    f"zero point {out.zero_point}); int8 inputs are not rescaled")
            elif in_type == INT16 and t.zero_point != 0:
                raise ctx.error(f"input {i} has int16 zero point {t.zero_point}, must be 0")
            shapes.append(tuple(t.shape))
            data.decompress.update(ctx.decompression_scratch(node, i))
            ctx.release(t)
        if in_type == INT16 and out.zero_point != 0:
            raise ctx.error(f"output has int16 zero point {out.zero_point}, must be 0")
        out_shape = tuple(out.shape)
        axis = normalize_axis(int(params.axis), len(out_shape))
        if not 0 <= axis < len(out_shape):
            raise ctx.error(f"axis {params.axis} is out of range for an output of "
                            f"{len(out_shape)} dimensions")
        total = 0
        for i, s in enumerate(shapes):
            if len(s) != len(out_shape) or any(a != b for k, (a, b) in enumerate(zip(s, out_shape))
                                               if k != axis):
                raise ctx.error(f"input {i} of shape {s} does not match the output shape "
                                f"{out_shape} off axis {axis}")
            total += s[axis]
        if total != out_shape[axis]:
            raise ctx.error(f"the inputs add up to {total} along axis {axis}, the output has "
                            f"{out_shape[axis]}")
        data.axis = axis
        data.outer = flat_size(out_shape[:axis])
        inner = flat_size(out_shape[axis + 1:])
        starts = np.cumsum([0] + [s[axis] * inner for s in shapes]).tolist()
        data.blocks = tuple(zip(starts[:-1], starts[1:]))
        ctx.release(out)

    def invoke(self, ctx, node):
        data = node.user_data
        out = node.output_arrays[0].reshape(data.outer, data.blocks[-1][1])
        inputs = node.input_arrays
        if data.decompress:
            inputs = [ctx.input_data(node, i, data.decompress[i]) if i in data.decompress else x
                      for i, x in enumerate(inputs)]
        for x, (start, stop) in zip(inputs, data.blocks):
            copy_rows(out[:, start:stop], x.reshape(data.outer, stop - start))
