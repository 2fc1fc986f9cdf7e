"""ARG_MAX and ARG_MIN (one TFLM source, two registrations): float32 and int8 input, int32
axis, int32 output, as TFLM's reference kernel.

The scan along the axis keeps the first element and replaces it only by a strictly
greater (ARG_MAX) / smaller (ARG_MIN) one, so ties give the first index. TFLM's micro
kernel passes the plain ``>`` / ``<`` comparator (not the NaN-aware one of the shared
reference header): a NaN never replaces anything, and a NaN in first position is never
replaced, so its index 0 wins. The quantization of int8 input is ignored (raw values).

TFLM's kernel has no init and no prepare (nothing allocated, no temporaries) and reads
the axis from the axis tensor at eval, so a run-time axis is checked at invoke. TFLM
checks nothing; refused here: other types (TFLM fails at eval), an axis outside the
input's rank, a rank-0 input, and an output whose element count is not the input's
without the axis (TFLM would write out of bounds).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import outputs_match, rewrite_axis_constant
from .internal.tensor_utils import FLOAT32, INT8, INT32, flat_size, type_name


class _ArgMinMax(Kernel):
    is_max = True

    def sample_rows(self, block):
        """Samples stay apart when the axis (a constant) is not the batch axis the
        samples replace."""
        if not block.only_vary((0,)) or not rewrite_axis_constant(block, 1, block.input(0)):
            return False
        shape = list(block.shape(block.input(0)))
        del shape[int(block.new_constants[1].reshape(-1)[0])]
        return outputs_match(block, [shape])

    def _axis(self, ctx, value, in_shape, out_shape) -> int:
        rank = len(in_shape)
        axis = int(value)
        if axis < 0:
            axis += rank
        if not 0 <= axis < rank:
            raise ctx.error(f"axis {int(value)} is out of range for an input of rank {rank}")
        expected = flat_size(in_shape[:axis] + in_shape[axis + 1:])
        if in_shape[axis] == 0 and expected:
            raise ctx.error(f"axis {axis} of shape {tuple(in_shape)} is empty")
        if flat_size(out_shape) != expected:
            raise ctx.error(f"reducing axis {axis} of shape {tuple(in_shape)} leaves {expected} "
                            f"elements but the output of shape {tuple(out_shape)} has "
                            f"{flat_size(out_shape)}")
        return axis

    def prepare(self, ctx, node):
        ctx.check_counts(node, 2, 1)
        inp, axis = (ctx.eval_tensor(i).spec for i in node.inputs[:2])
        out = ctx.eval_tensor(node.outputs[0]).spec
        if axis.type != INT32:
            raise ctx.error(f"Only int32_t are supported currently, got {type_name(axis.type)} "
                            "for the axis")
        if out.type != INT32:
            raise ctx.error(f"Only int32_t are supported currently, got {type_name(out.type)} "
                            "for the output")
        if inp.type not in (FLOAT32, INT8):
            raise ctx.error(f"Only float32 and int8 inputs are supported, got {type_name(inp.type)}")
        if len(inp.shape) == 0:
            raise ctx.error("the input must have at least one dimension")
        if flat_size(axis.shape) < 1:
            raise ctx.error("the axis tensor is empty")
        if axis.data is not None:
            self._axis(ctx, np.asarray(axis.data).reshape(-1)[0], tuple(inp.shape), tuple(out.shape))

    def invoke(self, ctx, node):
        x, axis_t = node.input_arrays[:2]
        out = node.output_arrays[0]
        axis = self._axis(ctx, axis_t.reshape(-1)[0], tuple(x.shape), tuple(out.shape))
        if x.dtype == np.float32:
            first = np.take(x, [0], axis=axis)
            fill = -np.inf if self.is_max else np.inf
            x = np.where(np.isnan(x), np.float32(fill), x)
            pick = np.argmax(x, axis=axis) if self.is_max else np.argmin(x, axis=axis)
            # a NaN in first position is never replaced (every comparison with it is false)
            pick = np.where(np.isnan(first).squeeze(axis), 0, pick)
        else:
            pick = np.argmax(x, axis=axis) if self.is_max else np.argmin(x, axis=axis)
        np.copyto(out, pick.astype(np.int32).reshape(out.shape))


@register
class ArgMax(_ArgMinMax):
    op = "ARG_MAX"
    supported_types = ("float32->int32", "int8->int32")
    is_max = True


@register
class ArgMin(_ArgMinMax):
    op = "ARG_MIN"
    supported_types = ("float32->int32", "int8->int32")
    is_max = False
