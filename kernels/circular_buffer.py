"""CIRCULAR_BUFFER (TFLM's custom op for strided streaming models, e.g. keyword spotting):
each invoke shifts the output [1, slots, h, w] by one slot towards the front and writes
the input [1, 1, h, w] into the last slot (int8 only). The op runs every ``cycles_max``
invokes; in between it ends the run early (kTfLiteAbort: the operators after it do not
run and invoke returns 15).

``cycles_max`` is element 0 of the custom options (TFLM's FlexbufferWrapper). When it is
missing or <= 0 TFLM guesses it in prepare from the output shape, for the two streaming
models it knows: 1 for 5, 13 or 25 slots, or for the 5th such guess in the process with
an output of [.., 2, 96] (a counter shared by every interpreter of the process, as TFLM's
function-static one is), else 2. Reset restarts the period; the buffer itself is the
output tensor (a variable tensor in TFLM's streaming models, zeroed by reset).

Allocations: init takes TFLM's OpDataCircularBuffer from the tail; nothing else.
"""
from __future__ import annotations

from .base import ABORT, Kernel, register
from .internal.signal_common import flex_element, signal_options
from .internal.tensor_utils import INT8, type_name

#: TFLM's function-static cb_prepare_count: prepares that had to guess cycles_max
_guess_count = 0


def reset_guess_count() -> None:
    """Start the shared guess counter again (a new process, for TFLM)."""
    global _guess_count
    _guess_count = 0


class OpData:
    def __init__(self, cycles_max: int):
        self.cycles_max = cycles_max
        self.cycles_until_run = 0
        self.slots = self.depth = 0


@register
class CircularBuffer(Kernel):
    custom_name = "CIRCULAR_BUFFER"
    invoke_allocates = True     # its invoke may end the run early (what runs next)
    supported_types = ("int8",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("circular_buffer.OpDataCircularBuffer"))
        cycles_max = 0
        if node.custom_options:
            cycles_max = flex_element(signal_options(ctx, node), 0)   # 'cycles_max'
        return OpData(cycles_max)

    def prepare(self, ctx, node):
        global _guess_count
        # the package's TFLM checks node->inputs->size == 1; one output (int8)
        ctx.check_counts(node, 1, 1, exact_inputs=True, exact_outputs=True)
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        data = node.user_data
        if len(inp.shape) != 4 or len(out.shape) != 4:
            raise ctx.error(f"input {inp.shape} and output {out.shape} must be 4-D "
                            "(TFLM reads four dimensions of each)")
        for k, (a, b) in enumerate(((inp.shape[0], out.shape[0]), (1, inp.shape[1]),
                                    (inp.shape[2], out.shape[2]), (out.shape[3], inp.shape[3]))):
            if a != b:
                raise ctx.error(f"dimension check {k}: {a} != {b} (input {inp.shape}, output "
                                f"{out.shape})")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} != output type {type_name(out.type)}")
        if inp.type != INT8:
            raise ctx.error(f"input type {type_name(inp.type)} != INT8 (only int8 is supported)")
        if out.shape[1] < 1:
            raise ctx.error(f"output {out.shape} has no slot (TFLM's shift would run past it)")
        if data.cycles_max <= 0:
            _guess_count += 1
            slots, h, w = out.shape[1], out.shape[2], out.shape[3]
            if slots in (5, 13, 25) or (_guess_count == 5 and h == 2 and w == 96):
                data.cycles_max = 1
                _guess_count = 0
            else:
                data.cycles_max = 2
        data.cycles_until_run = data.cycles_max
        data.slots, data.depth = int(out.shape[1]), int(out.shape[2]) * int(out.shape[3])
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        data = node.user_data
        out = node.output_arrays[0].reshape(-1)
        depth, slots = data.depth, data.slots
        if slots > 0:
            out[:(slots - 1) * depth] = out[depth:slots * depth].copy()
            out[(slots - 1) * depth:slots * depth] = node.input_arrays[0].reshape(-1)[:depth]
        data.cycles_until_run -= 1
        if data.cycles_until_run != 0:
            return ABORT
        data.cycles_until_run = data.cycles_max
        return None

    def reset(self, ctx, node):
        data = node.user_data
        if data is not None:
            data.cycles_until_run = data.cycles_max
