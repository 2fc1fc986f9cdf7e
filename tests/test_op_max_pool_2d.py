"""MAX_POOL_2D against TFLM: float32 / int8 / int16, SAME / VALID, strides, filters,
fused activations; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import given

from micro_runtime.errors import KernelError
from tests.helpers import compare_with_tflm, run_ours
from tests.pooling_helpers import pool_case, pool_model

pytestmark = pytest.mark.oracle

OP = "MAX_POOL_2D"


@given(pool_case(OP))
def test_max_pool_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_max_pool_float_special_values(oracle):
    # NaN never wins a window, -inf-only windows give -FLT_MAX, +inf clamps to FLT_MAX
    x = np.array([np.nan, 1, -np.inf, -np.inf, np.inf, 2, -0.0, 0.0], np.float32).reshape(1, 2, 4, 1)
    model = pool_model(OP, (1, 2, 4, 1), (1, 1, 2, 1), stride=(2, 2))
    compare_with_tflm(oracle, model, [x], context=OP)


@pytest.mark.parametrize("kwargs, message", [
    (dict(in_shape=(4, 4), out_shape=(2, 2)), "4-D"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 4, 4, 1)), "does not match the pooled shape"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), filter_size=(2, 0)), "must be >= 1"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), padding=7), "padding"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), dtype="UINT8"), "not supported"),
    (dict(in_shape=(1, 4, 4, 1), out_shape=(1, 3, 3, 1), dtype="INT16", quant=(0.5, 0),
          out_quant=(0.5001, 0)), "scale"),
])
def test_max_pool_rejects_bad_models(kwargs, message):
    model = pool_model(OP, **kwargs)
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)


@pytest.mark.parametrize("dtype, scale, act", [("INT16", 1e-21, 2), ("INT8", 1e-12, 3), ("INT16", 1e-10, 3)])
def test_activation_bound_beyond_int32_refused(oracle, dtype, scale, act):
    """A fused activation bound that does not fit int32 at the output scale: TFLM's
    pooling prepare logs the failed check, ignores it and clamps with bounds it never
    set (uninitialised memory); ours refuses, saying so."""
    model = pool_model(OP, (1, 4, 4, 1), (1, 3, 3, 1), dtype=dtype, quant=(scale, 0), act=act)
    x = np.arange(16, dtype=dtype.lower()).reshape(1, 4, 4, 1)
    assert oracle.run(model, [x]).ok          # TFLM runs, on undefined bounds
    with pytest.raises(KernelError, match="uninitialised activation bounds"):
        run_ours(model, [x])
    # the same model without the activation: identical to TFLM
    compare_with_tflm(oracle, pool_model(OP, (1, 4, 4, 1), (1, 3, 3, 1), dtype=dtype, quant=(scale, 0)),
                      [x], context=OP)
