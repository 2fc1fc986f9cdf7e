"""Shared strategy of the reduction tests (MEAN, SUM, REDUCE_MAX, REDUCE_MIN,
REDUCE_ALL): shapes up to 6-D, axis lists with negative and duplicate entries in any
order (constant or a runtime input, 1-D or scalar), keep_dims, TFLM's special 4-D
axes-(1, 2) case, quantization."""
from __future__ import annotations

import numpy as np
from hypothesis import event, strategies as st

from tests.binary_helpers import special_floats
from tests.helpers import TensorDef, single_op_model
from tests.strategies import arrays, scales

MAX_ELEMENTS = 6000


@st.composite
def reduce_shape_and_axes(draw):
    if draw(st.integers(0, 3)) == 0:      # TFLM's special 4-D mean over H and W
        shape = (draw(st.integers(1, 3)), draw(st.integers(1, 12)), draw(st.integers(1, 12)),
                 draw(st.integers(1, 16)))
        axes = draw(st.sampled_from([[1, 2], [2, 1], [-3, -2], [1, 2, 1]]))
        keep = draw(st.sampled_from([True, True, False]))
        event("4-D axes 1, 2")
        return shape, axes, keep
    rank = draw(st.integers(0, 6))
    sides = draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank))
    while int(np.prod(sides)) > MAX_ELEMENTS:
        sides[sides.index(max(sides))] //= 2
    shape = tuple(sides)
    if rank == 0:
        axes = draw(st.lists(st.integers(-3, 3), max_size=2))   # unused for scalars
    else:
        chosen = draw(st.lists(st.integers(0, rank - 1), max_size=rank + 1))
        axes = [a - rank if draw(st.booleans()) else a for a in chosen]
        if draw(st.integers(0, 4)) == 0:
            axes = list(range(rank))          # reduce everything
    return shape, axes, draw(st.booleans())


def output_shape(shape, axes, keep_dims):
    rank = len(shape)
    reduced = {a + rank if a < 0 else a for a in axes} if rank else set()
    if keep_dims:
        return tuple(1 if i in reduced else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in reduced)


@st.composite
def reduce_case(draw, op: str, dtypes):
    dtype = draw(st.sampled_from(dtypes))
    event(dtype)
    shape, axes, keep = draw(reduce_shape_and_axes())
    out_shape = output_shape(shape, axes, keep)
    in_q = out_q = None
    if dtype == "float32":
        spread = draw(st.sampled_from([1.0, 100.0, 1e30]))
        x = special_floats(draw, shape, -spread, spread)
        if draw(st.integers(0, 9)) == 0:
            x = np.where(x > 0, x, np.float32(-0.0)).astype(np.float32)   # signed zeros
    elif dtype == "bool":
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        x = rng.random(shape) < draw(st.sampled_from([0.5, 0.95, 1.0]))
    else:
        x = arrays(draw, shape, dtype)
        zp_in = draw(st.integers(-128, 127)) if dtype == "int8" else draw(st.sampled_from([0, 0, 0, 99]))
        in_q = (draw(scales(1e-3, 2.0)), zp_in)
        if op in ("REDUCE_MAX", "REDUCE_MIN"):
            out_q = in_q
        else:
            zp_out = draw(st.integers(-128, 127)) if dtype == "int8" else draw(st.sampled_from([0, 0, -5]))
            out_q = (draw(scales(1e-3, 2.0) | st.just(in_q[0])), zp_out)
    axis_data = np.array(axes, np.int32)
    axis_shape = (len(axes),) if len(axes) != 1 or draw(st.booleans()) else ()
    axis_const = draw(st.integers(0, 4)) != 0
    axis_def = TensorDef(axis_shape, "INT32", data=axis_data.reshape(axis_shape) if axis_const else None)
    tt = dtype.upper()
    model = single_op_model(op, [TensorDef(shape, tt, in_q), axis_def], [TensorDef(out_shape, tt, out_q)],
                            keep_dims=keep)
    inputs = [x] if axis_const else [x, axis_data.reshape(axis_shape)]
    return model, inputs


def bad_reduce_model(op, in_type="INT8", out_type=None, in_q=(0.1, 0), out_q=(0.1, 0), shape=(2, 3, 4),
                     axes=(1,), out_shape=(2, 4), axis_type="INT32"):
    """A one-op reduction model for the error tests (constant axis)."""
    axis = np.array(axes, dtype=np.int64 if axis_type == "INT64" else np.int32)
    return single_op_model(op, [TensorDef(shape, in_type, in_q),
                                TensorDef(axis.shape, axis_type, data=axis)],
                           [TensorDef(out_shape, out_type or in_type, out_q)], keep_dims=False)
