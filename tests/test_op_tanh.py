"""TANH against TFLM: float32 (glibc tanhf), int8 (gemmlowp fixed point) and int16
(sigmoid table, power-of-two and general input scales); plus clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

OP = "TANH"


def int16_input_scales():
    """2^-12 and 2^-11 take TFLM's multiply-by-3 / by-6 path; others the general one."""
    return st.sampled_from([2.0 ** -12, 2.0 ** -11, 2.0 ** -13, 2.0 ** -15, 2.0 ** -10]) | scales(3e-5, 2e-3)


@st.composite
def tanh_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    event(kind)
    shape = draw(shapes(0, 4, 1, 8))
    if kind == "float32":
        spread = draw(st.sampled_from([0.5, 3.0, 12.0, 30.0]))
        x = arrays(draw, shape, "float32", -spread, spread)
        qin = qout = None
    elif kind == "int8":
        qin = (draw(scales(1e-3, 0.5) | st.sampled_from([1 / 16, 1 / 32, 0.1])), draw(st.integers(-128, 127)))
        # TFLM ignores the output quantization (writes scale 1/128, zero point 0 values)
        qout = draw(st.sampled_from([(1 / 128, 0)]) | st.tuples(scales(1e-3, 0.1), st.integers(-128, 127)))
        x = arrays(draw, shape, "int8")
    else:
        qin = (draw(int16_input_scales()), 0)
        qout = (2.0 ** -15, 0)
        x = arrays(draw, shape, "int16")
    tt = kind.upper()
    model = single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)])
    return model, [x]


@given(tanh_case())
def test_tanh_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_tanh_every_int8_and_int16_input(oracle):
    x8 = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    for scale in (1 / 32, 0.01, 0.07, 0.4):
        model = single_op_model(OP, [TensorDef((16, 16), "INT8", (scale, -5))],
                                [TensorDef((16, 16), "INT8", (1 / 128, 0))])
        compare_with_tflm(oracle, model, [x8], context=f"{OP} int8 scale {scale}")
    x16 = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    for scale in (2.0 ** -12, 2.0 ** -11, 2.0 ** -13, 1e-4):
        model = single_op_model(OP, [TensorDef((256, 256), "INT16", (scale, 0))],
                                [TensorDef((256, 256), "INT16", (2.0 ** -15, 0))])
        compare_with_tflm(oracle, model, [x16], context=f"{OP} int16 scale {scale}")


def test_tanh_float_special_values(oracle):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-20, 22.0, -21.999, 1.0, -0.9999],
                 np.float32)
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)


def _model(in_type="INT16", out_type=None, qin=(2.0 ** -12, 0), qout=(2.0 ** -15, 0), shape=(2, 3),
           out_shape=None):
    return single_op_model(OP, [TensorDef(shape, in_type, qin)],
                           [TensorDef(out_shape or shape, out_type or in_type, qout)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(out_type="INT8", qout=(1 / 128, 0)), "differ"),
    (dict(qin=(2.0 ** -12, 1)), "zero points of 0"),
    (dict(qout=(2.0 ** -15, 2)), "zero points of 0"),
    (dict(qout=(3e-5, 0)), "2\\^-15"),
    (dict(in_type="INT32", qin=None, qout=None), "not supported"),
    (dict(in_type="FLOAT32", qin=None, qout=None, out_shape=(3, 3)), "does not match"),
])
def test_tanh_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert OP in str(info.value)
