"""PACK and UNPACK against TFLM: PACK float32 / int8 / int16 / int32 / int64, UNPACK
float32 / int32 / int16 / int8; 1 to 6 values, positive and negative axes, constant
inputs; clear errors for inconsistent models."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes


@st.composite
def pack_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16", "int32", "int64"]))
    shape = draw(shapes(0, 4, 1, 5))
    n = draw(st.integers(1, 6))
    axis = draw(st.integers(0, len(shape)))
    out_shape = shape[:axis] + (n,) + shape[axis:]
    if draw(st.booleans()):
        axis -= len(out_shape)
    q = quant_or_none(draw, dtype)
    event(f"{dtype} n={n}")
    inputs, runtime = [], []
    for _ in range(n):
        x = any_array(draw, shape, dtype)
        const = draw(st.integers(0, 5)) == 0
        inputs.append(TensorDef(shape, dtype.upper(), q, data=x if const else None))
        if not const:
            runtime.append(x)
    model = single_op_model("PACK", inputs, [TensorDef(out_shape, dtype.upper(), q)],
                            values_count=n, axis=axis)
    return model, runtime


@st.composite
def unpack_case(draw):
    dtype = draw(st.sampled_from(["float32", "int32", "int16", "int8"]))
    shape = draw(shapes(1, 5, 1, 5))
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    out_shape = shape[:axis] + shape[axis + 1:]
    if draw(st.booleans()):
        axis -= len(shape)
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} n={n}")
    model = single_op_model("UNPACK", [TensorDef(shape, dtype.upper(), q)],
                            [TensorDef(out_shape, dtype.upper(), q) for _ in range(n)], num=n, axis=axis)
    return model, [x]


@pytest.mark.oracle
@given(pack_case())
def test_pack_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="PACK")


@pytest.mark.oracle
@given(unpack_case())
def test_unpack_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="UNPACK")


def test_pack_errors():
    x = np.zeros((2, 3), np.float32)
    ins = [TensorDef((2, 3), "FLOAT32"), TensorDef((2, 3), "FLOAT32")]
    assert_rejected(single_op_model("PACK", ins, [TensorDef((2, 2, 3), "FLOAT32")], values_count=3, axis=0),
                    [x, x], "values_count 3")
    assert_rejected(single_op_model("PACK", ins, [TensorDef((2, 3, 2), "FLOAT32")], values_count=2, axis=1),
                    [x, x], "output dimension 1 is 3")
    assert_rejected(single_op_model("PACK", ins, [TensorDef((2, 2, 3), "FLOAT32")], values_count=2, axis=3),
                    [x, x], "axis 3 is out of range")
    assert_rejected(single_op_model("PACK", [TensorDef((2, 3), "BOOL")] * 2, [TensorDef((2, 2, 3), "BOOL")],
                                    values_count=2, axis=0), [x.astype(bool)] * 2, "'BOOL' is not supported")
    assert_rejected(single_op_model("PACK", [TensorDef((2, 3), "FLOAT32"), TensorDef((3, 3), "FLOAT32")],
                                    [TensorDef((2, 2, 3), "FLOAT32")], values_count=2, axis=0),
                    [x, np.zeros((3, 3), np.float32)], "input 1 of shape (3, 3)")


def test_unpack_errors():
    x = np.zeros((2, 3), np.float32)
    outs = [TensorDef((3,), "FLOAT32"), TensorDef((3,), "FLOAT32")]
    assert_rejected(single_op_model("UNPACK", [TensorDef((2, 3), "FLOAT32")], outs, num=3, axis=0), [x],
                    "num 3 must be the number of outputs")
    assert_rejected(single_op_model("UNPACK", [TensorDef((2, 3), "FLOAT32")], outs, num=2, axis=1), [x],
                    "input dimension 1 is 3")
    assert_rejected(single_op_model("UNPACK", [TensorDef((2, 3), "INT64")],
                                    [TensorDef((3,), "INT64")] * 2, num=2, axis=0),
                    [x.astype(np.int64)], "'INT64' is not supported by unpack")


@pytest.mark.oracle
def test_pack_uses_first_values_count_inputs(oracle):
    """TFLM packs only the first values_count inputs (the others are never read)."""
    xs = [np.full((2, 3), i, np.int16) for i in range(3)]
    model = single_op_model("PACK", [TensorDef((2, 3), "INT16")] * 3, [TensorDef((2, 2, 3), "INT16")],
                            values_count=2, axis=1)
    ours, _ = compare_with_tflm(oracle, model, xs, context="PACK values_count < inputs")
    assert ours[0][:, 1].tolist() == [[1, 1, 1], [1, 1, 1]]
