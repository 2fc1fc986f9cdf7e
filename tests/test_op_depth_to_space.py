"""DEPTH_TO_SPACE against TFLM: float32 / int8 NHWC, block sizes 1 to 4; TFLM's prepare
errors (rank, type, block size, depth)."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_min_arena, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model

pytestmark = pytest.mark.oracle


@st.composite
def depth_to_space_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    block = draw(st.integers(1, 4))
    n, h, w = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
    d = draw(st.integers(1, 3))
    q = quant_or_none(draw, dtype)
    x = any_array(draw, (n, h, w, d * block * block), dtype)
    event(f"{dtype} block={block}")
    model = single_op_model("DEPTH_TO_SPACE", [TensorDef(x.shape, dtype.upper(), q)],
                            [TensorDef((n, h * block, w * block, d), dtype.upper(), q)], block_size=block)
    return model, [x]


@given(depth_to_space_case())
def test_depth_to_space_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DEPTH_TO_SPACE")


def _model(in_shape=(1, 2, 2, 4), out_shape=(1, 4, 4, 1), dtype="FLOAT32", block=2, out_dtype=None):
    return single_op_model("DEPTH_TO_SPACE", [TensorDef(in_shape, dtype)], [TensorDef(out_shape, out_dtype or dtype)],
                           block_size=block)


def test_depth_to_space_errors(oracle):
    x = np.zeros((1, 2, 2, 4), np.float32)
    assert_both_reject(oracle, _model(in_shape=(2, 2, 4), out_shape=(4, 4, 1)), [x[0]], "must be 4-D")
    assert_both_reject(oracle, _model(dtype="INT16"), [x.astype(np.int16)], "type INT16 is not supported")
    assert_both_reject(oracle, _model(out_dtype="INT8"), [x], "input type FLOAT32 and output type INT8 differ")
    assert_both_reject(oracle, _model(block=0), [x], "block_size must be > 0")
    assert_both_reject(oracle, _model(in_shape=(1, 2, 2, 6), out_shape=(1, 4, 4, 1)), [np.zeros((1, 2, 2, 6), np.float32)],
                       "not a multiple of block_size^2")


def test_depth_to_space_min_arena(oracle):
    assert_same_min_arena(oracle, _model(in_shape=(1, 2, 3, 8), out_shape=(1, 4, 6, 2), dtype="INT8"),
                          [np.zeros((1, 2, 3, 8), np.int8)])
