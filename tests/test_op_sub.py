"""SUB against TFLM: float32 (with special values), int32 (wrapping, fused activations),
int8 and int16 (general rescaling), broadcasting up to
6-D, constant operands; plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import binary_model, broadcast_shapes, draw_const, special_floats
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import activations, arrays, scales

pytestmark = pytest.mark.oracle


@st.composite
def sub_case(draw):
    dtype = draw(st.sampled_from(["int8", "int16", "float32", "int32"]))
    event(dtype)
    s1, s2, out = draw(broadcast_shapes())
    act = draw(activations)
    q = (None, None, None)
    if dtype == "float32":
        x1, x2 = special_floats(draw, s1), special_floats(draw, s2)
    elif dtype == "int32":
        big = draw(st.booleans())
        lim = (None, None) if big else (-1000, 1000)
        x1, x2 = arrays(draw, s1, dtype, *lim), arrays(draw, s2, dtype, *lim)
    else:
        zp = (lambda: draw(st.integers(-128, 127))) if dtype == "int8" else \
             (lambda: draw(st.sampled_from([0, 0, 0, 5, -7])))
        s = [draw(scales(1e-3, 1.0)) for _ in range(3)]
        # keep 2 * max(input scales) / (2^left_shift * output scale) below 1 (TFLM aborts)
        s[2] = max(s[2], float(np.float32(2.5 * max(s[0], s[1]) / (1 << 15))))
        q = tuple((sc, zp()) for sc in s)
        x1, x2 = arrays(draw, s1, dtype), arrays(draw, s2, dtype)
    return binary_model("SUB", dtype.upper(), s1, s2, out, x1, x2, q, draw_const(draw),
                        fused_activation_function=act)


@given(sub_case())
def test_sub_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SUB")


def test_sub_multipliers_are_computed_in_double(oracle):
    """Scales for which float32 multipliers (TFLM's 2026-08 source) and double ones (the
    package, as ADD) give different results on some of the 65536 int8 pairs."""
    x1 = np.repeat(np.arange(-128, 128, dtype=np.int8), 256)
    x2 = np.tile(np.arange(-128, 128, dtype=np.int8), 256)
    q = ((0.9807564616203308, -4), (0.9616955518722534, -53), (0.7250651717185974, 10))
    model, inputs = binary_model("SUB", "INT8", x1.shape, x2.shape, x1.shape, x1, x2, q)
    compare_with_tflm(oracle, model, inputs, context="SUB double multipliers")


def _model(t1="INT8", t2="INT8", to="INT8", q1=(0.1, 0), q2=(0.1, 0), qo=(0.1, 0),
           s1=(2, 3), s2=(2, 3), so=(2, 3)):
    return single_op_model("SUB", [TensorDef(s1, t1, q1), TensorDef(s2, t2, q2)], [TensorDef(so, to, qo)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(t2="INT16"), "must match"),
    (dict(t1="UINT8", t2="UINT8", to="UINT8"), "not supported"),
    (dict(t1="INT64", t2="INT64", to="INT64", q1=None, q2=None, qo=None), "not supported"),
    (dict(s2=(3, 2), so=(3, 2)), "do not broadcast"),
    (dict(s2=(1, 3), so=(3, 2)), "output has shape"),
    (dict(so=(7,)), "elements"),
    (dict(q1=None), "positive scale"),
    (dict(qo=(1e-9, 0)), "must be in"),
    (dict(t1="INT32", t2="INT32", to="INT32", qo=None, q2=None), "unquantized"),
    (dict(s1=(1, 1, 1, 1, 1, 1, 2), s2=(2,), so=(1, 1, 1, 1, 1, 1, 2)), "at most 6"),
])
def test_sub_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "SUB" in str(info.value)
