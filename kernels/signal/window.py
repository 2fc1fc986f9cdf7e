"""SignalWindow (TFLM signal library custom op): int16 frames times an int16 window.

Every window-length slice of the input is multiplied element-wise by the window in
int32, arithmetically shifted right by ``shift`` (custom option) and saturated to int16.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import INT16, flex_element, type_name, signal_options


class WindowParams:
    """TFLM's TFLMSignalWindowParams."""

    def __init__(self, shift):
        self.shift = shift
        self.input_size = 0


@register
class SignalWindow(Kernel):
    custom_name = "SignalWindow"
    supported_types = ("int16",)

    def sample_rows(self, block):
        """Window-length rows, each windowed alone: samples stay apart."""
        inp, out = block.input(0), block.output(0)
        return (block.only_vary((0,)) and len(block.outputs) == 1
                and tuple(inp.shape) == tuple(out.shape))

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_window.TFLMSignalWindowParams"))
        return WindowParams(flex_element(signal_options(ctx, node), 0))   # 'shift'

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error("needs 2 inputs and 1 output")
        inp = ctx.required_input(node, 0)
        weights = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if len(inp.shape) < 1 or len(weights.shape) != 1 or len(inp.shape) != len(out.shape):
            raise ctx.error(f"input {inp.shape}, weights {weights.shape}, output {out.shape}: "
                            "weights must be 1-D, input and output of equal rank >= 1")
        for name, t in (("input", inp), ("weights", weights), ("output", out)):
            if t.type != INT16:
                raise ctx.error(f"{name} type {type_name(t.type)} must be int16")
        params = node.user_data
        params.input_size = int(np.prod(inp.shape, dtype=np.int64))
        size = int(weights.shape[0])
        out_size = int(np.prod(out.shape, dtype=np.int64))
        if size <= 0 or params.input_size % size or out_size < params.input_size:
            raise ctx.error(f"input size {params.input_size} must be a multiple of the window "
                            f"length {size} and fit the output ({out_size})")
        if not 0 <= params.shift < 32:
            raise ctx.error(f"shift {params.shift} must be in [0, 31]")
        ctx.release(inp, weights, out)

    def invoke(self, ctx, node):
        params = node.user_data
        w = node.input_arrays[1].reshape(-1).astype(np.int32)
        x = node.input_arrays[0].reshape(-1)[:params.input_size].reshape(-1, w.size).astype(np.int32)
        raw = (x * w) >> params.shift
        y = node.output_arrays[0].reshape(-1)
        y[:params.input_size] = np.clip(raw, -32768, 32767).astype(np.int16).reshape(-1)
