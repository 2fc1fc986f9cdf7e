"""CUMSUM: cumulative sum along one axis (``exclusive`` and ``reverse`` options), float32
and int8, as TFLM's reference kernel.

* float32: a float accumulator starting at ``0.0f``, ``acc += x`` in scan order (so a
  leading ``-0.0`` comes out ``+0.0``); exclusive writes the accumulator before adding.
* int8: each input becomes ``((x - zp) << 20) * 0.5`` (quantized multiplier of
  ``scale / (2 * scale)``); the accumulator starts at that transform of ``-zp`` (TFLM
  seeds it with the input offset, not 0), sums in int32 (wrapping), and every output is
  the accumulator requantized with the multiplier of ``2 * scale / (2^20 * out_scale)``
  (must be below 1: TFLM aborts otherwise) plus the output zero point, clamped to int8.

The axis (int32, one element) is read at eval; a negative axis counts from the end; out
of range fails with "CUMSUM Invalid axis" (an invoke error; a constant bad axis is refused
in prepare here). Arena: prepare takes input, axis, then output as temporaries; int8
allocates its OpData.
"""
from __future__ import annotations

import numpy as np

from .add_n import QuantParams
from .base import Kernel, register
from .internal.sample_rows import outputs_match, rewrite_axis_constant
from .internal.quantization import multiply_by_quantized_multiplier_smaller_than_one_exp, wrap_int32
from .internal.tensor_utils import FLOAT32, INT8, INT32, flat_size, type_name


class OpData:
    quant = None


def _axis(ctx, value, rank: int) -> int:
    axis = int(np.int32(value))
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise ctx.error(f"CUMSUM Invalid axis: {axis}")
    return axis


def _keep_first_nan(acc: np.ndarray) -> np.ndarray:
    """Once TFLM's accumulator is a NaN it stays that very NaN (``acc + x`` returns its
    first operand's NaN on x86 even when ``x`` is another NaN); numpy's loops may pick the
    other one, so every lane repeats its first NaN from there on."""
    nan = np.isnan(acc)
    if not nan.any():
        return acc
    steps = np.arange(acc.shape[0]).reshape((-1,) + (1,) * (acc.ndim - 1))
    first = np.where(nan, steps, acc.shape[0]).min(axis=0)
    value = np.take_along_axis(acc, np.minimum(first, acc.shape[0] - 1)[None], axis=0)
    return np.where(steps >= first, value, acc)


@register
class CumSum(Kernel):
    op = "CUMSUM"
    supported_types = ("float32", "int8")

    def sample_rows(self, block):
        """Samples stay apart when the axis (a constant) is not the batch axis the
        samples replace."""
        if not block.only_vary((0,)) or not rewrite_axis_constant(block, 1, block.input(0)):
            return False
        return outputs_match(block, [block.shape(block.input(0))])

    def init(self, ctx, node):
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs two inputs (input, axis) and one output, got "
                            f"{len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0)
        axis = ctx.required_input(node, 1, "axis")
        if inp.type not in (FLOAT32, INT8):
            raise ctx.error(f"CUMSUM only supports FLOAT32 and INT8, got {type_name(inp.type)}.")
        if axis.type != INT32:
            raise ctx.error(f"the axis must be INT32, got {type_name(axis.type)}")
        if flat_size(axis.shape) != 1:
            raise ctx.error(f"the axis tensor must have one element, it has shape {tuple(axis.shape)}")
        if len(inp.shape) < 1:
            raise ctx.error("the input must have at least one dimension")
        out = ctx.required_output(node, 0)
        if out.type != inp.type:
            raise ctx.error(f"input type {type_name(inp.type)} and output type "
                            f"{type_name(out.type)} must match")
        if tuple(out.shape) != tuple(inp.shape):
            raise ctx.error(f"output shape {tuple(out.shape)} must equal the input shape "
                            f"{tuple(inp.shape)}")
        if out.type == INT8:
            ctx.allocate_persistent(ctx.sizeof("cumsum.OpData"))
            for name, t in (("input", inp), ("output", out)):
                if not (t.scale > 0 and np.isfinite(t.scale)):
                    raise ctx.error(f"int8 CUMSUM needs a positive {name} scale, got {t.scale} "
                                    "(TFLM aborts)")
            try:
                data.quant = QuantParams(inp, out)
            except ValueError:
                raise ctx.error(f"input scale {inp.scale} / output scale {out.scale} must be "
                                "below 2^19 (TFLM aborts otherwise)") from None
        if axis.data is not None:
            _axis(ctx, np.asarray(axis.data).reshape(-1)[0], len(inp.shape))
        ctx.release(inp, axis, out)

    def invoke(self, ctx, node):
        x, axis_t = node.input_arrays[:2]
        out = node.output_arrays[0]
        axis = _axis(ctx, axis_t.reshape(-1)[0], x.ndim)
        exclusive = bool(getattr(node.params, "exclusive", False))
        reverse = bool(getattr(node.params, "reverse", False))
        if x.shape[axis] == 0:
            return
        if reverse:
            x = np.flip(x, axis)
        p = node.user_data.quant
        if p is None:
            seq = np.moveaxis(x, axis, 0).astype(np.float32, copy=True)
            with np.errstate(all="ignore"):
                seq[0] = seq[0] + np.float32(0.0)          # the accumulator starts at +0.0
                acc = np.cumsum(seq, axis=0, dtype=np.float32)
            acc = _keep_first_nan(acc)
            if exclusive:
                acc = np.concatenate([np.zeros_like(acc[:1]), acc[:-1]], axis=0)
            result = np.moveaxis(acc, 0, axis)
        else:
            seq = np.moveaxis(p.scaled(x), axis, 0)
            seed = int(p.scaled(0))
            acc = wrap_int32(seed + np.cumsum(seq, axis=0))
            if exclusive:
                acc = np.concatenate([np.full_like(acc[:1], seed), acc[:-1]], axis=0)
            raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
                acc, p.output_multiplier, p.output_shift) + p.output_offset
            result = np.moveaxis(np.clip(raw, -128, 127).astype(np.int8), 0, axis)
        if reverse:
            result = np.flip(result, axis)
        np.copyto(out, result)
