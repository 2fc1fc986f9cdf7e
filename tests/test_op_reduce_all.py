"""REDUCE_ALL against TFLM: bool, over any axis list (negative, duplicate, unordered,
empty, constant or runtime), keep_dims or not, up to 6-D, TFLM's scratch buffers and
temporaries; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import given

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.reduce_helpers import bad_reduce_model, reduce_case

pytestmark = pytest.mark.oracle


@given(reduce_case("REDUCE_ALL", ["bool"]))
def test_reduce_all_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="REDUCE_ALL")


@pytest.mark.parametrize("kwargs, message", [
    (dict(in_type="INT8"), "bool only"),
    (dict(in_type="BOOL", in_q=None, out_q=None, axis_type="INT64"), "axis type"),
    (dict(in_type="BOOL", in_q=None, out_q=None, out_type="INT8"), "differs"),
    (dict(in_type="BOOL", in_q=None, out_q=None, axes=(5,)), "out of range"),
])
def test_reduce_all_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(bad_reduce_model("REDUCE_ALL", **kwargs), [])
    assert "REDUCE_ALL" in str(info.value)
