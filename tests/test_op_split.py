"""SPLIT and SPLIT_V against TFLM: float32 / int8 / int16 / int32, 1-D to 5-D, positive
and negative axes (int32 or int64 axis tensors, scalar or 1-element), 1 to 6 outputs,
unequal SPLIT_V pieces; clear errors for inconsistent models."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

DTYPES = ["float32", "int8", "int16", "int32"]


def _axis_tensor(draw, axis):
    axis_type = draw(st.sampled_from(["INT32", "INT32", "INT64"]))
    axis_shape = draw(st.sampled_from([(), (1,)]))
    return TensorDef(axis_shape, axis_type, data=np.full(axis_shape, axis))


@st.composite
def split_case(draw, op):
    dtype = draw(st.sampled_from(DTYPES))
    shape = list(draw(shapes(1, 5, 1, 5)))
    axis = draw(st.integers(0, len(shape) - 1))
    n = draw(st.integers(1, 6))
    if op == "SPLIT":
        piece = draw(st.integers(1, 3))
        pieces = [piece] * n
    else:
        pieces = [draw(st.integers(1, 4)) for _ in range(n)]
    shape[axis] = sum(pieces)
    shape = tuple(shape)
    outs = [shape[:axis] + (p,) + shape[axis + 1:] for p in pieces]
    if draw(st.booleans()):
        axis -= len(shape)
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} outputs={n}")
    out_defs = [TensorDef(s, dtype.upper(), q) for s in outs]
    if op == "SPLIT":
        inputs = [_axis_tensor(draw, axis), TensorDef(shape, dtype.upper(), q)]
        model = single_op_model("SPLIT", inputs, out_defs, num_splits=n)
    else:
        sizes = list(pieces)
        if n > 1 and draw(st.booleans()):
            sizes[draw(st.integers(0, n - 1))] = -1
        inputs = [TensorDef(shape, dtype.upper(), q),
                  TensorDef((n,), "INT32", data=np.array(sizes, np.int32)), _axis_tensor(draw, axis)]
        model = single_op_model("SPLIT_V", inputs, out_defs, num_splits=n)
    return model, [x]


@pytest.mark.oracle
@given(split_case("SPLIT"))
def test_split_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SPLIT")


@pytest.mark.oracle
@given(split_case("SPLIT_V"))
def test_split_v_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SPLIT_V")


def _split(axis, outs, dtype="FLOAT32", const=True):
    a = np.array(axis, np.int32)
    return single_op_model("SPLIT", [TensorDef((), "INT32", data=a if const else None),
                                     TensorDef((4, 6), dtype)],
                           [TensorDef(s, dtype) for s in outs], num_splits=len(outs))


def test_split_errors():
    x = np.zeros((4, 6), np.float32)
    assert_rejected(_split(2, [(2, 6), (2, 6)]), [x], "axis 2 is out of range")
    assert_rejected(_split(-3, [(2, 6), (2, 6)]), [x], "axis -3 is out of range")
    assert_rejected(_split(0, [(2, 6), (3, 6)]), [x], "different sizes")
    assert_rejected(_split(0, [(1, 6), (1, 6)]), [x], "do not add up")
    assert_rejected(_split(0, [(2, 5), (2, 6)]), [x], "off axis 0")
    assert_rejected(_split(0, [(2, 6), (2, 6)], const=False), [np.array(0, np.int32), x],
                    "Non-constant >axis<")
    assert_rejected(_split(0, [(2, 6), (2, 6)], dtype="BOOL"), [x.astype(bool)],
                    "Type BOOL currently not supported")


def test_split_v_errors():
    x = np.zeros((4, 6), np.float32)
    m = single_op_model("SPLIT_V", [TensorDef((4, 6), "FLOAT32"),
                                    TensorDef((2,), "INT32", data=np.array([1, 2], np.int32)),
                                    TensorDef((), "INT32", data=np.array(1, np.int32))],
                        [TensorDef((4, 1), "FLOAT32"), TensorDef((4, 2), "FLOAT32")], num_splits=2)
    assert_rejected(m, [x], "do not add up to the input's 6")


@pytest.mark.oracle
def test_split_min_arena(oracle):
    assert_same_min_arena(oracle, _split(1, [(4, 2)] * 3), [np.zeros((4, 6), np.float32)])
