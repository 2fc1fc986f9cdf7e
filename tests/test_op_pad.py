"""PAD / PADV2 against TFLM: float32, int8, int16, int32 on 1-D to 5-D tensors; no pad
value (0, or the int8 output zero point), constant or run-time pad values (quantized
like the output for int8), negative paddings, int64 paddings (which TFLM reads as int32
words); clear errors for what TFLM rejects."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import scales, shapes

pytestmark = pytest.mark.oracle


@st.composite
def pad_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16", "int32"]))
    op = draw(st.sampled_from(["PAD", "PADV2"]))
    shape = draw(shapes(1, 5, 1, 6))
    negative = draw(st.integers(0, 4)) == 0
    pads = []
    for d in shape:
        lo = -2 if negative else 0
        b = draw(st.integers(lo, 3))
        a = draw(st.integers(max(lo, 1 - d - b), 3))
        pads.append((b, a))
    out_shape = tuple(d + b + a for d, (b, a) in zip(shape, pads))
    q = None
    if dtype == "int8":
        q = (draw(scales(1e-3, 1.0)), draw(st.integers(-128, 127)))
    elif dtype == "int16" and draw(st.booleans()):
        q = (draw(scales(1e-4, 1e-2)), 0)
    value_kind = draw(st.sampled_from(["none", "const", "input"])) if op == "PADV2" or draw(st.booleans()) else "none"
    if op == "PADV2" and value_kind == "none":
        value_kind = "const"
    event(f"{op} {dtype} value={value_kind} negative={negative}")
    x = any_array(draw, shape, dtype)
    value = any_array(draw, draw(st.sampled_from([(), (1,)])), dtype)
    inputs = [TensorDef(shape, dtype.upper(), q),
              TensorDef((len(shape), 2), "INT32", data=np.array(pads, np.int32))]
    runtime = [x]
    if value_kind == "const":
        inputs.append(TensorDef(value.shape, dtype.upper(), q, data=value))
    elif value_kind == "input":
        inputs.append(TensorDef(value.shape, dtype.upper(), q))
        runtime.append(value)
    model = single_op_model(op, inputs, [TensorDef(out_shape, dtype.upper(), q)])
    return model, runtime


@given(pad_case())
def test_pad_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="PAD")


def test_pad_int64_paddings_read_as_int32_words(oracle):
    """TFLM reads int64 paddings [[1, 0], [0, 1]] as the int32 words 1, 0, 0, 0."""
    pads = np.array([[1, 0], [0, 1]], np.int64)
    model = single_op_model("PAD", [TensorDef((2, 3), "FLOAT32"), TensorDef((2, 2), "INT64", data=pads)],
                            [TensorDef((3, 3), "FLOAT32")])
    ours, _ = compare_with_tflm(oracle, model, [np.arange(6, dtype=np.float32).reshape(2, 3) + 1],
                                context="PAD int64")
    assert ours[0][0].tolist() == [0, 0, 0]


def test_pad_errors():
    x = np.zeros((2, 3), np.float32)
    p = TensorDef((2, 2), "INT32", data=np.array([[1, 0], [0, 1]], np.int32))
    bad = single_op_model("PAD", [TensorDef((2, 3), "FLOAT32"), p], [TensorDef((3, 3), "FLOAT32")])
    assert_rejected(bad, [x], "output dimension 1 is 3, expected 3 + 0 + 1 = 4")
    dyn = single_op_model("PAD", [TensorDef((2, 3), "FLOAT32"), TensorDef((2, 2), "INT32")],
                          [TensorDef((3, 4), "FLOAT32")])
    assert_rejected(dyn, [x, np.zeros((2, 2), np.int32)], "Non-constant >paddings<")
    u8 = single_op_model("PAD", [TensorDef((2, 3), "UINT8"), p], [TensorDef((3, 4), "UINT8")])
    assert_rejected(u8, [x.astype(np.uint8)], "Type UINT8 not currently supported by Pad")
    qv = single_op_model("PADV2", [TensorDef((2, 3), "INT8", (0.5, 1)), p,
                                   TensorDef((), "INT8", (0.25, 1), data=np.array(3, np.int8))],
                         [TensorDef((3, 4), "INT8", (0.5, 1))])
    assert_rejected(qv, [x.astype(np.int8)], "constant value scale")
    vt = single_op_model("PADV2", [TensorDef((2, 3), "FLOAT32"), p,
                                   TensorDef((), "INT32", data=np.array(3, np.int32))],
                         [TensorDef((3, 4), "FLOAT32")])
    assert_rejected(vt, [x], "constant value type INT32")
    six = single_op_model("PAD", [TensorDef((1,) * 6, "FLOAT32"),
                                  TensorDef((6, 2), "INT32", data=np.zeros((6, 2), np.int32))],
                          [TensorDef((1,) * 6, "FLOAT32")])
    assert_rejected(six, [np.zeros((1,) * 6, np.float32)], "at most 5")


def test_pad_min_arena(oracle):
    model = single_op_model("PADV2", [TensorDef((2, 3), "INT8", (0.5, 1)),
                                      TensorDef((2, 2), "INT32", data=np.array([[1, 0], [0, 1]], np.int32)),
                                      TensorDef((), "INT8", (0.5, 1), data=np.array(4, np.int8))],
                            [TensorDef((3, 4), "INT8", (0.5, 1))])
    assert_same_min_arena(oracle, model, [np.zeros((2, 3), np.int8)])
