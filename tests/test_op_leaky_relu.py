"""LEAKY_RELU against TFLM: float32, int8 and int16, positive / zero / negative / > 1
alphas, rescaling between input and output quantization; plus clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

OP = "LEAKY_RELU"

alphas = (st.sampled_from([0.2, 0.01, 0.0, 1.0, -0.5, 3.0])
          | st.floats(-2.0, 2.0, width=32, allow_subnormal=False))


@st.composite
def leaky_relu_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    event(kind)
    shape = draw(shapes(0, 4, 1, 8))
    alpha = draw(alphas)
    if kind == "float32":
        x = arrays(draw, shape, "float32", -10.0, 10.0)
        qin = qout = None
    else:
        zp = st.integers(-128, 127) if kind == "int8" else st.integers(-300, 300)
        qin = (draw(scales(1e-3, 0.5)), draw(zp))
        qout = (draw(scales(1e-3, 0.5)), draw(zp))
        x = arrays(draw, shape, kind)
    tt = kind.upper()
    model = single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)], alpha=alpha)
    return model, [x]


@given(leaky_relu_case())
def test_leaky_relu_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_leaky_relu_every_int8_input(oracle):
    x = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    for alpha in (0.1, -0.3, 0.0, 2.5):
        model = single_op_model(OP, [TensorDef((4, 64), "INT8", (0.05, 7))],
                                [TensorDef((4, 64), "INT8", (0.04, -20))], alpha=alpha)
        compare_with_tflm(oracle, model, [x], context=f"{OP} alpha {alpha}")


def test_leaky_relu_float_special_values(oracle):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1e-45, 3e38, -3e38], np.float32)
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")], alpha=1.5)
    compare_with_tflm(oracle, model, [x], context=OP)


@pytest.mark.parametrize("in_type, out_type, qin, qout, message", [
    ("INT8", "INT16", (0.1, 0), (0.1, 0), "differ"),
    ("INT32", "INT32", None, None, "Only float32, int8 and int16"),
    ("INT8", "INT8", None, (0.1, 0), "positive input and output scales"),
])
def test_leaky_relu_rejects_bad_models(in_type, out_type, qin, qout, message):
    model = single_op_model(OP, [TensorDef((2, 2), in_type, qin)], [TensorDef((2, 2), out_type, qout)],
                            alpha=0.1)
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
