"""SignalFramer (TFLM signal custom op): cuts the innermost dimension of an int16 signal
into frames of ``frame_size`` samples every ``frame_step`` samples, across invokes.

Options (flexbuffer map, read by position in key order): frame_size, frame_step,
prefill. Input [..., n * frame_step]; outputs: frames [..., n, frame_size] (int16) and a
bool scalar, true when every frame of this invoke was complete. Each outer row has a
circular buffer of frame_size rounded up to a multiple of frame_step samples (prefilled
with frame_size - frame_step zeros when ``prefill``); per step the step's samples are
appended and, once frame_size samples are buffered, a frame is read out and frame_step
samples dropped. A frame that is not complete leaves its output rows as they were.

Allocations: init the TFLMSignalFramerParams; prepare one state pointer and one buffer
pointer per outer row, then per row a buffer (the CircularBuffer struct plus 2 x
capacity int16 samples). Reset empties (and prefills) the buffers.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.circular_buffer import CircularBuffers
from ..internal.signal_common import (check_frame_and_valid_types, flex_element,
                                      flex_element_bool, frame_and_valid_tensors, signal_options)
from .delay import circular_buffer_bytes


class FramerParams:
    """TFLM's TFLMSignalFramerParams; ``buffers`` holds the rows' circular buffers."""

    def __init__(self, frame_size: int, frame_step: int, prefill: bool):
        self.frame_size, self.frame_step, self.prefill = frame_size, frame_step, prefill
        self.outer_dims = self.n_frames = 0
        self.buffers = None


@register
class SignalFramer(Kernel):
    custom_name = "SignalFramer"
    supported_types = ("int16",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_framer.TFLMSignalFramerParams"))
        options = signal_options(ctx, node)
        # 'frame_size', 'frame_step', 'prefill'
        return FramerParams(flex_element(options, 0), flex_element(options, 1),
                            flex_element_bool(options, 2))

    def prepare(self, ctx, node):
        inp, out, valid = frame_and_valid_tensors(ctx, node)
        if len(inp.shape) + 1 != len(out.shape):
            raise ctx.error(f"output rank {len(out.shape)} != input rank {len(inp.shape)} + 1")
        if len(valid.shape) != 0:
            raise ctx.error(f"the valid output must be a scalar, not {valid.shape}")
        check_frame_and_valid_types(ctx, inp, out, valid)
        p = node.user_data
        if p.frame_step <= 0 or p.frame_size <= 0:
            raise ctx.error(f"frame_size {p.frame_size} and frame_step {p.frame_step} must be "
                            "positive (TFLM divides by the step and sizes buffers from both)")
        if p.prefill and p.frame_size < p.frame_step:
            raise ctx.error(f"prefill with frame_size {p.frame_size} < frame_step "
                            f"{p.frame_step}: TFLM would write a negative count of zeros")
        if len(inp.shape) < 1:
            raise ctx.error("the input needs at least one dimension")
        innermost = int(inp.shape[-1])
        if innermost < p.frame_step:
            raise ctx.error(f"innermost_dim >= params->frame_step was not true ({innermost} < "
                            f"{p.frame_step})")
        if innermost % p.frame_step:
            raise ctx.error(f"innermost_dim % params->frame_step != 0 ({innermost} % {p.frame_step})")
        p.outer_dims = int(np.prod(inp.shape, dtype=np.int64)) // innermost
        p.n_frames = innermost // p.frame_step
        if int(np.prod(out.shape, dtype=np.int64)) < p.outer_dims * p.n_frames * p.frame_size:
            raise ctx.error(f"output {out.shape} holds fewer than {p.outer_dims} x {p.n_frames} "
                            f"frames of {p.frame_size} samples (TFLM would write past it)")
        pointer = ctx.target.sizeof("pointer")
        ctx.allocate_persistent(p.outer_dims * pointer)     # state_buffers
        ctx.allocate_persistent(p.outer_dims * pointer)     # circular_buffers
        capacity = -(-p.frame_size // p.frame_step) * p.frame_step
        for _ in range(p.outer_dims):
            ctx.allocate_persistent(circular_buffer_bytes(ctx, capacity))
        p.buffers = CircularBuffers(p.outer_dims, capacity)
        self.reset(ctx, node)
        ctx.release(inp, out, valid)

    def invoke(self, ctx, node):
        p = node.user_data
        x = node.input_arrays[0].reshape(p.outer_dims, p.n_frames, p.frame_step)
        frames = node.output_arrays[0].reshape(-1)[:p.outer_dims * p.n_frames * p.frame_size]
        frames = frames.reshape(p.outer_dims, p.n_frames, p.frame_size)
        valid = True
        try:
            for f in range(p.n_frames):
                p.buffers.write_values(x[:, f, :])
                if p.buffers.available() >= p.frame_size:
                    frames[:, f, :] = p.buffers.get(p.frame_size)
                    p.buffers.discard(p.frame_step)
                else:
                    valid = False
        except OverflowError as e:
            raise ctx.error(f"{e} (TFLM would access memory outside its buffer)") from None
        node.output_arrays[1].reshape(-1)[0] = valid

    def reset(self, ctx, node):
        p = node.user_data
        if p is not None and p.buffers is not None:
            p.buffers.reset()
            if p.prefill:
                p.buffers.write_zeros(p.frame_size - p.frame_step)
