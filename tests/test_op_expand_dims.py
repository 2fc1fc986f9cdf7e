"""EXPAND_DIMS against TFLM: float32 / int8 / int16, positive and negative axes, scalar
or 1-element axis tensors; clear errors for what TFLM rejects."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def expand_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16"]))
    shape = draw(shapes(0, 5, 1, 5))
    axis = draw(st.integers(0, len(shape)))
    out_shape = shape[:axis] + (1,) + shape[axis:]
    if draw(st.booleans()):
        axis = axis - len(shape) - 1
    axis_shape = draw(st.sampled_from([(), (1,)]))
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} ndims={len(shape)}")
    model = single_op_model("EXPAND_DIMS", [TensorDef(shape, dtype.upper(), q),
                                            TensorDef(axis_shape, "INT32", data=np.full(axis_shape, axis, np.int32))],
                            [TensorDef(out_shape, dtype.upper(), q)])
    return model, [x]


@given(expand_case())
def test_expand_dims_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="EXPAND_DIMS")


def _model(in_type="FLOAT32", out_shape=(1, 2, 3), axis=0, axis_type="INT32", const=True, out_type=None):
    axis_data = np.array([axis]) if const else None
    return single_op_model("EXPAND_DIMS", [TensorDef((2, 3), in_type),
                                           TensorDef((1,), axis_type, data=axis_data)],
                           [TensorDef(out_shape, out_type or in_type)])


def test_expand_dims_errors():
    x = np.zeros((2, 3), np.float32)
    assert_rejected(_model(axis=3), [x], "axis 3 is out of range")
    assert_rejected(_model(axis=-4), [x], "axis -4 is out of range")
    assert_rejected(_model(out_shape=(2, 1, 3)), [x], "is not the input shape")
    assert_rejected(_model(axis_type="INT64"), [x], "Axis type INT64")
    assert_rejected(_model(const=False), [x, np.zeros(1, np.int32)], "Non-constant >axis<")
    assert_rejected(_model(in_type="INT32"), [x.astype(np.int32)], "supports int8, int16 and float32")
    assert_rejected(_model(out_type="INT8"), [x], "output type INT8 differ")
