"""SHAPE against TFLM: inputs of any type and 1 to 6 dimensions, int32 output."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def shape_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16", "int32", "int64", "uint8", "bool"]))
    shape = draw(shapes(1, 6, 1, 5))
    out_shape = (len(shape),) if draw(st.integers(0, 4)) else (1, len(shape))
    x = any_array(draw, shape, dtype)
    model = single_op_model("SHAPE", [TensorDef(shape, dtype.upper())], [TensorDef(out_shape, "INT32")],
                            out_type=2)
    return model, [x]


@given(shape_case())
def test_shape_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SHAPE")


def test_shape_errors():
    x = np.zeros((2, 3), np.float32)
    model = single_op_model("SHAPE", [TensorDef((2, 3), "FLOAT32")], [TensorDef((2,), "INT64")])
    assert_rejected(model, [x], "Output type INT64")
    model = single_op_model("SHAPE", [TensorDef((2, 3), "FLOAT32")], [TensorDef((3,), "INT32")])
    assert_rejected(model, [x], "exactly the 2 dimensions")
