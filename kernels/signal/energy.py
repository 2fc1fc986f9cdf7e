"""SignalEnergy (TFLM signal library custom op): squared magnitude of complex int16 bins
``start_index <= i < end_index`` (custom options ``end_index``, ``start_index``) into a
uint32 vector; the sum of the two int32 squares wraps as C's int32 would. Output elements
outside the range are left as they are, as in TFLM.
"""
from __future__ import annotations

import numpy as np

from ..base import Kernel, register
from ..internal.signal_common import (INT16, flex_element, sample_shape, signal_options, type_name,
                                      vector_rows)
from ..internal.tensor_utils import TensorType


class EnergyParams:
    """TFLM's TFLMSignalEnergyParams."""

    def __init__(self, end_index, start_index):
        self.end_index, self.start_index = end_index, start_index


@register
class SignalEnergy(Kernel):
    custom_name = "SignalEnergy"
    supported_types = ("int16->uint32 (complex int16 pairs)",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("signal_energy.TFLMSignalEnergyParams"))
        options = signal_options(ctx, node)
        return EnergyParams(flex_element(options, 0), flex_element(options, 1))

    def sample_rows(self, block):
        """One spectrum per sample."""
        return vector_rows(block, (0,))

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error("needs 1 input and 1 output")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        in_shape, out_shape = sample_shape(ctx, inp.shape), sample_shape(ctx, out.shape)
        if len(in_shape) != 1 or len(out_shape) != 1:
            raise ctx.error(f"input {inp.shape} and output {out.shape} must be 1-D")
        if inp.type != INT16 or out.type != TensorType.UINT32:
            raise ctx.error(f"input {type_name(inp.type)} and output {type_name(out.type)} must "
                            "be int16 and uint32")
        p = node.user_data
        if p.start_index < p.end_index and (p.start_index < 0 or p.end_index > out_shape[0]
                                            or 2 * p.end_index > in_shape[0]):
            raise ctx.error(f"range [{p.start_index}, {p.end_index}) exceeds the input "
                            f"({in_shape[0] // 2} bins) or the output ({out_shape[0]})")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        p = node.user_data
        if p.start_index >= p.end_index:
            return
        x = node.input_arrays[0].astype(np.int64)
        re = x[..., 2 * p.start_index:2 * p.end_index:2]
        im = x[..., 2 * p.start_index + 1:2 * p.end_index:2]
        node.output_arrays[0][..., p.start_index:p.end_index] = (
            (re * re + im * im) & 0xFFFFFFFF).astype(np.uint32)
