"""RELU6 against TFLM: float32, int8 and int16 (a clamp in the input's quantization);
plus clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

OP = "RELU6"


@st.composite
def relu6_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    event(kind)
    shape = draw(shapes(0, 4, 1, 8))
    if kind == "float32":
        x = arrays(draw, shape, "float32", -10.0, 10.0)
        qin = qout = None
    else:
        zp = st.integers(-128, 127) if kind == "int8" else st.integers(-1000, 1000)
        qin = (draw(scales(1e-3, 0.2) if kind == "int8" else scales(1e-4, 0.01)), draw(zp))
        # TFLM clamps in the input's quantization and ignores the output's
        qout = draw(st.just(qin) | st.tuples(scales(1e-3, 0.2), zp))
        x = arrays(draw, shape, kind)
    tt = kind.upper()
    model = single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)])
    return model, [x]


@given(relu6_case())
def test_relu6_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_relu6_every_int8_input(oracle):
    x = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    for q in [(0.05, 7), (0.1, -128), (0.024, -100), (0.001, 0), (1.0, 120)]:
        model = single_op_model(OP, [TensorDef((4, 64), "INT8", q)], [TensorDef((4, 64), "INT8", q)])
        compare_with_tflm(oracle, model, [x], context=f"{OP} {q}")


def test_relu6_float_special_values(oracle):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 6.0, 6.0000005, -1e-45], np.float32)
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)


@pytest.mark.parametrize("in_type, out_type, qin, message", [
    ("INT8", "INT16", (0.1, 0), "differ"),
    ("INT32", "INT32", None, "Only float32/int8/int16"),
    ("INT8", "INT8", None, "positive scale"),
])
def test_relu6_rejects_bad_models(in_type, out_type, qin, message):
    model = single_op_model(OP, [TensorDef((2, 2), in_type, qin)], [TensorDef((2, 2), out_type, qin)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
