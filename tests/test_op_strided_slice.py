"""STRIDED_SLICE against TFLM: float32, int8, int16, int32, bool on 1-D to 4-D tensors;
positive / negative / out-of-range begin and end, strides of both signs, begin / end /
shrink masks (the ellipsis and new-axis masks and the offset option, which TFLM
ignores, are set at random too); int64 index tensors (read by TFLM as int32 words);
clear errors for what TFLM rejects."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int8", "int16", "int32", "bool"]


def expected_shape(shape, begins, ends, strides, begin_mask, end_mask, shrink_mask):
    """The output shape by numpy's slicing rules (which TFLite's follow)."""
    index = []
    for axis, (b, e, s) in enumerate(zip(begins, ends, strides)):
        if shrink_mask >> axis & 1:
            index.append(0)   # validity of the shrunk index is checked by the caller
            continue
        index.append(slice(None if begin_mask >> axis & 1 else b,
                           None if end_mask >> axis & 1 else e, s))
    return np.empty(shape, np.int8)[tuple(index)].shape


@st.composite
def strided_slice_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(shapes(1, 4, 1, 7))
    dims = len(shape)
    begins, ends, strides = [], [], []
    for d in shape:
        begins.append(draw(st.integers(-d - 2, d + 2)))
        ends.append(draw(st.integers(-d - 2, d + 2)))
        strides.append(draw(st.sampled_from([1, 1, 1, 2, 3, -1, -1, -2, -3])))
    bits = st.integers(0, (1 << dims) - 1)
    begin_mask, end_mask = draw(bits), draw(bits)
    shrink = 0
    if draw(st.booleans()):
        for axis, (b, s, d) in enumerate(zip(begins, strides, shape)):
            start = (0 if s > 0 else d - 1) if begin_mask >> axis & 1 else (b + d if b < 0 else b)
            if 0 <= start < d and s > 0 and draw(st.booleans()):
                shrink |= 1 << axis
    out_shape = expected_shape(shape, begins, ends, strides, begin_mask, end_mask, shrink)
    if any(n == 0 for n in out_shape) and out_shape != (0,):
        # empty outputs other than [0] are not static shapes; take the whole axis instead
        begin_mask = end_mask = (1 << dims) - 1
        out_shape = expected_shape(shape, begins, ends, strides, begin_mask, end_mask, shrink)
    index_type = draw(st.sampled_from(["INT32"] * 5 + ["INT64"]))
    if index_type == "INT64":
        # TFLM reads int64 [a, b] as the int32 words [a, 0 or -1, b, ...]: one axis only
        shape, begins, ends, strides = shape[:1], begins[:1], ends[:1], strides[:1]
        begin_mask, end_mask, shrink = begin_mask & 1, end_mask & 1, shrink & 1
        out_shape = expected_shape(shape, begins, ends, strides, begin_mask, end_mask, shrink)
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} dims={len(shape)} shrink={bool(shrink)} index={index_type}")
    vec = lambda v: TensorDef((len(v),), index_type, data=np.array(v, np.int64))
    model = single_op_model(
        "STRIDED_SLICE", [TensorDef(shape, dtype.upper(), q), vec(begins), vec(ends), vec(strides)],
        [TensorDef(out_shape, dtype.upper(), q)],
        begin_mask=begin_mask, end_mask=end_mask, shrink_axis_mask=shrink,
        ellipsis_mask=draw(st.sampled_from([0, 0, 0, 1])), new_axis_mask=draw(st.sampled_from([0, 0, 0, 2])),
        offset=draw(st.booleans()))
    return model, [x]


@given(strided_slice_case())
def test_strided_slice_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="STRIDED_SLICE")


def _model(begin, end, strides, out_shape, in_shape=(4, 6), dtype="FLOAT32", const=True, **opts):
    vec = lambda v: TensorDef((len(v),), "INT32", data=np.array(v, np.int32) if const else None)
    return single_op_model("STRIDED_SLICE", [TensorDef(in_shape, dtype), vec(begin), vec(end), vec(strides)],
                           [TensorDef(out_shape, dtype)], **opts)


def test_strided_slice_errors():
    x = np.zeros((4, 6), np.float32)
    assert_rejected(_model([0, 0], [4, 6], [1, 0], (4, 6)), [x], "stride value has to be non-zero")
    assert_rejected(_model([0, 0], [4, 6], [1, 1], (4, 5)), [x], "differs from the slice's shape (4, 6)")
    assert_rejected(_model([0, 6], [4, 6], [1, 1], (4,), shrink_axis_mask=2), [x], "shrunk axis 1")
    assert_rejected(_model([0, 2], [4, 6], [1, -1], (4,), shrink_axis_mask=2), [x], "negative stride")
    assert_rejected(_model([0, 0], [4, 6], [1, 1], (4, 6), const=False),
                    [x, *(np.array(v, np.int32) for v in ([0, 0], [4, 6], [1, 1]))], "Non-constant >begin<")
    x5 = np.zeros((1, 1, 1, 1, 2), np.float32)
    assert_rejected(_model([0] * 5, [1] * 5, [1] * 5, (1, 1, 1, 1, 1), in_shape=x5.shape), [x5],
                    "input dim should not exceed 4")
    assert_rejected(_model([0, 0], [4, 6], [1, 1], (4, 6), dtype="INT64"), [x.astype(np.int64)],
                    "Type INT64 (4) not supported")


def test_strided_slice_min_arena(oracle):
    assert_same_min_arena(oracle, _model([0, 1], [4, 6], [2, 2], (2, 3)), [np.zeros((4, 6), np.float32)])
