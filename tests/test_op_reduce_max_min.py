"""REDUCE_MAX and REDUCE_MIN against TFLM: float32 (NaN skipped, -/+FLT_MAX start, first of equal zeros) and int8, over any axis list (negative, duplicate, unordered,
empty, constant or runtime), keep_dims or not, up to 6-D, TFLM's scratch buffers and
temporaries; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.reduce_helpers import bad_reduce_model, reduce_case

pytestmark = pytest.mark.oracle
OPS = ["REDUCE_MAX", "REDUCE_MIN"]


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_reduce_max_min_match_tflm(oracle, op, data):
    model, inputs = data.draw(reduce_case(op, ["float32", "int8"]))
    compare_with_tflm(oracle, model, inputs, context=op)


@pytest.mark.parametrize("kwargs, message", [
    (dict(out_q=(0.2, 0)), "same scale and zero point"),
    (dict(out_q=(0.1, 1)), "same scale and zero point"),
    (dict(in_type="INT16"), "not supported"),
    (dict(in_type="INT32", in_q=None, out_q=None), "not supported"),
    (dict(out_type="FLOAT32", out_q=None), "differs"),
    (dict(axis_type="INT64"), "axis type"),
    (dict(axes=(3,)), "out of range"),
    (dict(out_shape=(3,)), "output has 3"),
])
@pytest.mark.parametrize("op", OPS)
def test_reduce_max_min_reject_bad_models(op, kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(bad_reduce_model(op, **kwargs), [])
    assert op in str(info.value)


@pytest.mark.parametrize("op", OPS)
def test_reduce_max_min_float_special_values(oracle, op):
    x = np.array([[np.nan, np.nan], [-np.inf, np.inf], [-0.0, 0.0], [0.0, -0.0], [np.nan, 1.0],
                  [3e38, -3e38]], np.float32)
    model = single_op_model(op, [TensorDef(x.shape, "FLOAT32"),
                                    TensorDef((1,), "INT32", data=np.array([1], np.int32))],
                            [TensorDef((6,), "FLOAT32")], keep_dims=False)
    compare_with_tflm(oracle, model, [x], context=f"{op} special values")
    for row in ([-np.inf, -np.inf], [np.inf, np.inf]):
        y = np.array([row], np.float32)
        model = single_op_model(op, [TensorDef(y.shape, "FLOAT32"),
                                        TensorDef((1,), "INT32", data=np.array([1], np.int32))],
                                [TensorDef((1,), "FLOAT32")], keep_dims=False)
        compare_with_tflm(oracle, model, [y], context=f"{op} infinities")


@pytest.mark.parametrize("op", OPS)
def test_reduce_max_min_unquantized_int8(oracle, op):
    x = np.random.default_rng(0).integers(-128, 128, (3, 4)).astype(np.int8)
    model = single_op_model(op, [TensorDef((3, 4), "INT8"),
                                    TensorDef((1,), "INT32", data=np.array([1], np.int32))],
                            [TensorDef((3,), "INT8")], keep_dims=False)
    compare_with_tflm(oracle, model, [x], context=f"{op} unquantized int8")
