"""DIV against TFLM: float32 (special values, division by zero), int32 (truncating
division, fused activations), int8 (reciprocal-based, including TFLM's results for
small quotients and zero divisors), broadcasting up to 6-D, constant operands; plus clear
errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import binary_model, broadcast_shapes, draw_const, special_floats
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import activations, arrays, scales

pytestmark = pytest.mark.oracle


@st.composite
def div_case(draw):
    dtype = draw(st.sampled_from(["int8", "int8", "float32", "int32"]))
    event(dtype)
    s1, s2, out = draw(broadcast_shapes())
    act = draw(activations)
    q = (None, None, None)
    if dtype == "float32":
        x1, x2 = special_floats(draw, s1), special_floats(draw, s2)
    elif dtype == "int32":
        lim = draw(st.sampled_from([(-100, 100), (None, None)]))
        x1, x2 = arrays(draw, s1, dtype, *lim), arrays(draw, s2, dtype, *lim)
        x2 = np.where(x2 == 0, 7, x2).astype(np.int32)           # TFLM crashes on / 0
        x1 = np.where(x1 == -2**31, 5, x1).astype(np.int32)      # and on INT32_MIN / -1
    else:
        s = [draw(scales(1e-4, 4.0)) for _ in range(3)]
        q = tuple((sc, draw(st.integers(-128, 127))) for sc in s)
        x1, x2 = arrays(draw, s1, dtype), arrays(draw, s2, dtype)
    return binary_model("DIV", dtype.upper(), s1, s2, out, x1, x2, q, draw_const(draw),
                        fused_activation_function=act)


@given(div_case())
def test_div_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DIV")


@pytest.mark.parametrize("scales_, zps", [
    ((0.1, 0.1, 0.1), (0, 0, 0)), ((1.0, 1.0, 1.0), (0, 0, 0)), ((0.02, 0.1, 0.1), (3, -3, 0)),
    ((1.0, 1e-5, 1e-5), (5, -3, 100)), ((1e-6, 1.0, 10.0), (0, 0, 0)),
    ((0.8830485, 0.44436088, 0.6280637), (3, -63, 3)),   # multiplier differs through float32
])
def test_div_int8_every_pair(oracle, scales_, zps):
    """All 65536 int8 pairs: small quotients (TFLM's out-of-range shifts), zero divisors."""
    x1 = np.repeat(np.arange(-128, 128, dtype=np.int8), 256)
    x2 = np.tile(np.arange(-128, 128, dtype=np.int8), 256)
    model, inputs = binary_model("DIV", "INT8", x1.shape, x1.shape, x1.shape, x1, x2,
                                 tuple(zip(scales_, zps)))
    compare_with_tflm(oracle, model, inputs, context=f"DIV {scales_} {zps}")


def test_div_int32_division_by_zero_is_an_error():
    model, inputs = binary_model("DIV", "INT32", (3,), (3,), (3,), np.array([1, 2, 3], np.int32),
                                 np.array([1, 0, 3], np.int32))
    with pytest.raises(KernelError, match="division by zero"):
        run_ours(model, inputs)


def _model(t1="INT8", t2="INT8", to="INT8", q1=(0.1, 0), q2=(0.1, 0), qo=(0.1, 0),
           s1=(2, 3), s2=(2, 3), so=(2, 3)):
    return single_op_model("DIV", [TensorDef(s1, t1, q1), TensorDef(s2, t2, q2)], [TensorDef(so, to, qo)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(t2="INT16"), "must match"),
    (dict(t1="INT16", t2="INT16", to="INT16"), "only supports"),
    (dict(t1="INT64", t2="INT64", to="INT64", q1=None, q2=None, qo=None), "only supports"),
    (dict(t1="INT32", t2="INT32", to="INT32", q2=None, qo=None), "unquantized"),
    (dict(s2=(3, 2), so=(3, 2)), "do not broadcast"),
    (dict(so=(7,)), "elements"),
    (dict(qo=None), "positive scale"),
])
def test_div_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "DIV" in str(info.value)


def test_div_equal_after_padding_is_elementwise(oracle):
    x1 = np.array([1.5, -2.0, 3.0], np.float32)
    x2 = np.array([[2.0, 4.0, -1.0]], np.float32)
    model, inputs = binary_model("DIV", "FLOAT32", (3,), (1, 3), (3, 1), x1, x2)
    compare_with_tflm(oracle, model, inputs, context="DIV padded-equal shapes")
