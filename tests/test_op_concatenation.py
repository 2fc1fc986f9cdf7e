"""CONCATENATION against TFLM: float32, int8 (shared quantization), int16, int32, int64,
bool; 1 to 10 inputs, 1-D to 6-D, positive and negative axes, constant inputs; clear
errors for what TFLM rejects (different int8 quantization, activations ...)."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import scales, shapes

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int8", "int16", "int32", "int64", "bool"]


@st.composite
def concat_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    base = draw(shapes(1, 6, 1, 5))
    axis = draw(st.integers(0, len(base) - 1))
    n = draw(st.integers(1, 10))
    sizes = [draw(st.integers(1, 4)) for _ in range(n)]
    in_shapes = [base[:axis] + (s,) + base[axis + 1:] for s in sizes]
    out_shape = base[:axis] + (sum(sizes),) + base[axis + 1:]
    q = None
    if dtype == "int8":
        q = (draw(scales(1e-3, 1.0)), draw(st.integers(-128, 127)))
    elif dtype == "int16" and draw(st.booleans()):
        q = (draw(scales(1e-4, 1e-2)), 0)
    if draw(st.booleans()):
        axis -= len(base)
    event(f"{dtype} inputs={n}")
    inputs, runtime = [], []
    for s in in_shapes:
        x = any_array(draw, s, dtype)
        const = draw(st.integers(0, 4)) == 0
        inputs.append(TensorDef(s, dtype.upper(), q, data=x if const else None))
        if not const:
            runtime.append(x)
    model = single_op_model("CONCATENATION", inputs, [TensorDef(out_shape, dtype.upper(), q)],
                            axis=axis, fused_activation_function=0)
    return model, runtime


@given(concat_case())
def test_concatenation_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="CONCATENATION")


def _model(q1=(0.5, 1), q2=(0.5, 1), qo=(0.5, 1), dtype="INT8", axis=0, act=0, out_rows=4, n=2):
    ins = [TensorDef((2, 3), dtype, q) for q in (q1, q2, q1, q2, q1, q2, q1, q2, q1, q2, q1)[:n]]
    return single_op_model("CONCATENATION", ins, [TensorDef((out_rows, 3), dtype, qo)],
                           axis=axis, fused_activation_function=act)


def test_concatenation_errors():
    x = np.zeros((2, 3), np.int8)
    assert_rejected(_model(q2=(0.25, 1)), [x, x], "int8 inputs are not rescaled")
    assert_rejected(_model(q2=(0.5, 2)), [x, x], "int8 inputs are not rescaled")
    assert_rejected(_model(act=1), [x, x], "fused activation")
    assert_rejected(_model(out_rows=5), [x, x], "add up to 4")
    assert_rejected(_model(axis=2), [x, x], "axis 2 is out of range")
    assert_rejected(_model(n=11, out_rows=22), [x] * 11, "at most 10")
    xi = x.astype(np.int16)
    assert_rejected(_model(dtype="INT16", q1=(0.5, 0), q2=(0.5, 3), qo=(0.5, 0)), [xi, xi], "zero point 3")
    xu = x.astype(np.uint8)
    assert_rejected(_model(dtype="UINT8"), [xu, xu], "does not currently support type 'UINT8'")


def test_concatenation_min_arena(oracle):
    x = np.zeros((2, 3), np.int8)
    assert_same_min_arena(oracle, _model(n=3, out_rows=6), [x, x, x])
