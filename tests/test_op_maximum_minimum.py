"""MAXIMUM and MINIMUM against TFLM: float32 (NaN, signed zeros, infinities), int8, int16, int32,
int64, broadcasting up to 6-D, constant operands; no arena allocation at all (TFLM's
kernel has no init or prepare); clear errors for bad models."""
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import maximum_minimum_case
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model

pytestmark = pytest.mark.oracle
OPS = ["MAXIMUM", "MINIMUM"]


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_maximum_minimum_match_tflm(oracle, op, data):
    model, inputs = data.draw(maximum_minimum_case(op))
    compare_with_tflm(oracle, model, inputs, context=op)


@pytest.mark.parametrize("types, shapes, message", [
    (("INT8", "INT16", "INT16"), ((2, 3), (2, 3), (2, 3)), "must match"),
    (("UINT8", "UINT8", "UINT8"), ((2, 3), (2, 3), (2, 3)), "not supported"),
    (("BOOL", "BOOL", "BOOL"), ((2, 3), (2, 3), (2, 3)), "not supported"),
    (("FLOAT32",) * 3, ((2, 3), (3, 2), (2, 3)), "do not broadcast"),
    (("FLOAT32",) * 3, ((2, 3), (1, 3), (3, 2)), "output has shape"),
])
@pytest.mark.parametrize("op", OPS)
def test_maximum_minimum_reject_bad_models(op, types, shapes, message):
    model = single_op_model(op, [TensorDef(shapes[0], types[0]), TensorDef(shapes[1], types[1])],
                            [TensorDef(shapes[2], types[2])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert op in str(info.value)
