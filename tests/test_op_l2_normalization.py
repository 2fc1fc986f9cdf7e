"""L2_NORMALIZATION against TFLM: float32 (sequential float32 sum, epsilon 1e-6, NaNs
and infinities) and int8 (fixed-point inverse square root, output implicitly 1/128),
1-D to 4-D, rows of zeros; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes
from tests.unary_helpers import float_values

pytestmark = pytest.mark.oracle
OP = "L2_NORMALIZATION"


@st.composite
def l2_case(draw):
    kind = draw(st.sampled_from(["float32", "int8"]))
    event(kind)
    shape = draw(shapes(1, 4, 1, 9))
    if draw(st.integers(0, 4)) == 0:
        shape = shape[:-1][:1] + (draw(st.integers(100, 3000)),)   # fits the arena
    if kind == "float32":
        x = float_values(draw, shape, spreads=(1e-4, 1.0, 30.0, 1e19))
        qin = qout = None
    else:
        zp = draw(st.integers(-128, 127))
        qin = (draw(scales(1e-3, 1.0)), zp)
        qout = (draw(st.sampled_from([1 / 128]) | scales(1e-3, 1.0)), draw(st.sampled_from([0, 0, 5])))
        narrow = draw(st.booleans())
        x = arrays(draw, shape, "int8", *((max(zp - 2, -128), min(zp + 2, 127)) if narrow else (None, None)))
    tt = kind.upper()
    options = {"fused_activation_function": 0} if draw(st.booleans()) else {}
    return single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)], **options), [x]


@given(l2_case())
def test_l2_normalization_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_l2_normalization_zero_rows(oracle):
    x = np.zeros((3, 5), np.float32)
    x[1] = [np.nan, 1, 2, 3, 4]
    x[2] = [1e-30, 0, 0, -1e-30, 0]
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)
    xi = np.array([[4, 4, 4], [5, 4, 4], [4, 3, 5]], np.int8)
    model = single_op_model(OP, [TensorDef(xi.shape, "INT8", (0.1, 4))], [TensorDef(xi.shape, "INT8", (1 / 128, 0))])
    compare_with_tflm(oracle, model, [xi], context=OP)


@pytest.mark.parametrize("in_type, out_type, shape, options, message", [
    ("INT16", "INT16", (2, 3), {}, "requires float32 or int8"),
    ("INT8", "FLOAT32", (2, 3), {}, "differ"),
    ("FLOAT32", "FLOAT32", (1, 2, 1, 2, 3), {}, "at most 4"),
    ("FLOAT32", "FLOAT32", (2, 3), {"fused_activation_function": 1}, "activation"),
])
def test_l2_normalization_rejects_bad_models(in_type, out_type, shape, options, message):
    q = lambda t: None if t == "FLOAT32" else (0.1, 0)
    model = single_op_model(OP, [TensorDef(shape, in_type, q(in_type))],
                            [TensorDef(shape, out_type, q(out_type))], **options)
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
