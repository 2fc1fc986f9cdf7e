"""SPACE_TO_BATCH_ND: float32 and int8, 3-D (NHC) or 4-D (NHWC) tensors, as TFLM's
reference kernel (prepare shared with BATCH_TO_SPACE_ND).

Init allocates TFLM's SpaceToBatchParams (output_offset). Block shape and paddings are
read as int32 words: block height [0] and, for 4-D, width [1]; padding top [0] and, for
4-D, left [2]. Output batch b, row h, column w reads input batch b % in_batch at

    row h * bh + (b // in_batch) // bw - top, column w * bw + (b // in_batch) % bw - left

or, outside the input, is filled with the byte ``output_offset`` (memset). TFLM never
writes output_offset, so the fill is whatever the arena held at that persistent struct:
zero in a fresh, zero-filled arena (an MCU's .bss arena, a fresh host allocation) — what
is emulated here, so int8 padding is 0, not the zero point. (In a reused host buffer
TFLM's fill is left-over memory: its padded values are not reproducible.)
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .base import Kernel, register
from .batch_to_space_nd import Shape4, block_and_offsets, check_space_batch_tensors, runtime_plan
from .internal.tensor_utils import items


def space_to_batch_sources(in4: Shape4, out4: Shape4, bh: int, bw: int, top: int,
                           left: int) -> np.ndarray:
    """For each output pixel (flat NHW order), the flat input pixel it copies, or -1
    for padding."""
    ib, ih, iw, _ = in4
    ob, oh, ow, _ = out4
    batch = np.arange(ob, dtype=np.int64)
    in_batch, offset = batch % ib, batch // ib
    rows = np.arange(oh, dtype=np.int64)[None, :] * bh + (offset // bw)[:, None] - top    # (ob, oh)
    cols = np.arange(ow, dtype=np.int64)[None, :] * bw + (offset % bw)[:, None] - left    # (ob, ow)
    inside = ((rows >= 0) & (rows < ih))[:, :, None] & ((cols >= 0) & (cols < iw))[:, None, :]
    source = (in_batch[:, None, None] * ih + rows[:, :, None]) * iw + cols[:, None, :]
    return np.where(inside, source, -1).reshape(-1)


class OpData:
    in4 = out4 = None
    rank = 4
    plan = None               # (sources, padded pixel indices, copied pixel indices) or None
    cached_key = None
    cached_plan = None
    params: Optional[np.ndarray] = None     # SpaceToBatchParams in the arena


@register
class SpaceToBatchND(Kernel):
    op = "SPACE_TO_BATCH_ND"
    supported_types = ("float32", "int8")

    def init(self, ctx, node):
        data = OpData()
        data.params = ctx.persistent_array(np.int32, 1, ctx.sizeof("space_to_batch_nd.SpaceToBatchParams"))
        return data

    def prepare(self, ctx, node):
        data = node.user_data
        data.in4, data.out4, data.rank, block, paddings = check_space_batch_tensors(ctx, node, "paddings")
        if block is not None and paddings is not None:
            data.plan = self._plan(ctx, data, block, paddings)

    @staticmethod
    def _plan(ctx, data, block_words, padding_words):
        bh, bw, top, left = block_and_offsets(ctx, data.rank, block_words, padding_words)
        sources = space_to_batch_sources(data.in4, data.out4, bh, bw, top, left)
        padded = np.flatnonzero(sources < 0)
        if padded.size == 0:
            return sources, None, None
        copied = np.flatnonzero(sources >= 0)
        return sources[copied], padded, copied

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        plan = data.plan
        if plan is None:
            plan = runtime_plan(ctx, node, data, self._plan)
        if out.size == 0:
            return
        sources, padded, copied = plan
        source_items = items(x).reshape(-1)
        out_items = items(out).reshape(-1)
        if padded is None:
            np.take(source_items, sources, out=out_items)
            return
        out_items[copied] = source_items[sources]
        # memset(pixel, output_offset, depth * sizeof(T)): the low byte of the struct's
        # (never written) output_offset
        fill = np.uint8(int(data.params[0]) & 0xFF)
        out.reshape(out_items.size, -1).view(np.uint8)[padded] = fill
