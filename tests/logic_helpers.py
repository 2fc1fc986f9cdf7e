"""Shared strategies of the comparison / logic / selection / integer-arithmetic op tests
(EQUAL ... GREATER_EQUAL, LOGICAL_*, SELECT_V2, ARG_MAX / ARG_MIN, FLOOR_DIV / FLOOR_MOD,
SQUARED_DIFFERENCE, ADD_N, BROADCAST_TO, BROADCAST_ARGS, CUMSUM)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.binary_helpers import special_floats
from tests.helpers import TensorDef
from tests.strategies import arrays


def values(draw, shape, dtype: str, ties: bool = True, specials: bool = True):
    """Values of ``dtype`` for ``shape``: full range, or (``ties``) a narrow range that makes
    equal values frequent; float32 with occasional NaN / infinities / signed zeros."""
    narrow = ties and draw(st.booleans())
    if dtype == "bool":
        return arrays(draw, shape, "bool")
    if dtype == "float32":
        x = _floats(draw, shape, narrow, specials)
        if specials and x.size and np.isnan(x).any() and draw(st.booleans()):
            # NaNs of both signs (which NaN an operation returns is part of bit-exactness)
            rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
            x = np.where(np.isnan(x) & (rng.random(x.shape) < 0.5), -x, x).astype(np.float32)
        return x
    if dtype == "int64":
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        if narrow:
            return rng.integers(-3, 4, size=shape, dtype=np.int64)
        return rng.integers(-2**63, 2**63 - 1, size=shape, dtype=np.int64, endpoint=True)
    if narrow:
        return arrays(draw, shape, dtype, -3, 3)
    return arrays(draw, shape, dtype)


def _floats(draw, shape, narrow: bool, specials: bool):
    if narrow:
        x = arrays(draw, shape, "int8", -3, 3).astype(np.float32)
        if specials and x.size and draw(st.booleans()):
            rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
            sp = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
            x = np.where(rng.random(x.shape) < 0.2, rng.choice(sp, size=x.shape), x).astype(np.float32)
        return x
    return special_floats(draw, shape) if specials else arrays(draw, shape, "float32")


def operand(shape, dtype: str, x, quant=None, const=False) -> TensorDef:
    """A model input (``const`` False) or a constant holding ``x``."""
    if const:
        return TensorDef(shape, dtype.upper(), quant, data=np.asarray(x).reshape(shape))
    return TensorDef(shape, dtype.upper(), quant)


def runtime_inputs(defs, xs):
    """The values of the non-constant operands, in order."""
    return [np.asarray(x).reshape(d.shape) for d, x in zip(defs, xs) if d.data is None]
