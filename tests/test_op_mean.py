"""MEAN against TFLM: float32 (sums in TFLM's order, signed zeros, special values), int8 and int16 (int32 sums, requantization), over any axis list (negative, duplicate, unordered,
empty, constant or runtime), keep_dims or not, up to 6-D, TFLM's scratch buffers and
temporaries; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import given

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.reduce_helpers import bad_reduce_model, reduce_case

pytestmark = pytest.mark.oracle


@given(reduce_case("MEAN", ["float32", "int8", "int16"]))
def test_mean_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="MEAN")


@pytest.mark.parametrize("kwargs, message", [
    (dict(out_type="INT16"), "differs"),
    (dict(in_type="INT32", in_q=None, out_q=None), "not supported"),
    (dict(in_type="UINT8"), "not supported"),
    (dict(axis_type="INT64"), "axis type"),
    (dict(axes=(3,)), "out of range"),
    (dict(axes=(-4,)), "out of range"),
    (dict(out_shape=(2, 3)), "output has 6"),
    (dict(in_q=None), "positive scales"),
    (dict(in_type="FLOAT32", in_q=None, out_q=None, out_shape=(9,)), "output has 9"),
])
def test_mean_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(bad_reduce_model("MEAN", **kwargs), [])
    assert "MEAN" in str(info.value)


def test_mean_runtime_axis_out_of_range_is_an_error():
    model = single_op_model("MEAN", [TensorDef((2, 3), "FLOAT32"), TensorDef((1,), "INT32")],
                            [TensorDef((2,), "FLOAT32")], keep_dims=False)
    with pytest.raises(KernelError, match="out of range"):
        run_ours(model, [np.zeros((2, 3), np.float32), np.array([5], np.int32)])
