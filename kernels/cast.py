"""CAST between int8, int16, int32, uint32, float32 and bool (every pair), as the
tflite-micro package does it:

* integer / bool -> integer: two's-complement wrap (static_cast);
* anything -> bool: ``x != 0`` (NaN is true);
* integer / bool -> float32: nearest float;
* float32 -> integer: truncation toward zero, saturated to the target range, NaN -> 0
  (the package saturates; the 2026-08 source's plain static_cast would not).
"""
from __future__ import annotations

import numpy as np

from micro_runtime.schema import TensorType

from .base import Kernel, register, type_pairs
from .internal.sample_rows import flat_elementwise_rows
from .internal.tensor_utils import flat_size, type_name

SUPPORTED = (TensorType.INT8, TensorType.INT16, TensorType.INT32, TensorType.UINT32,
             TensorType.FLOAT32, TensorType.BOOL)


def cast_values(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` converted to ``dtype`` with the package's CAST semantics."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if dtype == x.dtype:
        return x
    if dtype == np.float32:
        return x.astype(np.float32)
    if x.dtype == np.float32:
        info = np.iinfo(dtype)
        t = np.trunc(x.astype(np.float64))
        t = np.where(np.isnan(t), 0.0, np.clip(t, float(info.min), float(info.max)))
        return t.astype(np.int64).astype(dtype)
    return x.astype(np.int64).astype(dtype)


@register
class Cast(Kernel):
    op = "CAST"
    supported_types = type_pairs(("float32", "int8", "int16", "int32", "uint32", "bool"),
                                 ("float32", "int8", "int16", "int32", "uint32", "bool"))

    def sample_rows(self, block):
        """Element by element on the flattened tensor: samples stay apart."""
        return flat_elementwise_rows(block)

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and {len(node.outputs)}")
        inp = ctx.required_input(node, 0)
        out = ctx.required_output(node, 0)
        if inp.type not in SUPPORTED:
            raise ctx.error(f"Input type {type_name(inp.type)} ({inp.type}) not supported.")
        if out.type not in SUPPORTED:
            raise ctx.error(f"Output type {type_name(out.type)} ({out.type}) not supported.")
        if flat_size(inp.shape) != flat_size(out.shape):
            raise ctx.error(f"input shape {inp.shape} and output shape {out.shape} differ in size")
        ctx.release(inp, out)

    def invoke(self, ctx, node):
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        np.copyto(out, cast_values(x, out.dtype).reshape(out.shape))
