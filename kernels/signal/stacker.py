"""SignalStacker (TFLM signal custom op): stacks the last left + 1 + right feature frames
(num_channels int16 values each) into one output vector every ``stacker_step`` frames.

Options (flexbuffer map, read by position in key order): num_channels,
stacker_left_context, stacker_right_context, stacker_step. Input [num_channels...] (1-D,
one frame per invoke); outputs: the stacked frames (1-D int16, num_channels x (left + 1
+ right) values) and a bool scalar, true when this invoke produced them. The first frame
is repeated left more times to pad the start. The frames live in a circular buffer of
num_channels x (left + 1 + right) samples allocated at init; when it is full its whole
content is the output and num_channels x step samples are dropped. An invoke without
output leaves the output as it was.

Allocations: init the TFLMSignalStackerParams, then the buffer (the CircularBuffer
struct plus 2 x capacity int16 samples). Prepare only checks tensors.
"""
from __future__ import annotations

from ..base import Kernel, register
from ..internal.circular_buffer import CircularBuffers
from ..internal.signal_common import (check_frame_and_valid_types, flex_element,
                                      frame_and_valid_tensors, signal_options)
from .delay import circular_buffer_bytes


class StackerParams:
    """TFLM's TFLMSignalStackerParams; ``buffer`` is the circular buffer."""

    def __init__(self, num_channels: int, left: int, right: int, step: int):
        self.num_channels, self.left, self.right, self.step = num_channels, left, right, step
        self.buffer_size = num_channels * (left + right + 1)
        self.step_size = num_channels * step
        self.has_first_frame = False
        self.buffer = None


@register
class SignalStacker(Kernel):
    custom_name = "SignalStacker"
    supported_types = ("int16",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_stacker.TFLMSignalStackerParams"))
        options = signal_options(ctx, node)
        # 'num_channels', 'stacker_left_context', 'stacker_right_context', 'stacker_step'
        p = StackerParams(*(flex_element(options, i) for i in range(4)))
        if min(p.num_channels, p.left, p.right, p.step) < 0:
            raise ctx.error(f"num_channels {p.num_channels}, contexts {p.left} / {p.right} and "
                            f"step {p.step} must not be negative (TFLM sizes its buffer from them)")
        if p.step_size > p.buffer_size:
            raise ctx.error(f"stacker_step {p.step} exceeds left + 1 + right frames "
                            f"({p.left + 1 + p.right}): TFLM's read position would leave its buffer")
        ctx.allocate_persistent(circular_buffer_bytes(ctx, p.buffer_size))
        p.buffer = CircularBuffers(1, p.buffer_size)
        return p

    def prepare(self, ctx, node):
        inp, out, valid = frame_and_valid_tensors(ctx, node)
        for what, t, rank in (("input", inp, 1), ("output", out, 1), ("valid output", valid, 0)):
            if len(t.shape) != rank:
                raise ctx.error(f"NumDimensions({what}) != {rank} ({len(t.shape)} != {rank})")
        check_frame_and_valid_types(ctx, inp, out, valid)
        p = node.user_data
        if inp.num_elements < p.num_channels:
            raise ctx.error(f"the input holds {inp.num_elements} values, one frame is "
                            f"{p.num_channels} (TFLM would read past it)")
        if out.num_elements < p.buffer_size:
            raise ctx.error(f"the output holds {out.num_elements} values, a stack is "
                            f"{p.buffer_size} (TFLM would write past it)")
        ctx.release(inp, out, valid)

    def invoke(self, ctx, node):
        p = node.user_data
        buffer = p.buffer
        try:
            buffer.write_values(node.input_arrays[0].reshape(1, -1)[:, :p.num_channels])
            if not p.has_first_frame:
                buffer.extend(p.num_channels, p.left)
                p.has_first_frame = True
            ready = buffer.available() >= p.buffer_size
            if ready:
                node.output_arrays[0].reshape(-1)[:p.buffer_size] = buffer.get(p.buffer_size)[0]
                buffer.discard(p.step_size)
        except OverflowError as e:
            raise ctx.error(f"{e} (TFLM would access memory outside its buffer)") from None
        node.output_arrays[1].reshape(-1)[0] = ready

    def reset(self, ctx, node):
        p = node.user_data
        if p is not None:
            p.buffer.reset()
            p.has_first_frame = False
