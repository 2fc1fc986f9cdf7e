"""FLOOR_DIV and FLOOR_MOD: float32 only (TFLM's kernels have no other type path), with
broadcasting up to 6-D, as TFLM's reference kernels.

* FLOOR_DIV: both operands widened to double, divided, ``std::floor`` in double, then
  narrowed to float (round to nearest; overflow gives an infinity). Eval first scans the
  whole divisor and fails with "Division by 0" if any element equals 0 (either sign of
  zero) before writing anything; here that is an invoke error.
* FLOOR_MOD: ``std::fmod`` in float (exact; NaN choice of the package's x87 code, see
  :func:`kernels.internal.float_ops.fmod_f32`), then, when the remainder is non-zero and its
  sign differs from the divisor's, ``remainder + divisor`` in float. No zero check: a
  zero divisor gives NaN.

TFLM's prepare takes both inputs and the output as temporary tensors and requires one
type for all three; nothing is allocated. The type is checked at eval in TFLM, in prepare
here; TFLM checks no shapes, so shapes that do not broadcast to the output are refused
here.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import elementwise_rows
from .internal.broadcast import check_broadcast_output
from .internal.float_ops import first_nan, fmod_f32
from .internal.tensor_utils import FLOAT32, type_name


class _FloorBinary(Kernel):

    def sample_rows(self, block):
        """Element-wise with broadcasting: samples stay apart when their axes line up."""
        return elementwise_rows(block)
    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs two inputs and one output, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        in1 = ctx.required_input(node, 0)
        in2 = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if not (in1.type == in2.type == out.type):
            raise ctx.error(f"input types {type_name(in1.type)}, {type_name(in2.type)} and output "
                            f"type {type_name(out.type)} must match")
        if in1.type != FLOAT32:
            raise ctx.error(f"Type '{type_name(in1.type)}' is not supported by {self.op}.")
        check_broadcast_output(ctx, in1.shape, in2.shape, out.shape)
        ctx.release(in1, in2, out)


@register
class FloorDiv(_FloorBinary):
    op = "FLOOR_DIV"
    supported_types = ("float32",)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        if np.any(x2 == 0):
            raise ctx.error("Division by 0")
        with np.errstate(all="ignore"):
            q = np.floor(np.divide(x1, x2, dtype=np.float64)).astype(np.float32)
        q = first_nan(x1, x2, q)            # SSE divsd: of two NaNs, the dividend's
        np.copyto(out, q.reshape(out.shape))


@register
class FloorMod(_FloorBinary):
    op = "FLOOR_MOD"
    supported_types = ("float32",)

    def invoke(self, ctx, node):
        x1, x2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        x1, x2 = np.broadcast_arrays(x1, x2)
        r = fmod_f32(x1, x2)
        with np.errstate(all="ignore"):
            fix = (r != 0) & ((x2 < 0) != (r < 0))
            result = np.where(fix, np.add(r, x2, dtype=np.float32), r)
        np.copyto(out, result.reshape(out.shape))
