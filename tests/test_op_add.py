"""ADD against TFLM: broadcasting, int8 / int16 / float32 / int32."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import activations, arrays, scales, shapes, zero_points

pytestmark = pytest.mark.oracle


@st.composite
def add_case(draw):
    dtype = draw(st.sampled_from(["int8", "int16", "float32", "int32"]))
    out_shape = draw(shapes(1, 4, 1, 6))
    # each input keeps some dims of the output (size 1 elsewhere) for broadcasting
    def in_shape():
        keep = draw(st.lists(st.booleans(), min_size=len(out_shape), max_size=len(out_shape)))
        s = tuple(d if k else 1 for d, k in zip(out_shape, keep))
        drop = draw(st.integers(0, len(s) - 1))
        return s[drop:]
    s1, s2 = in_shape(), in_shape()
    if draw(st.booleans()):
        s1 = out_shape
    out_shape = tuple(np.broadcast_shapes(s1, s2))
    act = draw(activations) if dtype != "int32" else 0
    tt = dtype.upper()
    if dtype in ("int8", "int16"):
        q = [(draw(scales(1e-3, 1.0)), draw(zero_points(dtype))) for _ in range(3)]
    else:
        q = [None, None, None]
    x1 = arrays(draw, s1, dtype, *((-1000, 1000) if dtype == "int32" else (None, None)))
    x2 = arrays(draw, s2, dtype, *((-1000, 1000) if dtype == "int32" else (None, None)))
    model = single_op_model("ADD", [TensorDef(s1, tt, q[0]), TensorDef(s2, tt, q[1])],
                            [TensorDef(out_shape, tt, q[2])], fused_activation_function=act)
    return model, [x1, x2]


@given(add_case())
def test_add_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="ADD")


def test_float_add_clamps_infinities_like_tflm(oracle):
    import numpy as np
    model = single_op_model("ADD", [TensorDef((1, 4), "FLOAT32"), TensorDef((1, 4), "FLOAT32")],
                            [TensorDef((1, 4), "FLOAT32")], fused_activation_function=0)
    x = np.array([[np.inf, -np.inf, 1, np.nan]], np.float32)
    ours, _ = compare_with_tflm(oracle, model, [x, np.ones((1, 4), np.float32)], context="ADD inf")
    assert ours[0][0, 0] == np.finfo(np.float32).max
