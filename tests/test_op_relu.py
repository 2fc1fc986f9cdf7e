"""RELU against TFLM: float32, int8 and int16 (requantising between input and output
quantization); plus clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

OP = "RELU"


@st.composite
def relu_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    event(kind)
    shape = draw(shapes(0, 4, 1, 8))
    if kind == "float32":
        x = arrays(draw, shape, "float32", -10.0, 10.0)
        qin = qout = None
    elif kind == "int8":
        qin = (draw(scales(1e-3, 0.5)), draw(st.integers(-128, 127)))
        qout = draw(st.just(qin) | st.tuples(scales(1e-3, 0.5), st.integers(-128, 127)))
        x = arrays(draw, shape, "int8")
    else:
        qin = (draw(scales(1e-4, 0.05)), 0)
        qout = draw(st.just(qin) | st.tuples(scales(1e-4, 0.05), st.just(0)))
        x = arrays(draw, shape, "int16")
    tt = kind.upper()
    model = single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)])
    return model, [x]


@given(relu_case())
def test_relu_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_relu_every_int8_input(oracle):
    x = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    for qin, qout in [((0.05, 7), (0.04, -20)), ((0.1, -128), (0.1, -128)), ((0.02, 100), (0.5, 127))]:
        model = single_op_model(OP, [TensorDef((4, 64), "INT8", qin)], [TensorDef((4, 64), "INT8", qout)])
        compare_with_tflm(oracle, model, [x], context=f"{OP} {qin} -> {qout}")


def test_relu_float_special_values(oracle):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1e-45], np.float32)
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)


@pytest.mark.parametrize("in_type, out_type, qin, qout, message", [
    ("INT8", "INT16", (0.1, 0), (0.1, 0), "differ"),
    ("INT32", "INT32", None, None, "Only float32/int8/int16"),
    ("INT16", "INT16", (0.1, 1), (0.1, 0), "zero points of 0"),
    ("INT8", "INT8", (0.1, 0), None, "positive scale"),
])
def test_relu_rejects_bad_models(in_type, out_type, qin, qout, message):
    model = single_op_model(OP, [TensorDef((2, 2), in_type, qin)], [TensorDef((2, 2), out_type, qout)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
