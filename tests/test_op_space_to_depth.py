"""SPACE_TO_DEPTH against TFLM: float32 / int8 NHWC, block sizes 1 to 4; TFLM's prepare
errors (rank, type, height / width not multiples of the block)."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_min_arena, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model

pytestmark = pytest.mark.oracle


@st.composite
def space_to_depth_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    block = draw(st.integers(1, 4))
    n, h, w = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    d = draw(st.integers(1, 4))
    q = quant_or_none(draw, dtype)
    x = any_array(draw, (n, h * block, w * block, d), dtype)
    event(f"{dtype} block={block}")
    model = single_op_model("SPACE_TO_DEPTH", [TensorDef(x.shape, dtype.upper(), q)],
                            [TensorDef((n, h, w, d * block * block), dtype.upper(), q)], block_size=block)
    return model, [x]


@given(space_to_depth_case())
def test_space_to_depth_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SPACE_TO_DEPTH")


def _model(in_shape=(1, 4, 4, 1), out_shape=(1, 2, 2, 4), dtype="FLOAT32", block=2, out_dtype=None):
    return single_op_model("SPACE_TO_DEPTH", [TensorDef(in_shape, dtype)], [TensorDef(out_shape, out_dtype or dtype)],
                           block_size=block)


def test_space_to_depth_errors(oracle):
    x = np.zeros((1, 4, 4, 1), np.float32)
    assert_both_reject(oracle, _model(in_shape=(4, 4, 1), out_shape=(2, 2, 4)), [x[0]], "must be 4-D")
    assert_both_reject(oracle, _model(dtype="INT32"), [x.astype(np.int32)], "type INT32 is not supported")
    assert_both_reject(oracle, _model(in_shape=(1, 5, 4, 1)), [np.zeros((1, 5, 4, 1), np.float32)],
                       "must be multiples of block_size 2")


def test_space_to_depth_min_arena(oracle):
    assert_same_min_arena(oracle, _model(in_shape=(2, 6, 4, 3), out_shape=(2, 3, 2, 12), dtype="INT8"),
                          [np.zeros((2, 6, 4, 3), np.int8)])
