"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER and GREATER_EQUAL (one TFLM source, six
registrations), with broadcasting up to 6-D, as TFLM's reference kernels.

Types, as TFLM's eval switches have them:

* EQUAL / NOT_EQUAL: bool, float32, int32, int64 and int8;
* LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: float32, int32, int64 and int8.

float32, int32, int64 and bool compare the raw values (IEEE: NaN compares unequal to
everything, ``-0 == 0``). int8 compares both operands after rescaling them to a common
fixed-point form: ``(x - zero_point) << 8`` times the operand's scale as a quantized
multiplier (TFLM's QuantizeMultiplierSmallerThanOneExp, so each scale must lie in (0, 1):
TFLM aborts otherwise), then compares the two int32 values.

TFLM's GREATER also has an int16 branch, but its prepare fills the rescaling parameters
for int8 only: int16 reads an uninitialised persistent buffer (the result is whatever the
arena held), so it is refused here.

Arena: init allocates the OpData (ComparisonParams); prepare takes the two inputs as
temporary tensors (not the output).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.broadcast import check_broadcast_output
from .internal.quantization import (multiply_by_quantized_multiplier_smaller_than_one_exp,
                           quantize_multiplier_smaller_than_one_exp, wrap_int32)
from .internal.tensor_utils import BOOL, FLOAT32, INT8, INT16, INT32, INT64, type_name

LEFT_SHIFT = 8


class OpData:
    quant = None   # ((offset1, multiplier1, shift1), (offset2, multiplier2, shift2)) for int8


def _rescale(x: np.ndarray, offset: int, multiplier: int, shift: int) -> np.ndarray:
    # int32 arithmetic as C's (wraps only for a zero point outside int8's range)
    shifted = wrap_int32(wrap_int32(x.astype(np.int64) + offset) * (1 << LEFT_SHIFT))
    return multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, multiplier, shift)


class _Comparison(Kernel):
    compare = None            # numpy ufunc
    types = (FLOAT32, INT32, INT64, INT8)

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("comparisons.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        ctx.check_counts(node, 2, 1)
        in1 = ctx.required_input(node, 0)
        in2 = ctx.required_input(node, 1)
        out = ctx.eval_tensor(node.outputs[0]).spec
        if in1.type == INT16 and self.op == "GREATER":
            raise ctx.error("int16 GREATER is not supported: TFLM's kernel compares int16 with "
                            "rescaling parameters it never initialises (its result depends on "
                            "stale arena memory)")
        if in1.type not in self.types:
            raise ctx.error(f"Type {type_name(in1.type)} ({in1.type}) not supported; {self.op} "
                            f"supports {', '.join(type_name(t) for t in self.types)}")
        if in2.type != in1.type:
            raise ctx.error(f"input types {type_name(in1.type)} and {type_name(in2.type)} must match")
        if out.type != BOOL:
            raise ctx.error(f"output type must be BOOL, got {type_name(out.type)}")
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape)
        if in1.type == INT8:
            params = []
            for name, t in (("input 0", in1), ("input 1", in2)):
                try:
                    m, s = quantize_multiplier_smaller_than_one_exp(float(np.float32(t.scale)))
                except ValueError:
                    raise ctx.error(f"int8 {self.op} needs the scale of {name} in (0, 1), got "
                                    f"{t.scale} (TFLM aborts otherwise)") from None
                params.append((int(wrap_int32(-int(wrap_int32(t.zero_point)))), m, s))
            data.quant = tuple(params)
        ctx.release(in1, in2)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        quant = node.user_data.quant
        if x1.dtype == np.int8:
            x1 = _rescale(x1, *quant[0])
            x2 = _rescale(x2, *quant[1])
        with np.errstate(invalid="ignore"):
            result = self.compare(x1, x2)
        np.copyto(out, np.asarray(result).reshape(out.shape))


@register
class Equal(_Comparison):
    op = "EQUAL"
    supported_types = ("float32->bool", "int8->bool", "int32->bool", "int64->bool", "bool->bool")
    compare = staticmethod(np.equal)
    types = (BOOL, FLOAT32, INT32, INT64, INT8)


@register
class NotEqual(_Comparison):
    op = "NOT_EQUAL"
    supported_types = ("float32->bool", "int8->bool", "int32->bool", "int64->bool", "bool->bool")
    compare = staticmethod(np.not_equal)
    types = (BOOL, FLOAT32, INT32, INT64, INT8)


@register
class Greater(_Comparison):
    op = "GREATER"
    supported_types = ("float32->bool", "int8->bool", "int32->bool", "int64->bool")
    compare = staticmethod(np.greater)


@register
class GreaterEqual(_Comparison):
    op = "GREATER_EQUAL"
    supported_types = ("float32->bool", "int8->bool", "int32->bool", "int64->bool")
    compare = staticmethod(np.greater_equal)


@register
class Less(_Comparison):
    op = "LESS"
    supported_types = ("float32->bool", "int8->bool", "int32->bool", "int64->bool")
    compare = staticmethod(np.less)


@register
class LessEqual(_Comparison):
    op = "LESS_EQUAL"
    supported_types = ("float32->bool", "int8->bool", "int32->bool", "int64->bool")
    compare = staticmethod(np.less_equal)
