"""SignalDelay (TFLM signal custom op): delay every innermost row of int16 samples by
``delay_length`` samples (element 0 of the options). Each row has a circular buffer of
frame_size + delay_length samples in the arena, primed with delay_length zeros by
prepare and reset; per invoke the row is written, the oldest frame_size samples are
read out and discarded.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import INT16, flex_element, signal_options, type_name


class DelayParams:
    """TFLM's TFLMSignalFrontendDelayParams; ``pending`` holds each row's buffered samples."""

    def __init__(self, delay_length):
        self.delay_length = delay_length
        self.frame_size = self.outer_dims = 0
        self.pending = None


def circular_buffer_bytes(ctx, capacity: int) -> int:
    """CircularBufferGetNeededMemory: the struct plus 2 x capacity int16 samples."""
    return ctx.sizeof("circular_buffer.CircularBuffer") + 2 * 2 * capacity


@register
class SignalDelay(Kernel):
    custom_name = "SignalDelay"
    supported_types = ("int16",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_delay.TFLMSignalFrontendDelayParams"))
        return DelayParams(flex_element(signal_options(ctx, node), 0))   # 'delay_length'

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error("needs 1 input and 1 output")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        if inp.type != INT16 or out.type != INT16:
            raise ctx.error(f"input {type_name(inp.type)} and output {type_name(out.type)} must be int16")
        p = node.user_data
        if len(inp.shape) < 1 or int(inp.shape[-1]) <= 0:
            raise ctx.error(f"input {inp.shape} needs a nonempty innermost dimension")
        if p.delay_length < 0:
            raise ctx.error(f"delay_length {p.delay_length} must not be negative")
        p.frame_size = int(inp.shape[-1])
        p.outer_dims = int(np.prod(inp.shape, dtype=np.int64)) // p.frame_size
        if int(np.prod(out.shape, dtype=np.int64)) < p.outer_dims * p.frame_size:
            raise ctx.error(f"output {out.shape} is smaller than the input {inp.shape}")
        pointer = ctx.target.sizeof("pointer")
        ctx.allocate_persistent(p.outer_dims * pointer)     # state_buffers
        ctx.allocate_persistent(p.outer_dims * pointer)     # circular_buffers
        for _ in range(p.outer_dims):
            ctx.allocate_persistent(circular_buffer_bytes(ctx, p.frame_size + p.delay_length))
        self.reset(ctx, node)
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        p = node.user_data
        x = node.input_arrays[0].reshape(p.outer_dims, p.frame_size)
        line = np.concatenate([p.pending, x], axis=1)
        y = node.output_arrays[0].reshape(-1)[:p.outer_dims * p.frame_size]
        y.reshape(p.outer_dims, p.frame_size)[...] = line[:, :p.frame_size]
        p.pending = line[:, p.frame_size:].copy()

    def reset(self, ctx, node):
        p = node.user_data
        if p is not None:
            p.pending = np.zeros((p.outer_dims, p.delay_length), np.int16)
