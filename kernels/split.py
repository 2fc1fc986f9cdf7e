"""SPLIT: float32, int8, int16 and int32, as TFLM's reference kernel.

Inputs: the axis (constant; TFLM reads its first int32 word), then the tensor to split.
Prepare only takes the axis as a temporary tensor and checks it is constant. Eval cuts
the input along the axis (negative counts from the end) into as many equal pieces as
the node has outputs (``num_splits`` is not used). The checks TFLM makes in eval (axis
range, type) or not at all (output shapes and types) are made here in prepare.
"""
from __future__ import annotations

from .base import Kernel, register
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, copy_rows, flat_size, int32_words, type_name

SUPPORTED = (FLOAT32, INT8, INT16, INT32)


class OpData:
    outer = 0
    sizes = ()      # elements of each output per outer step


def split_prepare(ctx, node, data, axis_tensor, input_index: int, equal: bool):
    """Shared by SPLIT and SPLIT_V: the axis, then the output shapes against the input."""
    if axis_tensor.data is None:
        raise ctx.error("Non-constant >axis< tensor is not supported")
    words = int32_words(axis_tensor.data, 1)
    if words is None:
        raise ctx.error("the axis tensor is empty")
    if len(node.inputs) <= input_index or node.inputs[input_index] < 0:
        raise ctx.error("the input tensor is missing")
    inp = ctx.eval_tensor(node.inputs[input_index])
    in_shape = tuple(inp.shape)
    axis = int(words[0])
    if axis < 0:
        axis += len(in_shape)
    if not 0 <= axis < len(in_shape):
        raise ctx.error(f"axis {int(words[0])} is out of range for an input of {len(in_shape)} "
                        "dimensions")
    if inp.type not in SUPPORTED:
        raise ctx.error(f"Type {type_name(inp.type)} currently not supported.")
    n = len(node.outputs)
    if n < 1 or any(t < 0 for t in node.outputs):
        raise ctx.error("an output tensor is missing")
    outs = [ctx.eval_tensor(t) for t in node.outputs]
    pieces = []
    for i, o in enumerate(outs):
        shape = tuple(o.shape)
        if o.type != inp.type:
            raise ctx.error(f"output {i} type {type_name(o.type)} differs from the input type "
                            f"{type_name(inp.type)}")
        if len(shape) != len(in_shape) or any(a != b for k, (a, b) in enumerate(zip(shape, in_shape))
                                              if k != axis):
            raise ctx.error(f"output {i} of shape {shape} does not match the input shape "
                            f"{in_shape} off axis {axis}")
        pieces.append(shape[axis])
    if equal and len(set(pieces)) != 1:
        raise ctx.error(f"outputs have different sizes {pieces} along axis {axis}")
    if sum(pieces) != in_shape[axis]:
        raise ctx.error(f"output sizes {pieces} along axis {axis} do not add up to the input's "
                        f"{in_shape[axis]}")
    inner = flat_size(in_shape[axis + 1:])
    data.outer = flat_size(in_shape[:axis])
    data.sizes = tuple(p * inner for p in pieces)


def split_invoke(node, data, x):
    x = x.reshape(data.outer, sum(data.sizes))
    start = 0
    for out, n in zip(node.output_arrays, data.sizes):
        copy_rows(out.reshape(data.outer, n), x[:, start:start + n])
        start += n


@register
class Split(Kernel):
    op = "SPLIT"
    supported_types = ("float32", "int8", "int16", "int32")
    type_input = 1

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        axis = ctx.input(node, 0)
        if axis is None:
            raise ctx.error("the axis tensor is missing")
        split_prepare(ctx, node, node.user_data, axis, 1, equal=True)
        ctx.release(axis)

    def invoke(self, ctx, node):
        split_invoke(node, node.user_data, node.input_arrays[1])
