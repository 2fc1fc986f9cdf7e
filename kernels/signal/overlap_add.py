"""SignalOverlapAdd (TFLM signal custom op): overlap-add of frames (int16 with int16
saturation, or float32) into a persistent per-row buffer of frame_size samples, emitting
frame_step samples per frame; the buffer carries over invokes (zeroed by prepare and
reset). Options: ``T`` (by name) and ``frame_step`` (element 1).
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import flex_element, flex_map_int, signal_options, type_name
from ..internal.tensor_utils import FLOAT32, INT16

TYPES = {INT16: np.int16, FLOAT32: np.float32}


class OverlapAddParams:
    """TFLM's TFLMSignalOverlapAddParams (state buffers as numpy views of the arena)."""

    def __init__(self, type_, frame_step):
        self.type, self.frame_step = type_, frame_step
        self.frame_size = self.n_frames = self.outer_dims = 0
        self.buffers = []


@register
class SignalOverlapAdd(Kernel):
    custom_name = "SignalOverlapAdd"
    supported_types = ("float32", "int16")

    def init(self, ctx, node):
        options = signal_options(ctx, node)
        type_ = flex_map_int(options, "T")
        if type_ not in TYPES:
            return None
        ctx.allocate_persistent(ctx.sizeof("signal_overlap_add.TFLMSignalOverlapAddParams"))
        return OverlapAddParams(type_, flex_element(options, 1))   # 'frame_step'

    def prepare(self, ctx, node):
        p = node.user_data
        if p is None:
            raise ctx.error("custom option T must be int16 or float32")
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error("needs 1 input and 1 output")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        if len(inp.shape) != len(out.shape) + 1 or len(inp.shape) < 2:
            raise ctx.error(f"input {inp.shape} must have one more dimension (>= 2) than the output {out.shape}")
        if inp.type != p.type or out.type != p.type:
            raise ctx.error(f"input {type_name(inp.type)} and output {type_name(out.type)} must be "
                            f"{type_name(p.type)} (custom option T)")
        p.frame_size = int(inp.shape[-1])
        p.n_frames = int(inp.shape[-2])
        if p.frame_size <= 0 or p.n_frames <= 0:
            raise ctx.error(f"input {inp.shape} has no frames")
        p.outer_dims = int(np.prod(inp.shape, dtype=np.int64)) // (p.frame_size * p.n_frames)
        if not 0 < p.frame_step <= p.frame_size:
            raise ctx.error(f"frame_step {p.frame_step} must be in [1, frame size {p.frame_size}]")
        if int(np.prod(out.shape, dtype=np.int64)) < p.outer_dims * p.n_frames * p.frame_step:
            raise ctx.error(f"output {out.shape} must hold {p.n_frames} steps of {p.frame_step} per row")
        ctx.allocate_persistent(p.outer_dims * ctx.target.sizeof("pointer"))
        dtype = TYPES[p.type]
        p.buffers = [ctx.persistent_array(dtype, p.frame_size) for _ in range(p.outer_dims)]
        self.reset(ctx, node)
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        p = node.user_data
        x = node.input_arrays[0].reshape(p.outer_dims, p.n_frames, p.frame_size)
        y = node.output_arrays[0].reshape(-1)[:p.outer_dims * p.n_frames * p.frame_step]
        y = y.reshape(p.outer_dims, p.n_frames, p.frame_step)
        buf = np.stack(p.buffers)
        step = p.frame_step
        for f in range(p.n_frames):
            if p.type == INT16:
                buf = np.clip(buf.astype(np.int32) + x[:, f], -32768, 32767).astype(np.int16)
            else:
                buf = buf + x[:, f]
            y[:, f] = buf[:, :step]
            buf = np.concatenate([buf[:, step:], np.zeros((p.outer_dims, step), buf.dtype)], axis=1)
        for b, row in zip(p.buffers, buf):
            b[:] = row

    def reset(self, ctx, node):
        p = node.user_data
        if p is not None:
            for b in p.buffers:
                b[:] = 0
