"""GATHER_ND against TFLM: float32 / int8 params of rank 1 to 5, int32 indices of rank 1
to 3 with 0 to 5 index values per row (constant or run-time), including indices past
their own dimension that TFLM accepts while the slice stays inside params; TFLM's prepare
errors and its out-of-bounds error."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_min_arena, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def gather_nd_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    p_shape = draw(shapes(1, 5, 1, 4))
    nd = draw(st.integers(0, len(p_shape)))
    batch = draw(shapes(0, 2, 1, 4))
    strides = [int(np.prod(p_shape[j + 1:], dtype=np.int64)) for j in range(nd)]
    slice_size = int(np.prod(p_shape[nd:], dtype=np.int64))
    total = int(np.prod(p_shape, dtype=np.int64))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.integers(0, 3)) == 0 and nd > 1:
        # indices past their own dimension, slice still inside params (TFLM reads it)
        flat = rng.integers(0, total // slice_size, size=batch + (1,)) * slice_size
        idx = np.zeros(batch + (nd,), np.int64)
        idx[..., -1] = flat[..., 0] // strides[-1]
    else:
        idx = rng.integers(0, np.array(p_shape[:nd]) if nd else 1, size=batch + (nd,))
    idx = idx.astype(np.int32)
    const = draw(st.booleans())
    q = quant_or_none(draw, dtype)
    x = any_array(draw, p_shape, dtype)
    event(f"{dtype} nd={nd} const={const}")
    model = single_op_model("GATHER_ND", [TensorDef(p_shape, dtype.upper(), q),
                                          TensorDef(idx.shape, "INT32", data=idx if const else None)],
                            [TensorDef(batch + p_shape[nd:], dtype.upper(), q)])
    return model, [x] if const else [x, idx]


@given(gather_nd_case())
def test_gather_nd_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="GATHER_ND")


def _model(p_shape=(3, 4), i_shape=(2, 1), out_shape=(2, 4), dtype="FLOAT32", itype="INT32", out_dtype=None, idx=None):
    return single_op_model("GATHER_ND", [TensorDef(p_shape, dtype), TensorDef(i_shape, itype, data=idx)],
                           [TensorDef(out_shape, out_dtype or dtype)])


def test_gather_nd_errors(oracle):
    x, i = np.zeros((3, 4), np.float32), np.zeros((2, 1), np.int32)
    assert_both_reject(oracle, _model(dtype="INT16"), [x.astype(np.int16), i], "Params of type 'INT16' are not supported")
    assert_both_reject(oracle, _model(itype="INT64"), [x, i.astype(np.int64)], "Indices of type 'INT64' are not supported")
    assert_both_reject(oracle, _model(i_shape=(2, 3), out_shape=(2,)), [x, np.zeros((2, 3), np.int32)],
                       "Index innermost dimension length must be <= params rank.")
    six = (1,) * 6
    assert_both_reject(oracle, _model(p_shape=six, i_shape=(6,), out_shape=()), [np.zeros(six, np.float32),
                                                                                  np.zeros(6, np.int32)],
                       "Index innermost dimension length must not exceed 5.")
    assert_both_reject(oracle, _model(idx=np.array([[0], [3]], np.int32)), [x], "gather_nd index out of bounds",
                       tflm_stage="invoke")


def test_gather_nd_runtime_index_out_of_bounds(oracle):
    model = _model(p_shape=(3, 4), i_shape=(2, 2), out_shape=(2,))
    bad = [np.zeros((3, 4), np.float32), np.array([[0, 1], [2, 4]], np.int32)]     # flat 12 = past the end
    with pytest.raises(KernelError, match="gather_nd index out of bounds"):
        run_ours(model, bad)
    assert oracle.run(model, bad).stage == "invoke"


def test_gather_nd_min_arena(oracle):
    assert_same_min_arena(oracle, _model(p_shape=(3, 4, 2), i_shape=(2, 2), out_shape=(2, 2), dtype="INT8"),
                          [np.zeros((3, 4, 2), np.int8), np.zeros((2, 2), np.int32)])
