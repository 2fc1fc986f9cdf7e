"""SQUARED_DIFFERENCE: float32, int32, int8 and int16, with broadcasting up to 6-D, as
TFLM's reference kernel.

* float32: ``d = x1 - x2; d * d``, both in float.
* int32: the same in int32 arithmetic (both steps wrap like the compiled C++).
* int8 / int16: both inputs move to a common fixed-point scale, ``(x - zp) << left_shift``
  (7 for int8, 0 for int16) times ``scale_i / (2 * max(scale1, scale2))`` as a quantized
  multiplier; the int32 difference is squared, requantized with the multiplier of
  ``(2 * max_scale)^2 / (2^(2 * left_shift) * output_scale)`` (QuantizeMultiplier: it may
  exceed 1), offset by the output zero point and clamped to the type's range. int16 needs
  zero points 0; int8 zero points within int8. No fused activation.

Arena: init allocates the OpData (requires_broadcast + ArithmeticParams); prepare takes
both inputs and the output as temporaries. TFLM never checks the output type (eval
switches on it) nor the shapes; a mismatch is refused here, as are non-positive scales
(TFLM aborts on them).
"""
from __future__ import annotations

import numpy as np

from .add import rescaled_inputs
from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.float_math import math_for
from .internal.broadcast import check_broadcast_output
from .internal.quantization import (multiply_by_quantized_multiplier,
                           multiply_by_quantized_multiplier_smaller_than_one_exp,
                           quantize_multiplier, quantize_multiplier_smaller_than_one_exp,
                           wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, type_name


class QuantParams:
    def __init__(self, in1, in2, out, left_shift: int):
        self.left_shift = left_shift
        # int32 as in C (TFLM checks no zero point's range)
        self.input1_offset = int(wrap_int32(-int(wrap_int32(in1.zero_point))))
        self.input2_offset = int(wrap_int32(-int(wrap_int32(in2.zero_point))))
        self.output_offset = int(wrap_int32(out.zero_point))
        s1, s2, so = np.float32(in1.scale), np.float32(in2.scale), np.float32(out.scale)
        twice_max = 2.0 * float(max(s1, s2))
        self.input1_multiplier, self.input1_shift = quantize_multiplier_smaller_than_one_exp(
            float(s1) / twice_max)
        self.input2_multiplier, self.input2_shift = quantize_multiplier_smaller_than_one_exp(
            float(s2) / twice_max)
        # (1 << 2*left_shift) * output_scale is an int times a float: a float product
        denominator = float(np.float32(1 << (2 * left_shift)) * so)
        self.output_multiplier, self.output_shift = quantize_multiplier(
            (twice_max * twice_max) / denominator)
        self.act_min, self.act_max = ((-128, 127) if left_shift == 7 else (-32768, 32767))


class OpData:
    quant = None


@register
class SquaredDifference(Kernel):
    op = "SQUARED_DIFFERENCE"
    supported_types = ("float32", "int8", "int16", "int32")

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("squared_difference.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs two inputs and one output, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        in1 = ctx.required_input(node, 0)
        in2 = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if in1.type != in2.type:
            raise ctx.error(f"input types {type_name(in1.type)} and {type_name(in2.type)} must match")
        if out.type != in1.type:
            raise ctx.error(f"output type {type_name(out.type)} must be the inputs' type "
                            f"{type_name(in1.type)}")
        if out.type not in (FLOAT32, INT32, INT8, INT16):
            raise ctx.error(f"SquaredDifference only supports FLOAT32, INT32 , INT16 and INT8 now, "
                            f"got {type_name(out.type)}.")
        if in1.type in (INT8, INT16):
            names = (("input 0", in1), ("input 1", in2), ("output", out))
            for name, t in names:
                if in1.type == INT8 and not -128 <= t.zero_point <= 127:
                    raise ctx.error(f"the zero point of {name} ({t.zero_point}) is outside int8")
                if in1.type == INT16 and t.zero_point != 0:
                    raise ctx.error(f"int16 needs zero points 0; {name} has {t.zero_point}")
            for name, t in names:
                if not (t.scale > 0 and np.isfinite(t.scale)):
                    raise ctx.error(f"quantized {type_name(in1.type)} SQUARED_DIFFERENCE needs a "
                                    f"positive scale on {name}, got {t.scale} (TFLM aborts)")
            try:
                data.quant = QuantParams(in1, in2, out, 7 if in1.type == INT8 else 0)
            except ValueError as e:
                raise ctx.error(f"scales {in1.scale}, {in2.scale} -> {out.scale}: {e} "
                                "(TFLM aborts)") from None
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape)
        ctx.release(in1, in2, out)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        if out.dtype == np.float32:
            d = math_for(ctx.target).sub(x1, x2)      # the build's NaN rules
            with np.errstate(all="ignore"):
                result = np.multiply(d, d, dtype=np.float32)
        elif out.dtype == np.int32:
            d = wrap_int32(x1.astype(np.int64) - x2.astype(np.int64))
            result = wrap_int32(d * d)
        else:
            p = node.user_data.quant
            s1, s2 = rescaled_inputs(x1, x2, p)
            d = wrap_int32(s1 - s2)
            raw = multiply_by_quantized_multiplier(wrap_int32(d * d), p.output_multiplier,
                                                   p.output_shift) + p.output_offset
            result = np.clip(raw, p.act_min, p.act_max)
        np.copyto(out, np.asarray(result).reshape(out.shape).astype(out.dtype, copy=False))
