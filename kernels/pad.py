"""PAD and PADV2: float32, int8, int16 and int32, as TFLM's reference kernel (one
shared Init / Prepare / Eval, registered twice as in TFLM's pad.cc).

Init allocates TFLM's OpData. Prepare takes the input, the paddings, the optional
constant value (third input) and the output as temporary tensors, in that order. The
paddings must be constant; TFLM reads them as int32 words whatever their type (so an
int64 paddings tensor is read word by word, low word first), two per output dimension
(before, after), and each output dimension must equal input + before + after. The pad
value is the constant value input, or else 0 (the output zero point for int8). A
quantized int8 constant value must share the output's scale and zero point.

Eval writes the pad value everywhere, then the input into the box the paddings leave.
TFLM does not forbid negative paddings: its loop then copies the input's first elements,
in order, into the (smaller) box; that is reproduced exactly.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, int32_words, type_name

MAX_DIMS = 5
SUPPORTED = (FLOAT32, INT8, INT16, INT32)


class OpData:
    """TFLM's OpData (PadParams, output_zero_point) plus the host-side box to copy into."""
    output_zero_point = 0
    box = None           # tuple of slices of the output the input goes into
    box_shape = None
    box_count = 0
    simple = True        # no negative padding: the box has the input's shape


class _PadBase(Kernel):

    def sample_rows(self, block):
        """Samples stay apart unless the batch axis the samples replace is padded; a
        prepended sample axis gets a zero padding row."""
        if not block.only_vary((0,)):
            return False
        inp = block.input(0)
        rank = len(inp.shape)
        paddings = block.constant(1)
        if paddings is None or paddings.dtype != np.int32:
            return False
        words = int32_words(paddings, 2 * rank)
        if words is None:
            return False
        rows = np.asarray(words, dtype=np.int64).reshape(rank, 2)
        if block.merged(inp):
            return rank >= 1 and not rows[0].any()
        block.rewrite_constant(1, np.concatenate([[[0, 0]], rows]).astype(np.int32))
        return True
    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("pad.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        n_in = len(node.inputs)
        if n_in not in (2, 3) or len(node.outputs) != 1:
            raise ctx.error(f"needs 2 or 3 inputs and 1 output, got {n_in} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0, "the input tensor")
        paddings = ctx.required_input(node, 1, "the paddings tensor")
        value = ctx.input(node, 2) if n_in == 3 else None
        out = ctx.required_output(node, 0, "the output tensor")
        if inp.type != out.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} differ")
        in_shape, out_shape = tuple(inp.shape), tuple(out.shape)
        if len(in_shape) > MAX_DIMS:
            raise ctx.error(f"input has {len(in_shape)} dimensions, at most {MAX_DIMS} are supported")
        if value is not None:
            if value.type != inp.type:
                raise ctx.error(f"constant value type {type_name(value.type)} differs from the "
                                f"input type {type_name(inp.type)}")
            if value.num_elements != 1:
                raise ctx.error(f"the constant value must be a scalar, got shape {tuple(value.shape)}")
        if paddings.num_elements != 2 * len(out_shape):
            raise ctx.error(f"paddings of shape {tuple(paddings.shape)} must hold 2 values per "
                            f"output dimension ({2 * len(out_shape)})")
        if paddings.data is None:
            raise ctx.error("Non-constant >paddings< tensor is not supported")
        if len(out_shape) != len(in_shape):
            raise ctx.error(f"input {in_shape} and output {out_shape} must have the same number "
                            "of dimensions")
        words = int32_words(paddings.data, 2 * len(out_shape))
        if words is None:
            raise ctx.error(f"paddings tensor of type {type_name(paddings.type)} is too short: TFLM "
                            f"reads {2 * len(out_shape)} int32 values from it")
        before, after = words[0::2], words[1::2]
        for i, (o, d, b, a) in enumerate(zip(out_shape, in_shape, before, after)):
            if o != d + b + a:
                raise ctx.error(f"output dimension {i} is {o}, expected {d} + {b} + {a} = "
                                f"{d + b + a} from the input shape and paddings")
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Type {type_name(inp.type)} not currently supported by Pad.")
        if inp.type == INT8:
            if value is None:
                if not -128 <= out.zero_point <= 127:
                    raise ctx.error(f"output zero point {out.zero_point} is outside the int8 range")
            else:
                if out.zero_point != value.zero_point:
                    raise ctx.error(f"constant value zero point {value.zero_point} differs from "
                                    f"the output's {out.zero_point}")
                if float(out.scale) != float(value.scale):
                    raise ctx.error(f"constant value scale {value.scale} differs from the "
                                    f"output's {out.scale}")
            data.output_zero_point = out.zero_point
        # the box of the output the input is copied into (row-major, input order)
        lo = [max(int(b), 0) for b in before]
        hi = [o - max(int(a), 0) for o, a in zip(out_shape, after)]
        data.box_shape = tuple(max(h - l, 0) for l, h in zip(lo, hi))
        data.box = tuple(slice(l, l + n) for l, n in zip(lo, data.box_shape))
        data.box_count = int(np.prod(data.box_shape, dtype=np.int64))
        data.simple = data.box_shape == in_shape
        data.has_value = value is not None
        data.out_is_int8 = out.type == INT8
        ctx.release(inp, paddings, value, out)

    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        if data.has_value:
            pad = node.input_arrays[2].reshape(-1)[0]
        elif data.out_is_int8:
            pad = data.output_zero_point
        else:
            pad = 0
        out[...] = pad
        if data.box_count == 0:
            return
        if data.simple:
            out[data.box] = x
        else:
            out[data.box] = x.reshape(-1)[: data.box_count].reshape(data.box_shape)


@register
class Pad(_PadBase):
    op = "PAD"
    supported_types = ("float32", "int8", "int16", "int32")


@register
class PadV2(_PadBase):
    op = "PADV2"
    supported_types = ("float32", "int8", "int16", "int32")
