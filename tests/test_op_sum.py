"""SUM against TFLM: float32 (sums in TFLM's order, signed zeros, special values), int8 and int16 (int32 sums, requantization), over any axis list (negative, duplicate, unordered,
empty, constant or runtime), keep_dims or not, up to 6-D, TFLM's scratch buffers and
temporaries; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import given

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.reduce_helpers import bad_reduce_model, reduce_case

pytestmark = pytest.mark.oracle


@given(reduce_case("SUM", ["float32", "int8", "int16"]))
def test_sum_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SUM")


@pytest.mark.parametrize("kwargs, message", [
    (dict(out_type="INT16"), "differs"),
    (dict(in_type="INT32", in_q=None, out_q=None), "not supported"),
    (dict(axis_type="INT64"), "axis type"),
    (dict(axes=(0, 7)), "out of range"),
    (dict(out_shape=(4,)), "output has 4"),
    (dict(out_q=None), "positive scales"),
])
def test_sum_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(bad_reduce_model("SUM", **kwargs), [])
    assert "SUM" in str(info.value)


def test_sum_float_order_and_signed_zero(oracle):
    """Sequential float32 sums differ from pairwise ones; -0.0 sums to +0.0."""
    x = np.array([[1e8, 1.0, -1e8, 1.0] * 8, [-0.0] * 32, [0.1] * 32], np.float32).T.copy()
    model = single_op_model("SUM", [TensorDef(x.shape, "FLOAT32"),
                                    TensorDef((1,), "INT32", data=np.array([0], np.int32))],
                            [TensorDef((3,), "FLOAT32")], keep_dims=False)
    compare_with_tflm(oracle, model, [x], context="SUM order")
