"""MAXIMUM against TFLM: float32 (NaN, signed zeros, infinities), int8, int16, int32,
int64, broadcasting up to 6-D, constant operands; no arena allocation at all (TFLM's
kernel has no init or prepare); clear errors for bad models."""
import pytest
from hypothesis import given

from micro_runtime.errors import KernelError
from tests.binary_helpers import maximum_minimum_case
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model

pytestmark = pytest.mark.oracle


@given(maximum_minimum_case("MAXIMUM"))
def test_maximum_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="MAXIMUM")


@pytest.mark.parametrize("types, shapes, message", [
    (("INT8", "INT16", "INT16"), ((2, 3), (2, 3), (2, 3)), "must match"),
    (("UINT8", "UINT8", "UINT8"), ((2, 3), (2, 3), (2, 3)), "not supported"),
    (("BOOL", "BOOL", "BOOL"), ((2, 3), (2, 3), (2, 3)), "not supported"),
    (("FLOAT32",) * 3, ((2, 3), (3, 2), (2, 3)), "do not broadcast"),
    (("FLOAT32",) * 3, ((2, 3), (1, 3), (3, 2)), "output has shape"),
])
def test_maximum_rejects_bad_models(types, shapes, message):
    model = single_op_model("MAXIMUM", [TensorDef(shapes[0], types[0]), TensorDef(shapes[1], types[1])],
                            [TensorDef(shapes[2], types[2])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert "MAXIMUM" in str(info.value)
