"""BATCH_TO_SPACE_ND against TFLM: float32 / int8, 3-D and 4-D, blocks 1 to 3, crops
(including bottom / right crops that TFLM never reads, and outputs smaller than the
crops imply), constant or run-time block shape and crops; errors for what TFLM rejects
or would leave unwritten."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.data_movement_helpers import (any_array, assert_both_reject, assert_rejected,
                                         assert_same_min_arena, quant_or_none)
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model

pytestmark = pytest.mark.oracle


@st.composite
def batch_to_space_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    rank = draw(st.sampled_from([3, 4]))
    bh = draw(st.integers(1, 3))
    bw = draw(st.integers(1, 3)) if rank == 4 else 1
    ob = draw(st.integers(1, 3))
    ih, iw, d = draw(st.integers(1, 4)), draw(st.integers(1, 4)) if rank == 4 else 1, draw(st.integers(1, 3))
    top = draw(st.integers(0, ih * bh - 1))
    bottom = draw(st.integers(0, ih * bh - 1 - top))
    left = draw(st.integers(0, iw * bw - 1)) if rank == 4 else 0
    right = draw(st.integers(0, iw * bw - 1 - left)) if rank == 4 else 0
    oh, ow = ih * bh - top - bottom, iw * bw - left - right
    if draw(st.integers(0, 4)) == 0:          # TFLM never reads the bottom / right crops
        bottom, right = draw(st.integers(-5, 5)), draw(st.integers(-5, 5))
    in_shape = (ob * bh * bw, ih, iw, d) if rank == 4 else (ob * bh, ih, d)
    out_shape = (ob, oh, ow, d) if rank == 4 else (ob, oh, d)
    block = np.array([bh, bw] if rank == 4 else [bh], np.int32)
    crops = np.array([[top, bottom], [left, right]] if rank == 4 else [[top, bottom]], np.int32)
    const = draw(st.booleans())
    q = quant_or_none(draw, dtype)
    x = any_array(draw, in_shape, dtype)
    event(f"{dtype} rank={rank} const={const}")
    model = single_op_model("BATCH_TO_SPACE_ND", [
        TensorDef(in_shape, dtype.upper(), q), TensorDef(block.shape, "INT32", data=block if const else None),
        TensorDef(crops.shape, "INT32", data=crops if const else None)], [TensorDef(out_shape, dtype.upper(), q)])
    return model, [x] if const else [x, block, crops]


@given(batch_to_space_case())
def test_batch_to_space_nd_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="BATCH_TO_SPACE_ND")


def _model(in_shape=(4, 2, 2, 1), out_shape=(1, 4, 4, 1), block=(2, 2), crops=((0, 0), (0, 0)), dtype="FLOAT32",
           out_dtype=None, const=True):
    b, c = np.array(block, np.int32), np.array(crops, np.int32)
    return single_op_model("BATCH_TO_SPACE_ND", [TensorDef(in_shape, dtype), TensorDef(b.shape, "INT32", data=b if const else None),
                                                 TensorDef(c.shape, "INT32", data=c if const else None)],
                           [TensorDef(out_shape, out_dtype or dtype)])


def test_batch_to_space_nd_errors(oracle):
    x = np.zeros((4, 2, 2, 1), np.float32)
    assert_both_reject(oracle, _model(in_shape=(4, 4), out_shape=(1, 16)), [np.zeros((4, 4), np.float32)],
                       "must have 3 or 4 dimensions")
    assert_both_reject(oracle, _model(out_dtype="INT8"), [x], "input type FLOAT32 and output type INT8 differ")
    assert_both_reject(oracle, _model(dtype="INT16"), [x.astype(np.int16)], "Type INT16 (7) not supported.",
                       tflm_stage="invoke")
    # TFLM runs these but leaves output pixels unwritten (or divides by a zero block width)
    assert_rejected(_model(out_shape=(1, 5, 4, 1)), [x], "unwritten")
    assert_rejected(_model(in_shape=(3, 2, 2, 1)), [np.zeros((3, 2, 2, 1), np.float32)], "unwritten")
    assert_rejected(_model(crops=((-1, 1), (0, 0))), [x], "unwritten")
    assert_rejected(_model(block=(2, 0)), [x], "block shape (2, 0) must be >= 1")
    assert_rejected(_model(block=(2,)), [x], "holds fewer than the 2 int32 values")
    assert_rejected(_model(in_shape=(4, 2, 2, 2)), [np.zeros((4, 2, 2, 2), np.float32)], "depth 2 and output depth 1")


def test_batch_to_space_nd_runtime_values_checked():
    model = _model(const=False)
    with pytest.raises(KernelError, match="unwritten"):
        run_ours(model, [np.zeros((4, 2, 2, 1), np.float32), np.array([2, 1], np.int32), np.zeros((2, 2), np.int32)])


def test_batch_to_space_nd_min_arena(oracle):
    assert_same_min_arena(oracle, _model(dtype="INT8"), [np.zeros((4, 2, 2, 1), np.int8)])
