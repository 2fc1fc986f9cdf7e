"""MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_ALL (TFLM's reduce.cc registrations),
as TFLM's reference kernels.

* MEAN / SUM: float32 (float32 sums in TFLM's order: each output accumulates its inputs
  sequentially, from +0.0, in the input's row-major order; MEAN then divides by the
  reduced element count in float32), int8 and int16 (int32 wrapping sum of the raw
  values, minus ``zero_point * count``, then one MultiplyByQuantizedMultiplier whose
  multiplier MEAN folds ``1 / count`` into as TFLM does, plus the output zero point).
  TFLM's special 4-D float MEAN over axes 1 and 2 with keep_dims sums in the same
  order as its general path, so one implementation serves both.
* REDUCE_MAX / REDUCE_MIN: float32 (``in > current`` from the lowest / highest float:
  NaNs are skipped, an all-NaN or all-infinite reduction gives -/+FLT_MAX, the first of
  equal zeros wins) and int8 (same scale and zero point on input and output).
* REDUCE_ALL: bool.

The axis input is an int32 tensor (constant or not); negative axes count from the end
and duplicates are ignored. Allocations: OpDataReduce in init; in prepare the temporary
tensors, in TFLM's order, and the scratch buffers TFLM requests (for MEAN / SUM on
int8 / int16 the int32 accumulator, then for every op the index iterator and the
resolved axes).
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from .base import Kernel, register
from .internal.float_ops import sequential_extreme
from .internal.sample_rows import outputs_match, rewrite_axis_constant
from .internal.quantization import multiply_by_quantized_multiplier, quantize_multiplier, wrap_int32
from .internal.tensor_utils import BOOL, FLOAT32, INT8, INT16, INT32, flat_size, type_name

_FLT_MAX = np.float32(np.finfo(np.float32).max)


class OpData:
    """TFLM's OpDataReduce, plus host-side caches."""

    def __init__(self):
        self.multiplier = 0
        self.shift = 0
        self.scratch_accumulator_idx = -1
        self.scratch_resolved_axis_idx = -1
        self.scratch_input_iter_idx = -1
        self.input_zp = 0
        self.input_scale = 0.0
        self.output_zp = 0
        self.output_scale = 0.0
        self.num_output_elements = 0
        self.num_axis = 0
        self.plans: Dict[Tuple[int, ...], "ReducePlan"] = {}


class ReducePlan:
    """How one input shape reduces over one axis list: the permutation that puts the
    reduced axes first (in input order) and the kept ones last, and the counts."""

    def __init__(self, shape: Tuple[int, ...], axis_values: Tuple[int, ...]):
        ndims = len(shape)
        resolved = []
        if ndims > 0:
            for a in axis_values:
                current = a + ndims if a < 0 else a
                if not 0 <= current < ndims:
                    raise ValueError(f"axis {a} is out of range for an input of {ndims} dimensions")
                if current not in resolved:
                    resolved.append(current)
        self.reduced = tuple(sorted(resolved))
        self.kept = tuple(i for i in range(ndims) if i not in resolved)
        self.perm = self.reduced + self.kept
        self.num_reduced = flat_size([shape[i] for i in self.reduced])
        self.num_outputs = flat_size([shape[i] for i in self.kept])
        self.empty = any(d == 0 for d in shape)

    def columns(self, x: np.ndarray) -> np.ndarray:
        """``x`` as (reduced elements in TFLM's order, outputs)."""
        return np.transpose(x, self.perm).reshape(self.num_reduced, self.num_outputs)


def float32_sequential_sum(cols: np.ndarray) -> np.ndarray:
    """Sum of each column in float32, one addition at a time from +0.0, top to bottom."""
    if cols.shape[0] == 0:
        return np.zeros(cols.shape[1], dtype=np.float32)
    with np.errstate(all="ignore"):
        total = np.add.accumulate(cols, axis=0, dtype=np.float32)[-1]
    return total + np.float32(0.0)   # 0.0 + (-0.0) is +0.0, as TFLM's start from 0.0f


class _Reduce(Kernel):
    """The shared init and the evaluation plumbing of TFLM's reduce kernels."""

    def sample_rows(self, block):
        """Samples stay apart when the reduced axes (a constant) exclude the batch axis
        the samples replace; the same axes, in order, are reduced for every sample."""
        inp = block.input(0)
        if not block.only_vary((0,)) or len(inp.shape) == 0 or not rewrite_axis_constant(block, 1, inp):
            return False
        shape = block.shape(inp)
        axes = {a % len(shape) for a in block.new_constants[1].reshape(-1).tolist()}
        if block.params.keep_dims:
            reduced = [1 if i in axes else d for i, d in enumerate(shape)]
        else:
            reduced = [d for i, d in enumerate(shape) if i not in axes]
        return outputs_match(block, [reduced])

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("reduce.OpDataReduce"))
        return OpData()

    # ---------------------------------------------------------------- prepare
    def _check_counts(self, ctx, node):
        if len(node.inputs) != 2:
            raise ctx.error(f"needs 2 inputs (input and axis), got {len(node.inputs)}")
        if len(node.outputs) != 1:
            raise ctx.error(f"needs 1 output, got {len(node.outputs)}")

    def _prepare_simple(self, ctx, node, data):
        """TFLM's PrepareSimple: checks, and for int8 the input/output multiplier."""
        inp = ctx.required_input(node, 0)
        self._check_counts(ctx, node)
        axis = ctx.required_input(node, 1, "the axis input")
        if axis.type != INT32:
            raise ctx.error(f"axis type {type_name(axis.type)} not supported (int32 only)")
        if inp.type == INT8:
            out = ctx.required_output(node, 0)
            if self.uses_multiplier:
                data.multiplier, data.shift = self._multiplier(ctx, inp, out)
            ctx.release(out)
        ctx.release(axis, inp)

    @staticmethod
    def _multiplier(ctx, inp, out):
        if inp.quantization is None or out.quantization is None or not (inp.scale > 0 and out.scale > 0):
            raise ctx.error("quantized input and output need positive scales")
        try:
            return quantize_multiplier(float(np.float64(inp.scale) / np.float64(out.scale)))
        except ValueError as e:
            raise ctx.error(str(e)) from None

    def _check_tensors(self, ctx, node, data, inp, out, axis):
        if inp.type not in self.types:
            raise ctx.error(f"input type {type_name(inp.type)} not supported "
                            f"({', '.join(type_name(t) for t in self.types)})")
        if out.type != inp.type:
            raise ctx.error(f"output type {type_name(out.type)} differs from the input type "
                            f"{type_name(inp.type)}")
        data.plans = {}
        data.input_shape = tuple(inp.shape)
        data.input_type = inp.type
        data.output_count = flat_size(out.shape)
        if axis.data is not None:
            self._plan(ctx, data, tuple(int(a) for a in np.asarray(axis.data).reshape(-1)))

    def _plan(self, ctx, data, axis_values):
        plan = data.plans.get(axis_values)
        if plan is None:
            try:
                plan = ReducePlan(data.input_shape, axis_values)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            if plan.num_outputs != data.output_count:
                raise ctx.error(f"reducing shape {data.input_shape} over axes {list(axis_values)} "
                                f"gives {plan.num_outputs} values but the output has "
                                f"{data.output_count}")
            if plan.empty and self.op == "MEAN" and data.input_type == FLOAT32:
                raise ctx.error("float32 MEAN of an empty tensor is not supported (TFLM reads "
                                "out of bounds)")
            data.plans[axis_values] = plan
        return plan

    # ----------------------------------------------------------------- invoke
    def invoke(self, ctx, node):
        data = node.user_data
        x = node.input_arrays[0]
        axis_values = tuple(int(a) for a in np.asarray(node.input_arrays[1]).reshape(-1))
        plan = self._plan(ctx, data, axis_values)
        out = node.output_arrays[0]
        result = self.compute(data, plan, x)
        np.copyto(out, np.asarray(result).reshape(out.shape).astype(out.dtype, copy=False))


class _MeanOrSum(_Reduce):
    types = (FLOAT32, INT8, INT16)
    uses_multiplier = True
    compute_sum = False

    def prepare(self, ctx, node):
        data = node.user_data
        inp = ctx.input(node, 0)
        out = ctx.output(node, 0)
        axis = ctx.input(node, 1)
        if inp is None or out is None or axis is None:
            raise ctx.error("needs an input, an axis input and an output")
        if axis.type != INT32:
            raise ctx.error(f"axis type {type_name(axis.type)} not supported (int32 only)")
        quantized = inp.type in (INT8, INT16)
        if quantized:
            data.multiplier, data.shift = self._multiplier(ctx, inp, out)
        data.num_axis = axis.num_elements
        data.num_output_elements = out.num_elements
        if quantized:
            data.scratch_accumulator_idx = ctx.request_scratch(4 * data.num_output_elements)
            data.input_zp, data.input_scale = inp.zero_point, inp.scale
            data.output_zp, data.output_scale = out.zero_point, out.scale
        data.scratch_input_iter_idx = ctx.request_scratch(4 * len(inp.shape))
        data.scratch_resolved_axis_idx = ctx.request_scratch(4 * data.num_axis)
        self._prepare_simple(ctx, node, data)
        self._check_tensors(ctx, node, data, inp, out, axis)
        ctx.release(inp, out, axis)

    def compute(self, data, plan, x):
        if x.dtype == np.float32:
            if plan.empty:
                return np.zeros(plan.num_outputs, dtype=np.float32)
            total = float32_sequential_sum(plan.columns(x))
            if self.compute_sum:
                return total
            with np.errstate(all="ignore"):
                return total / np.float32(plan.num_reduced)
        info = np.iinfo(x.dtype)
        if plan.empty or plan.num_reduced == 0:
            return np.zeros(plan.num_outputs, dtype=x.dtype)
        n = plan.num_reduced
        total = wrap_int32(plan.columns(x).sum(axis=0, dtype=np.int64))
        shifted = wrap_int32(total - data.input_zp * n)
        multiplier, shift = data.multiplier, data.shift
        if not self.compute_sum:
            bits = 63 - int(count_leading_zeros_u64(n))
            bits = min(bits, 32, 31 + shift)
            multiplier = int((multiplier << bits) // n)
            shift = shift - bits
        scaled = multiply_by_quantized_multiplier(shifted, multiplier, shift)
        return np.clip(wrap_int32(scaled + data.output_zp), info.min, info.max)


def count_leading_zeros_u64(n: int) -> int:
    """CountLeadingZeros of a positive 64-bit value."""
    return 64 - int(n).bit_length()


@register
class Mean(_MeanOrSum):
    op = "MEAN"
    supported_types = ("float32", "int8", "int16")


@register
class Sum(_MeanOrSum):
    op = "SUM"
    supported_types = ("float32", "int8", "int16")
    compute_sum = True


class _MinMax(_Reduce):
    types = (FLOAT32, INT8)
    uses_multiplier = False   # TFLM computes it but never uses it
    is_max = True

    def prepare(self, ctx, node):
        data = node.user_data
        self._prepare_simple(ctx, node, data)
        inp = ctx.input(node, 0)
        out = ctx.output(node, 0)
        axis = ctx.input(node, 1)
        if out is None:
            raise ctx.error("output 0 is missing")
        data.input_zp, data.input_scale = inp.zero_point, inp.scale
        data.output_zp, data.output_scale = out.zero_point, out.scale
        data.num_output_elements = out.num_elements
        data.scratch_input_iter_idx = ctx.request_scratch(4 * len(inp.shape))
        data.scratch_resolved_axis_idx = ctx.request_scratch(4 * axis.num_elements)
        self._check_tensors(ctx, node, data, inp, out, axis)
        if inp.type == INT8 and (np.float32(inp.scale) != np.float32(out.scale)
                                 or inp.zero_point != out.zero_point):
            raise ctx.error(f"int8 input and output need the same scale and zero point, got "
                            f"({inp.scale}, {inp.zero_point}) and ({out.scale}, {out.zero_point})")
        ctx.release(inp, out, axis)

    def compute(self, data, plan, x):
        if x.dtype == np.float32:
            init = -_FLT_MAX if self.is_max else _FLT_MAX
            if plan.empty:
                return np.full(plan.num_outputs, init, dtype=np.float32)
            cols = plan.columns(x)
            return sequential_extreme(cols, 0, init, self.is_max)
        info = np.iinfo(x.dtype)
        init = info.min if self.is_max else info.max
        if plan.empty:
            return np.full(plan.num_outputs, init, dtype=x.dtype)
        reducer = np.max if self.is_max else np.min
        return reducer(plan.columns(x), axis=0, initial=init)


@register
class ReduceMax(_MinMax):
    op = "REDUCE_MAX"
    supported_types = ("float32", "int8")


@register
class ReduceMin(_MinMax):
    op = "REDUCE_MIN"
    supported_types = ("float32", "int8")
    is_max = False


@register
class ReduceAll(_Reduce):
    op = "REDUCE_ALL"
    supported_types = ("bool",)
    types = (BOOL,)
    uses_multiplier = False

    def prepare(self, ctx, node):
        data = node.user_data
        inp = ctx.input(node, 0)
        out = ctx.output(node, 0)
        axis = ctx.input(node, 1)
        if inp is None or out is None or axis is None:
            raise ctx.error("needs an input, an axis input and an output")
        if inp.type != BOOL:
            raise ctx.error(f"input type {type_name(inp.type)} not supported (bool only)")
        self._prepare_simple(ctx, node, data)
        data.num_output_elements = out.num_elements
        data.scratch_input_iter_idx = ctx.request_scratch(4 * len(inp.shape))
        data.scratch_resolved_axis_idx = ctx.request_scratch(4 * axis.num_elements)
        self._check_tensors(ctx, node, data, inp, out, axis)
        ctx.release(inp, out, axis)

    def compute(self, data, plan, x):
        if plan.empty:
            return np.ones(plan.num_outputs, dtype=bool)
        return np.all(plan.columns(x), axis=0)
