"""MUL against TFLM: float32 (with special values), int32 (wrapping products, fused
activations), int8 and int16 (zero points 0), broadcasting up to 6-D, constant operands;
plus clear errors for models TFLM cannot run."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import binary_model, broadcast_shapes, draw_const, special_floats
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import activations, arrays, scales

pytestmark = pytest.mark.oracle


@st.composite
def mul_case(draw):
    dtype = draw(st.sampled_from(["int8", "int16", "float32", "int32"]))
    event(dtype)
    s1, s2, out = draw(broadcast_shapes())
    act = draw(activations)
    q = (None, None, None)
    if dtype == "float32":
        x1, x2 = special_floats(draw, s1), special_floats(draw, s2)
    elif dtype == "int32":
        lim = draw(st.sampled_from([(-100, 100), (-50000, 50000), (None, None)]))
        x1, x2 = arrays(draw, s1, dtype, *lim), arrays(draw, s2, dtype, *lim)
    else:
        if dtype == "int8":
            zps = [draw(st.integers(-128, 127)) for _ in range(3)]
            s = [draw(scales(1e-3, 1.0)) for _ in range(3)]
        else:
            zps = [0, 0, 0]
            s = [draw(scales(1e-4, 1e-2)) for _ in range(2)]
            s.append(draw(scales(1e-6, 1e-2)))
        q = tuple(zip(s, zps))
        x1, x2 = arrays(draw, s1, dtype), arrays(draw, s2, dtype)
    return binary_model("MUL", dtype.upper(), s1, s2, out, x1, x2, q, draw_const(draw),
                        fused_activation_function=act)


@given(mul_case())
def test_mul_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="MUL")


def test_mul_multiplier_is_computed_in_double(oracle):
    """Every int8 pair, with scales whose multiplier rounds differently through float32."""
    x1 = np.repeat(np.arange(-128, 128, dtype=np.int8), 256)
    x2 = np.tile(np.arange(-128, 128, dtype=np.int8), 256)
    rng = np.random.default_rng(3)
    for _ in range(3):
        s = [float(v) for v in rng.uniform(1e-2, 1, 3).astype(np.float32)]
        zp = [int(v) for v in rng.integers(-128, 128, 3)]
        model, inputs = binary_model("MUL", "INT8", x1.shape, x1.shape, x1.shape, x1, x2,
                                     tuple(zip(s, zp)))
        compare_with_tflm(oracle, model, inputs, context=f"MUL {s} {zp}")


def test_mul_int32_wraps(oracle):
    x1 = np.array([2**31 - 1, -2**31, 65536, -65536, 123456789, 7], np.int32)
    x2 = np.array([2, -1, 65536, 65537, -987654321, -3], np.int32)
    for act in (0, 1, 3):
        model, inputs = binary_model("MUL", "INT32", x1.shape, x2.shape, x1.shape, x1, x2,
                                     fused_activation_function=act)
        compare_with_tflm(oracle, model, inputs, context="MUL int32")


def _model(t1="INT8", t2="INT8", to="INT8", q1=(0.1, 0), q2=(0.1, 0), qo=(0.1, 0),
           s1=(2, 3), s2=(2, 3), so=(2, 3)):
    return single_op_model("MUL", [TensorDef(s1, t1, q1), TensorDef(s2, t2, q2)], [TensorDef(so, to, qo)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(t2="INT16"), "differ"),
    (dict(to="INT16"), "output type"),
    (dict(t1="UINT8", t2="UINT8", to="UINT8"), "not supported"),
    (dict(t1="INT64", t2="INT64", to="INT64", q1=None, q2=None, qo=None), "not supported"),
    (dict(t1="INT16", t2="INT16", to="INT16", q1=(0.1, 3)), "zero points of 0"),
    (dict(s2=(3, 2), so=(3, 2)), "do not broadcast"),
    (dict(s2=(3,), so=(3, 2)), "output has shape"),
    (dict(so=(7,)), "elements"),
    (dict(q2=None), "positive scale"),
])
def test_mul_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "MUL" in str(info.value)


def test_mul_equal_after_padding_is_elementwise(oracle):
    """(3,) x (1, 3) is no broadcast for TFLM's MUL: any output with 3 elements works."""
    x1 = np.array([1.5, -2.0, 3.0], np.float32)
    x2 = np.array([[2.0, 4.0, -1.0]], np.float32)
    model, inputs = binary_model("MUL", "FLOAT32", (3,), (1, 3), (3, 1), x1, x2)
    compare_with_tflm(oracle, model, inputs, context="MUL padded-equal shapes")
