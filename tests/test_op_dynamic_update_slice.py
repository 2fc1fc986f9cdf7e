"""DYNAMIC_UPDATE_SLICE against TFLM: float32, int8, int16, int32 operands of rank 1 to 6,
int32 / int64 start indices (constant or run-time, any value: TFLM clamps them), updates
as large as the operand (then copied whole); TFLM's prepare errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_min_arena, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def dynamic_update_slice_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16", "int32"]))
    shape = draw(shapes(1, 6, 1, 4 if draw(st.booleans()) else 6))
    whole = draw(st.integers(0, 6)) == 0
    update_shape = shape if whole else tuple(draw(st.integers(1, d)) for d in shape)
    itype = draw(st.sampled_from(["int32", "int64"]))
    big = 2**40 if itype == "int64" else 2**31 - 1
    starts = np.array([draw(st.one_of(st.integers(-2, d + 1), st.integers(-big, big))) for d in shape], itype)
    const = draw(st.booleans())
    q = quant_or_none(draw, dtype)
    operand, update = any_array(draw, shape, dtype), any_array(draw, update_shape, dtype)
    event(f"{dtype} {itype} const={const} whole={whole}")
    model = single_op_model("DYNAMIC_UPDATE_SLICE", [
        TensorDef(shape, dtype.upper(), q), TensorDef(update_shape, dtype.upper(), q),
        TensorDef(starts.shape, itype.upper(), data=starts if const else None)], [TensorDef(shape, dtype.upper(), q)])
    return model, [operand, update] + ([] if const else [starts])


@given(dynamic_update_slice_case())
def test_dynamic_update_slice_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DYNAMIC_UPDATE_SLICE")


def _model(shape=(4, 4), update=(2, 2), starts_shape=(2,), dtype="FLOAT32", update_dtype=None, itype="INT32",
           out_shape=None):
    return single_op_model("DYNAMIC_UPDATE_SLICE", [
        TensorDef(shape, dtype), TensorDef(update, update_dtype or dtype), TensorDef(starts_shape, itype)],
        [TensorDef(out_shape or shape, dtype)])


def test_dynamic_update_slice_errors(oracle):
    x, u, s = np.zeros((4, 4), np.float32), np.zeros((2, 2), np.float32), np.zeros(2, np.int32)
    assert_both_reject(oracle, _model(update_dtype="INT8"), [x, u.astype(np.int8), s], "update type INT8 differ")
    assert_both_reject(oracle, _model(itype="INT16"), [x, u, s.astype(np.int16)], "start indices of type INT16")
    assert_both_reject(oracle, _model(starts_shape=(1, 2)), [x, u, s.reshape(1, 2)], "must be 1-D")
    assert_both_reject(oracle, _model(starts_shape=(3,)), [x, u, np.zeros(3, np.int32)], "3 start indices")
    assert_both_reject(oracle, _model(update=(2, 2, 1)), [x, u.reshape(2, 2, 1), s], "same number of dimensions")
    assert_both_reject(oracle, _model(update=(5, 2)), [x, np.zeros((5, 2), np.float32), s], "update dimension 0 (5)")
    assert_both_reject(oracle, _model(dtype="INT64"), [x.astype(np.int64), u.astype(np.int64), s],
                       "Operand type INT64 not supported", tflm_stage="invoke")
    seven = (1,) * 7
    assert_both_reject(oracle, _model(shape=seven, update=seven, starts_shape=(7,)),
                       [np.zeros(seven, np.float32), np.zeros(seven, np.float32), np.zeros(7, np.int32)],
                       "at most 6")


def test_dynamic_update_slice_min_arena(oracle):
    assert_same_min_arena(oracle, _model(dtype="INT8"), [np.zeros((4, 4), np.int8), np.zeros((2, 2), np.int8),
                                                         np.array([1, 3], np.int32)])
