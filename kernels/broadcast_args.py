"""BROADCAST_ARGS: the broadcast shape of two shape vectors (int32 or int64), as TFLM's
reference kernel.

The output's length is fixed by the model; entry ``k`` from the right is computed from
entry ``k`` from the right of each input (1 past an input's start): 1 yields to the other
value, otherwise both must be equal. Values are handled as C ``int`` (an int64 entry is
truncated to its low 32 bits, then widened back). TFLM aborts when two entries differ and
neither is 1: with constant inputs that is refused in prepare, otherwise it is an invoke
error here.

TFLM's prepare takes the three tensors as temporaries and checks: type int32 or int64,
the same for all three, each of rank 1. Nothing is allocated.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.tensor_utils import INT32, INT64, type_name


def _as_c_int(v: np.ndarray) -> np.ndarray:
    return np.asarray(v).astype(np.int64).astype(np.int32).astype(np.int64)


def _trailing(v: np.ndarray, n: int) -> np.ndarray:
    """The last ``n`` entries, padded with 1s on the left."""
    v = _as_c_int(v).reshape(-1)
    if v.size >= n:
        return v[v.size - n:]
    return np.concatenate([np.ones(n - v.size, np.int64), v])


@register
class BroadcastArgs(Kernel):
    op = "BROADCAST_ARGS"
    supported_types = ("int32", "int64")

    def prepare(self, ctx, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise ctx.error(f"needs two inputs and one output, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        s1 = ctx.required_input(node, 0)
        s2 = ctx.required_input(node, 1)
        out = ctx.required_output(node, 0)
        if s1.type not in (INT32, INT64):
            raise ctx.error(f"the shapes must be INT32 or INT64, got {type_name(s1.type)}")
        if s2.type != s1.type or out.type != s1.type:
            raise ctx.error(f"input types {type_name(s1.type)}, {type_name(s2.type)} and output "
                            f"type {type_name(out.type)} must match")
        for name, t in (("input 0", s1), ("input 1", s2), ("output", out)):
            if len(t.shape) != 1:
                raise ctx.error(f"{name} must be 1-D, got shape {tuple(t.shape)}")
        if s1.data is not None and s2.data is not None:
            self._compute(ctx, s1.data, s2.data, int(out.shape[0]))
        ctx.release(s1, s2, out)

    def _compute(self, ctx, v1, v2, n) -> np.ndarray:
        a, b = _trailing(v1, n), _trailing(v2, n)
        bad = (a != 1) & (b != 1) & (a != b)
        if bad.any():
            k = int(np.argmax(bad))
            raise ctx.error(f"shapes {np.asarray(v1).tolist()} and {np.asarray(v2).tolist()} do "
                            f"not broadcast: {int(a[k])} vs {int(b[k])} (TFLM aborts)")
        return np.where(a == 1, b, a)

    def invoke(self, ctx, node):
        v1, v2 = node.input_arrays[:2]
        out = node.output_arrays[0]
        np.copyto(out, self._compute(ctx, v1, v2, out.size).astype(out.dtype))
