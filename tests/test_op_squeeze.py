"""SQUEEZE against TFLM: every tensor type, listed (positive / negative) or implicit
squeeze dimensions; clear errors for bad squeeze dimensions and output shapes."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int8", "int16", "int32", "int64", "uint8", "bool", "float16"]


@st.composite
def squeeze_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3, 4, 5]), min_size=0, max_size=8)))
    ones = [i for i, d in enumerate(shape) if d == 1]
    explicit = bool(ones) and draw(st.booleans())
    if explicit:
        chosen = draw(st.lists(st.sampled_from(ones), min_size=1, max_size=len(ones), unique=True))
        dims = [i - len(shape) if draw(st.booleans()) else i for i in chosen]
        squeezed = set(chosen)
    else:
        dims = []
        squeezed = set(ones)
    out_shape = tuple(d for i, d in enumerate(shape) if i not in squeezed)
    if draw(st.integers(0, 9)) == 0:
        out_shape += (1,)   # TFLM accepts extra trailing ones
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} explicit={explicit}")
    options = {"squeeze_dims": dims} if (dims or draw(st.booleans())) else {}
    model = single_op_model("SQUEEZE", [TensorDef(shape, dtype.upper(), q)],
                            [TensorDef(out_shape, dtype.upper(), q)], **options)
    return model, [x]


@given(squeeze_case())
def test_squeeze_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SQUEEZE")


def test_squeeze_dim_not_one():
    model = single_op_model("SQUEEZE", [TensorDef((1, 3), "INT8")], [TensorDef((3,), "INT8")],
                            squeeze_dims=[1])
    assert_rejected(model, [np.zeros((1, 3), np.int8)], "not a dimension of size 1")


def test_squeeze_dim_out_of_range():
    model = single_op_model("SQUEEZE", [TensorDef((1, 3), "INT8")], [TensorDef((3,), "INT8")],
                            squeeze_dims=[-3])
    assert_rejected(model, [np.zeros((1, 3), np.int8)], "squeeze dimension -3")


def test_squeeze_bad_output_shape():
    model = single_op_model("SQUEEZE", [TensorDef((1, 2, 3), "INT8")], [TensorDef((3, 2), "INT8")])
    assert_rejected(model, [np.zeros((1, 2, 3), np.int8)], "does not hold the squeezed input")


def test_squeeze_size_mismatch():
    model = single_op_model("SQUEEZE", [TensorDef((1, 2, 3), "INT8")], [TensorDef((2, 3), "INT16")])
    assert_rejected(model, [np.zeros((1, 2, 3), np.int8)], "sizes differ")
