"""BATCH_TO_SPACE_ND: float32 and int8, 3-D (NHC) or 4-D (NHWC) tensors, as TFLM's
reference kernel.

No init / OpData: prepare takes the input and the output as temporary tensors and checks
ranks 3 to 4 and equal types (TFLM checks nothing more). The block shape and crops are
read at invoke as int32 words whatever their tensor type (TFLM's GetTensorData<int32_t>):
block height [0] and, for 4-D, width [1]; crop top [0] and, for 4-D, left [2] (the bottom
and right crops are implied by the output shape). Input batch b, row h, column w goes to

    output batch b % out_batch, row h * bh + (b // out_batch) // bw - top,
    column w * bw + (b // out_batch) % bw - left

when that lies inside the output (TFLM skips it otherwise; the last write wins). Where
TFLM would leave an output pixel unwritten (shapes inconsistent with the block shape and
crops) its value is whatever the arena held; that is refused here, as are blocks < 1
(TFLM divides by the block width) and mismatched ranks or depths. The pixel map is built
once when block shape and crops are constant, else at invoke.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import FLOAT32, INT8, check_io_count, int32_words, items, type_name

SUPPORTED = (FLOAT32, INT8)
Shape4 = Tuple[int, int, int, int]


def extend_to_4d(shape) -> Shape4:
    """TFLM's ExtendShapeBatchToSpace / SpaceToBatch: NHC -> NH1C."""
    shape = tuple(int(d) for d in shape)
    return shape if len(shape) == 4 else (shape[0], shape[1], 1, shape[2])


def check_space_batch_tensors(ctx, node, what: str):
    """The shared prepare of BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND; returns the input and
    output 4-D shapes and whether the block and ``what`` (crops / paddings) are constant
    (their int32 words, else None)."""
    check_io_count(ctx, node, 3)
    inp = ctx.required_input(node, 0, "the input tensor")
    out = ctx.required_output(node, 0, "the output tensor")
    for name, t in (("input", inp), ("output", out)):
        if not 3 <= len(t.shape) <= 4:
            raise ctx.error(f"the {name} must have 3 or 4 dimensions, got shape {tuple(t.shape)}")
    if inp.type != out.type:
        raise ctx.error(f"input type {type_name(inp.type)} and output type "
                        f"{type_name(out.type)} differ")
    if inp.type not in SUPPORTED:
        raise ctx.error(f"Type {type_name(inp.type)} ({inp.type}) not supported.")
    if len(inp.shape) != len(out.shape):
        raise ctx.error(f"input {tuple(inp.shape)} and output {tuple(out.shape)} must have the "
                        "same number of dimensions")
    if inp.shape[-1] != out.shape[-1]:
        raise ctx.error(f"input depth {inp.shape[-1]} and output depth {out.shape[-1]} differ")
    ctx.release(inp, out)
    rank = len(inp.shape)
    constant = []
    for i, name, count in ((1, "block shape", 2 if rank == 4 else 1),
                           (2, what, 3 if rank == 4 else 1)):
        if node.inputs[i] < 0:
            raise ctx.error(f"the {name} tensor is missing")
        tensor = ctx.eval_tensor(node.inputs[i])     # read without a temporary, as TFLM
        if tensor.is_constant:
            words = int32_words(tensor.spec.data, count)
            if words is None:
                raise ctx.error(f"the {name} tensor of shape {tuple(tensor.shape)} holds fewer "
                                f"than the {count} int32 values TFLM reads")
            constant.append(words)
        else:
            constant.append(None)
    return extend_to_4d(inp.shape), extend_to_4d(out.shape), rank, constant[0], constant[1]


def block_and_offsets(ctx, rank: int, block_words, extra_words):
    """(bh, bw, top, left) from the int32 words TFLM reads; blocks must be >= 1."""
    bh = int(block_words[0])
    bw = int(block_words[1]) if rank == 4 else 1
    top = int(extra_words[0])
    left = int(extra_words[2]) if rank == 4 else 0
    if bh < 1 or bw < 1:
        raise ctx.error(f"block shape ({bh}, {bw}) must be >= 1")
    return bh, bw, top, left


def runtime_words(ctx, array: np.ndarray, count: int, name: str) -> np.ndarray:
    words = int32_words(array, count)
    if words is None:
        raise ctx.error(f"the {name} tensor holds fewer than the {count} int32 values TFLM reads")
    return words


def runtime_plan(ctx, node, data, build):
    """The pixel plan for run-time block shape and crops / paddings: ``build(ctx, data,
    block words, crop or padding words)``, cached while the values repeat (``data``
    carries ``rank``, ``cached_key`` and ``cached_plan``)."""
    block = runtime_words(ctx, node.input_arrays[1], 2 if data.rank == 4 else 1, "block shape")
    extra = runtime_words(ctx, node.input_arrays[2], 3 if data.rank == 4 else 1, "crops / paddings")
    key = (block.tobytes(), extra.tobytes())
    if key != data.cached_key:
        data.cached_plan = build(ctx, data, block, extra)
        data.cached_key = key
    return data.cached_plan


def batch_to_space_sources(in4: Shape4, out4: Shape4, bh: int, bw: int, top: int,
                           left: int) -> np.ndarray:
    """For each output pixel (flat NHW order), the flat input pixel TFLM writes there
    last, or -1 if none."""
    ib, ih, iw, _ = in4
    ob, oh, ow, _ = out4
    batch = np.arange(ib, dtype=np.int64)
    out_batch, offset = batch % ob, batch // ob
    rows = np.arange(ih, dtype=np.int64)[None, :] * bh + (offset // bw)[:, None] - top    # (ib, ih)
    cols = np.arange(iw, dtype=np.int64)[None, :] * bw + (offset % bw)[:, None] - left    # (ib, iw)
    inside = ((rows >= 0) & (rows < oh))[:, :, None] & ((cols >= 0) & (cols < ow))[:, None, :]
    target = (out_batch[:, None, None] * oh + rows[:, :, None]) * ow + cols[:, None, :]
    source = np.arange(ib * ih * iw, dtype=np.int64).reshape(ib, ih, iw)
    sources = np.full(ob * oh * ow, -1, dtype=np.int64)
    np.maximum.at(sources, target[inside], source[inside])
    return sources


class OpData:
    in4 = out4 = None
    rank = 4
    sources: Optional[np.ndarray] = None      # constant block / crops
    cached_key = None
    cached_plan = None


@register
class BatchToSpaceND(Kernel):
    op = "BATCH_TO_SPACE_ND"
    supported_types = ("float32", "int8")

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        data.in4, data.out4, data.rank, block, crops = check_space_batch_tensors(ctx, node, "crops")
        if block is not None and crops is not None:
            data.sources = self._sources(ctx, data, block, crops)

    @staticmethod
    def _sources(ctx, data, block_words, crop_words) -> np.ndarray:
        bh, bw, top, left = block_and_offsets(ctx, data.rank, block_words, crop_words)
        sources = batch_to_space_sources(data.in4, data.out4, bh, bw, top, left)
        if sources.size and sources.min() < 0:
            first = int(np.argmax(sources < 0))
            raise ctx.error(
                f"block shape ({bh}, {bw}) and crops (top {top}, left {left}) leave output pixel "
                f"{first} of {data.out4[:3]} unwritten (TFLM would leave arena garbage there): "
                f"the output shape must be (batch / (bh * bw), height * bh - crops, "
                f"width * bw - crops, depth) for input {data.in4}")
        return sources

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        sources = data.sources
        if sources is None:
            sources = runtime_plan(ctx, node, data, self._sources)
        if out.size == 0:
            return
        np.take(items(x).reshape(-1), sources, out=items(out).reshape(-1))
