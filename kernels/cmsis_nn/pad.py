"""PAD and PADV2 as TFLM's CMSIS-NN build runs them (``kernels/cmsis_nn/pad.cc``): int8 by
``arm_pad_s8``, float32 / int16 / int32 by the reference code; the reference init and
prepare (TFLM's OpData, no other allocation).

``arm_pad_s8`` works on the last four dimensions only: for a 5-D int8 input TFLM's build
fills the start of the output with the input's first slice padded in the other four
dimensions and leaves the rest of the output unwritten (whatever the arena held): the
emulator refuses such a node at invoke with a clear error.
Negative paddings, which the reference kernel tolerates, would make it write a negative
(huge) number of bytes: the emulator refuses them for int8.
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.internal.tensor_utils import INT8
from kernels.pad import Pad, PadV2


class _CmsisNnPad:
    library = "cmsis-nn"

    def sample_rows(self, block):
        """As the reference kernel (samples stay apart unless the batch axis they
        replace is padded; a prepended sample axis gets a zero padding row), except that
        an int8 block must stay within ``arm_pad_s8``'s four dimensions: a prepended
        sample axis on a 4-D input would make it 5-D."""
        if not super().sample_rows(block):
            return False
        inp = block.input(0)
        return inp.type != INT8 or len(block.shape(inp)) <= 4

    def prepare(self, ctx, node):
        super().prepare(ctx, node)
        data = node.user_data
        out = ctx.eval_tensor(node.outputs[0])
        inp = ctx.eval_tensor(node.inputs[0])
        data.cmsis_int8 = inp.type == INT8
        if data.cmsis_int8:
            in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
            before = [s.start for s in data.box]
            after = [o - s.start - n for o, s, n in zip(out_shape, data.box, data.box_shape)]
            if data.box_shape != in_shape:
                raise ctx.error("negative paddings are not supported by CMSIS-NN's arm_pad_s8")
            data.cmsis_last4 = (in_shape[-4:], before[-4:], after[-4:])

    def invoke(self, ctx, node):
        data = node.user_data
        if not data.cmsis_int8:
            return super().invoke(ctx, node)
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        if data.has_value:
            pad = node.input_arrays[2].reshape(-1)[0]
        else:
            pad = np.int8(np.uint8(data.output_zero_point & 0xFF).view(np.int8))
        in4, before, after = data.cmsis_last4
        if len(in4) == len(x.shape):
            out[...] = pad
            out[data.box] = x
            return None
        raise ctx.error("CMSIS-NN's arm_pad_s8 pads only the last four dimensions of this "
                        "5-D int8 input: TFLM's CMSIS-NN build leaves the rest of the output "
                        "unwritten (undefined values); the emulator does not run it")
        return None


@register_variant("cmsis-nn")
class CmsisNnPad(_CmsisNnPad, Pad):
    op = "PAD"
    supported_types = ("float32", "int8", "int16", "int32")


@register_variant("cmsis-nn")
class CmsisNnPadV2(_CmsisNnPad, PadV2):
    op = "PADV2"
    supported_types = ("float32", "int8", "int16", "int32")
