"""L2_POOL_2D against TFLM: float32 (TFLM's only type), SAME / VALID padding, strides,
filter sizes, fused activations; squares overflowing to infinity; TFLM's prepare errors
(quantized input, ranks, types)."""
import numpy as np
import pytest
from hypothesis import given

from tests.data_movement_helpers import assert_both_reject, assert_rejected, assert_same_min_arena
from tests.helpers import compare_with_tflm
from tests.pooling_helpers import pool_case, pool_model

pytestmark = pytest.mark.oracle


@given(pool_case("L2_POOL_2D", dtypes=("float32",)))
def test_l2_pool_2d_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="L2_POOL_2D")


@pytest.mark.parametrize("act", [0, 1, 2, 3])
def test_l2_pool_2d_large_values(oracle, act):
    """Squares past FLT_MAX give inf, clamped to FLT_MAX (or the activation's bound)."""
    x = np.random.default_rng(act).uniform(-3e19, 3e19, (1, 6, 6, 4)).astype(np.float32)
    x[0, 0, 0, 0] = np.float32(-0.0)
    model = pool_model("L2_POOL_2D", (1, 6, 6, 4), (1, 3, 3, 4), padding=0, stride=(2, 2), filter_size=(3, 3), act=act)
    compare_with_tflm(oracle, model, [x], context="L2_POOL_2D large")


def test_l2_pool_2d_errors(oracle):
    x = np.zeros((1, 4, 4, 2), np.float32)
    assert_both_reject(oracle, pool_model("L2_POOL_2D", (1, 4, 4, 2), (1, 3, 3, 2), dtype="INT8", quant=(0.5, 0)),
                       [x.astype(np.int8)], "L2_POOL_2D is float32 only")
    assert_both_reject(oracle, pool_model("L2_POOL_2D", (4, 4, 2), (3, 3, 2)), [x[0]], "must be 4-D")
    assert_both_reject(oracle, pool_model("L2_POOL_2D", (1, 4, 4, 2), (1, 3, 3, 2), out_dtype="INT8", out_quant=(0.5, 0)),
                       [x], "input type FLOAT32 and output type INT8 differ")
    # TFLM writes the pooled shape into the output's dims unchecked
    assert_rejected(pool_model("L2_POOL_2D", (1, 4, 4, 2), (1, 2, 3, 2)), [x], "does not match the pooled shape (1, 3, 3, 2)")
    assert_rejected(pool_model("L2_POOL_2D", (1, 4, 4, 2), (1, 3, 3, 2), stride=(0, 1)), [x], "must be >= 1")


def test_l2_pool_2d_min_arena(oracle):
    assert_same_min_arena(oracle, pool_model("L2_POOL_2D", (1, 5, 5, 3), (1, 3, 3, 3), padding=0, stride=(2, 2)),
                          [np.zeros((1, 5, 5, 3), np.float32)])
