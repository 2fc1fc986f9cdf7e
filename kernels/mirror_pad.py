"""MIRROR_PAD: float32 and int8, REFLECT and SYMMETRIC, any rank, as TFLM's kernel.

Init allocates TFLM's OpDataMirrorPad; prepare takes input, paddings and output as
temporary tensors (paddings 2-D with one row per input dimension) and requests TFLM's two
scratch buffers of rank x 4 bytes (output strides, then input strides). The mode is
REFLECT (edge not repeated, offset 1) only when the options say so; SYMMETRIC, an unknown
mode or missing options mirror with the edge (offset 0), as TFLM's parser leaves them.

TFLM maps every output index along each dimension from the *output's* shape and the
left padding only (the right padding is never read):

    d < left:            left + offset - 1 - min(d, left - 1)
    d - left < in:       d - left
    else (e = d-left-in): (in - 1 - offset) - min(e, in - 1 - offset)

so the output shape is taken from the model as it is; the mapping must stay inside the
input (left <= in - offset), which TFLM does not check. Paddings are int32 or int64,
read in pairs (left, right) from the flat tensor, truncated to int as TFLM passes them;
they may be run-time inputs (the index maps are then built at invoke, cached per value).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from .base import Kernel, register
from .internal.quantization import wrap_int32
from .internal.tensor_utils import FLOAT32, INT32, INT64, INT8, type_name

SUPPORTED = (FLOAT32, INT8)
REFLECT = 0          # schema MirrorPadMode


def mirror_indices(out_size: int, in_size: int, left: int, offset: int) -> np.ndarray:
    """TFLM's GetInputDimension for every output position along one axis (int64)."""
    d = np.arange(out_size, dtype=np.int64)
    before = left + offset - 1 - np.minimum(d, left - 1)
    inner = d - left
    beyond = inner - in_size
    last = in_size - 1 - offset
    after = last - np.minimum(beyond, last)
    return np.where(d < left, before, np.where(inner >= in_size, after, inner))


class OpData:
    offset = 0
    in_shape: Tuple[int, ...] = ()
    out_shape: Tuple[int, ...] = ()
    maps: Optional[List[np.ndarray]] = None      # constant paddings
    cached_key = None
    cached_maps = None


@register
class MirrorPad(Kernel):
    op = "MIRROR_PAD"
    supported_types = ("float32", "int8")

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("mirror_pad.OpDataMirrorPad"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        ctx.check_counts(node, 2, 1)      # TFLM reads input 0, 1 and output 0, ignores others
        inp = ctx.required_input(node, 0, "the input tensor")
        paddings = ctx.required_input(node, 1, "the paddings tensor")
        out = ctx.required_output(node, 0, "the output tensor")
        rank = len(inp.shape)
        if len(paddings.shape) != 2:
            raise ctx.error(f"the paddings must be 2-D, got shape {tuple(paddings.shape)}")
        if paddings.shape[0] != rank:
            raise ctx.error(f"the paddings have {paddings.shape[0]} rows for an input of {rank} dimensions")
        if paddings.type not in (INT32, INT64):
            raise ctx.error(f"paddings of type {type_name(paddings.type)} are not supported "
                            "(int32 or int64; TFLM would read them as zeros)")
        if paddings.num_elements < 2 * rank:
            raise ctx.error(f"the paddings hold {paddings.num_elements} values, TFLM reads {2 * rank}")
        params = node.params
        data.offset = 1 if params.present and int(params.mode) == REFLECT else 0
        ctx.request_scratch(4 * rank)      # output dims' element counts
        ctx.request_scratch(4 * rank)      # input dims' element counts
        if inp.type not in SUPPORTED:
            raise ctx.error(f"type {type_name(inp.type)} is not supported (float32 or int8)")
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        if len(out.shape) != rank:
            raise ctx.error(f"input {tuple(inp.shape)} and output {tuple(out.shape)} must have the "
                            "same number of dimensions")
        data.in_shape, data.out_shape = tuple(inp.shape), tuple(out.shape)
        if paddings.data is not None:
            data.maps = self._maps(ctx, data, paddings.data)
        ctx.release(inp, paddings, out)

    @staticmethod
    def _maps(ctx, data, paddings: np.ndarray) -> List[np.ndarray]:
        """Per dimension, the input index of every output index."""
        lefts = wrap_int32(np.asarray(paddings).reshape(-1)[0:2 * len(data.in_shape):2].astype(np.int64))
        maps = []
        for axis, (o, i, left) in enumerate(zip(data.out_shape, data.in_shape, lefts.tolist())):
            index = mirror_indices(o, i, left, data.offset)
            if index.size and (index.min() < 0 or index.max() >= i):
                raise ctx.error(f"dimension {axis}: left padding {left} reads outside the input of "
                                f"size {i} (at most {i - data.offset} for this mode)")
            maps.append(index)
        return maps

    def invoke(self, ctx, node):
        data = node.user_data
        maps = data.maps
        if maps is None:
            paddings = node.input_arrays[1]
            key = paddings.tobytes()
            if key != data.cached_key:
                data.cached_maps = self._maps(ctx, data, paddings)
                data.cached_key = key
            maps = data.cached_maps
        out = node.output_arrays[0]
        if out.size == 0:
            return
        x = node.input_arrays[0]
        if len(maps) == 0:
            np.copyto(out, x)
            return
        out[...] = x[np.ix_(*maps)]
