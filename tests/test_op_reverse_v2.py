"""REVERSE_V2 against TFLM: every type TFLM takes (float32, int8, uint8, int16, int32,
int64, bool), rank 1 to 6, one or several consecutive axes in any order, negative axes,
constant or run-time axes; TFLM's prepare errors and its invoke-time axis errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def reverse_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "uint8", "int16", "int32", "int64", "bool"]))
    shape = draw(shapes(1, 6, 1, 4))
    rank = len(shape)
    first = draw(st.integers(0, rank - 1))
    last = draw(st.integers(first, rank - 1))
    axes = list(range(first, last + 1))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    axes = draw(st.permutations(axes))
    axes = np.array(axes, np.int32)
    const = draw(st.booleans())
    x = any_array(draw, shape, dtype)
    event(f"{dtype} axes={len(axes)} const={const}")
    model = single_op_model("REVERSE_V2", [TensorDef(shape, dtype.upper()),
                                           TensorDef(axes.shape, "INT32", data=axes if const else None)],
                            [TensorDef(shape, dtype.upper())])
    return model, [x] if const else [x, axes]


@given(reverse_case())
def test_reverse_v2_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="REVERSE_V2")


def _model(shape=(2, 3, 4), axes_shape=(1,), dtype="FLOAT32", atype="INT32", out_dtype=None, axes=None, out_shape=None):
    return single_op_model("REVERSE_V2", [TensorDef(shape, dtype), TensorDef(axes_shape, atype, data=axes)],
                           [TensorDef(out_shape or shape, out_dtype or dtype)])


def test_reverse_v2_errors(oracle):
    x, a = np.zeros((2, 3, 4), np.float32), np.array([1], np.int32)
    assert_both_reject(oracle, _model(axes_shape=(1, 1)), [x, a.reshape(1, 1)], "the axis tensor must be 1-D")
    seven = (1,) * 7
    assert_both_reject(oracle, _model(shape=seven), [np.zeros(seven, np.float32), a], "at most 6")
    assert_both_reject(oracle, _model(axes_shape=(4,)), [x, np.arange(4, dtype=np.int32)], "4 axes for an input of 3")
    assert_both_reject(oracle, _model(dtype="FLOAT16"), [x.astype(np.float16), a], "Type 'FLOAT16' is not supported by reverse.")
    assert_both_reject(oracle, _model(atype="INT64"), [x, a.astype(np.int64)], "Axis Type 'INT64' is not supported by reverse.")
    assert_both_reject(oracle, _model(out_dtype="INT32"), [x, a], "input type FLOAT32 and output type INT32 differ")
    assert_both_reject(oracle, _model(axes_shape=(2,), axes=np.array([0, 2], np.int32)), [x],
                       "Non-contiguous `axes` not supported", tflm_stage="invoke")
    assert_both_reject(oracle, _model(axes=np.array([3], np.int32)), [x], "axis 3 is out of range", tflm_stage="invoke")
    assert_both_reject(oracle, _model(axes=np.array([-4], np.int32)), [x], "axis -4 is out of range", tflm_stage="invoke")


def test_reverse_v2_runtime_axes_checked(oracle):
    model = _model(axes_shape=(2,))
    bad = [np.zeros((2, 3, 4), np.float32), np.array([2, 2], np.int32)]
    with pytest.raises(KernelError, match="Non-contiguous"):
        run_ours(model, bad)
    assert oracle.run(model, bad).stage == "invoke"


def test_reverse_v2_min_arena(oracle):
    assert_same_min_arena(oracle, _model(dtype="INT16"), [np.zeros((2, 3, 4), np.int16), np.array([1], np.int32)])
