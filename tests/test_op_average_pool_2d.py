"""AVERAGE_POOL_2D against TFLM: float32 / int8 / int16, SAME / VALID, strides, filters,
fused activations; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import given

from micro_runtime.errors import KernelError
from tests.helpers import compare_with_tflm, run_ours
from tests.pooling_helpers import pool_case, pool_model

pytestmark = pytest.mark.oracle

OP = "AVERAGE_POOL_2D"


@given(pool_case(OP))
def test_average_pool_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_average_pool_rounds_halves_away_from_zero(oracle):
    # four 2x2 windows summing to -6, 6, 2, -2: averages -1.5, 1.5, 0.5, -0.5
    x = np.array([[-1, -2, 1, 2], [-1, -2, 1, 2], [1, 1, -1, -1], [0, 0, 0, 0]], np.int8).reshape(1, 4, 4, 1)
    model = pool_model(OP, (1, 4, 4, 1), (1, 2, 2, 1), "INT8", quant=(0.1, 0), stride=(2, 2))
    ours, _ = compare_with_tflm(oracle, model, [x], context=OP)
    assert ours[0].reshape(-1).tolist() == [-2, 2, 1, -1]


def test_average_pool_float_infinities_clamp_to_flt_max(oracle):
    x = np.array([np.inf, 1, -np.inf, 2, 3, 4, 5, 6], np.float32).reshape(1, 2, 4, 1)
    model = pool_model(OP, (1, 2, 4, 1), (1, 2, 4, 1), padding=0, filter_size=(1, 1))
    compare_with_tflm(oracle, model, [x], context=OP)


@pytest.mark.parametrize("kwargs, message", [
    (dict(in_shape=(1, 4, 4), out_shape=(1, 2, 2)), "4-D"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 2, 2, 1)), "does not match the pooled shape"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), stride=(0, 1)), "must be >= 1"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), dtype="INT32"), "not supported"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), dtype="INT8", quant=(0.5, 1),
          out_quant=(0.25, 1)), "scale"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), dtype="INT8", quant=(0.5, 1),
          out_quant=(0.5, 2)), "zero point"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), dtype="INT8", quant=(0.5, 1),
          out_dtype="INT16"), "differ"),
])
def test_average_pool_rejects_bad_models(kwargs, message):
    model = pool_model(OP, **kwargs)
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)


def test_average_pool_ops_of_zoo_models(oracle):
    from tests.zoo_op_cases import zoo_op_cases
    cases = list(zoo_op_cases(OP))
    assert cases
    for label, model, inputs in cases:
        compare_with_tflm(oracle, model, inputs, context=f"{OP} of {label}")
