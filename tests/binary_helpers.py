"""Shared strategies of the broadcasting binary-op tests (SUB, MUL, DIV, MAXIMUM,
MINIMUM): shapes up to 6-D with every broadcasting pattern, optional constant operands."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.strategies import arrays

MAX_ELEMENTS = 4096


@st.composite
def broadcast_shapes(draw, max_dims: int = 6):
    """(shape1, shape2, output shape): equal shapes, one side broadcasting, both sides
    broadcasting, scalars, different ranks, and sometimes an output padded with 1s."""
    kind = draw(st.sampled_from(["same", "same", "broadcast", "broadcast", "broadcast", "scalar"]))
    rank = draw(st.integers(1, max_dims))
    sides = draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank))
    while int(np.prod(sides)) > MAX_ELEMENTS:
        sides[sides.index(max(sides))] //= 2
    full = tuple(sides)
    if kind == "same":
        s1 = s2 = full
    elif kind == "scalar":
        s1, s2 = full, draw(st.sampled_from([(), (1,), (1,) * rank]))
        if draw(st.booleans()):
            s1, s2 = s2, s1
    else:
        def side():
            keep = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
            s = tuple(d if k else 1 for d, k in zip(full, keep))
            return s[draw(st.integers(0, rank - 1)):]
        s1, s2 = side(), side()
        if draw(st.booleans()):
            s1 = full
    out = tuple(np.broadcast_shapes(s1, s2))
    if s1 != s2 and len(out) < max_dims and draw(st.integers(0, 5)) == 0:
        out = (1,) + out
    return s1, s2, out


def binary_model(op: str, tensor_type: str, s1, s2, out, x1, x2, q=(None, None, None),
                 const=(False, False), **options):
    """The one-op model and its runtime inputs (constant operands are baked in)."""
    defs = []
    inputs = []
    for shape, x, qq, c in ((s1, x1, q[0], const[0]), (s2, x2, q[1], const[1])):
        if c:
            defs.append(TensorDef(shape, tensor_type, qq, data=np.asarray(x).reshape(shape)))
        else:
            defs.append(TensorDef(shape, tensor_type, qq))
            inputs.append(np.asarray(x).reshape(shape))
    model = single_op_model(op, defs, [TensorDef(out, tensor_type, q[2])], **options)
    return model, inputs


def draw_const(draw):
    """Which operands are constants (never both)."""
    c = draw(st.integers(0, 5))
    return (c == 0, c == 1)


def special_floats(draw, shape, lo=-4.0, hi=4.0):
    """float32 values with occasional zeros, signed zeros, infinities, NaNs and huge values."""
    x = arrays(draw, shape, "float32", lo, hi)
    if draw(st.integers(0, 3)) == 0 and x.size:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-30], np.float32)
        mask = rng.random(x.shape) < 0.3
        x = np.where(mask, rng.choice(specials, size=x.shape), x).astype(np.float32)
    return x


@st.composite
def maximum_minimum_case(draw, op: str):
    """MAXIMUM / MINIMUM: every type TFLM supports; quantization parameters are carried
    but ignored by TFLM (raw values are compared)."""
    dtype = draw(st.sampled_from(["int8", "int16", "int32", "int64", "float32"]))
    s1, s2, out = draw(broadcast_shapes())
    if dtype == "float32":
        x1, x2 = special_floats(draw, s1), special_floats(draw, s2)
    elif dtype == "int64":
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        x1 = rng.integers(-2**62, 2**62, size=s1, dtype=np.int64)
        x2 = rng.integers(-2**62, 2**62, size=s2, dtype=np.int64)
    else:
        narrow = draw(st.booleans())      # many ties
        lim = (-3, 3) if narrow else (None, None)
        x1, x2 = arrays(draw, s1, dtype, *lim), arrays(draw, s2, dtype, *lim)
    q = (None, None, None)
    if dtype in ("int8", "int16") and draw(st.booleans()):
        q = ((0.5, 0), (0.5, 0), (0.5, 0))
    return binary_model(op, dtype.upper(), s1, s2, out, x1, x2, q, draw_const(draw))
