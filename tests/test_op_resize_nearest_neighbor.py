"""RESIZE_NEAREST_NEIGHBOR against TFLM: float32 / int8 / int16, up- and down-sampling,
every align_corners / half_pixel_centers combination; clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model

pytestmark = pytest.mark.oracle


@st.composite
def resize_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16"]))
    b, h, w, d = (draw(st.integers(1, 3)), draw(st.integers(1, 12)), draw(st.integers(1, 12)),
                  draw(st.integers(1, 4)))
    oh, ow = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    align, half = draw(st.booleans()), draw(st.booleans())
    q = quant_or_none(draw, dtype)
    x = any_array(draw, (b, h, w, d), dtype)
    event(f"{dtype} align={align} half={half}")
    model = single_op_model("RESIZE_NEAREST_NEIGHBOR",
                            [TensorDef((b, h, w, d), dtype.upper(), q),
                             TensorDef((2,), "INT32", data=np.array([oh, ow], np.int32))],
                            [TensorDef((b, oh, ow, d), dtype.upper(), q)],
                            align_corners=align, half_pixel_centers=half)
    return model, [x]


@given(resize_case())
def test_resize_nearest_neighbor_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="RESIZE_NEAREST_NEIGHBOR")


@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True), (True, True)])
def test_resize_nearest_neighbor_large(oracle, align, half):
    x = np.random.default_rng(5).integers(-128, 128, (1, 37, 53, 3), dtype=np.int8)
    model = single_op_model("RESIZE_NEAREST_NEIGHBOR",
                            [TensorDef(x.shape, "INT8", (0.1, 0)),
                             TensorDef((2,), "INT32", data=np.array([96, 129], np.int32))],
                            [TensorDef((1, 96, 129, 3), "INT8", (0.1, 0))],
                            align_corners=align, half_pixel_centers=half)
    compare_with_tflm(oracle, model, [x], context="RESIZE_NEAREST_NEIGHBOR large")


def _model(in_shape=(1, 2, 2, 1), size=(4, 4), out_shape=(1, 4, 4, 1), dtype="FLOAT32", stype="INT32", const=True):
    s = np.array(size)
    return single_op_model("RESIZE_NEAREST_NEIGHBOR",
                           [TensorDef(in_shape, dtype), TensorDef(s.shape, stype, data=s if const else None)],
                           [TensorDef(out_shape, dtype)])


def test_resize_nearest_neighbor_errors():
    x = np.zeros((1, 2, 2, 1), np.float32)
    assert_rejected(_model(in_shape=(2, 2, 1), out_shape=(4, 4, 1)), [x[0]], "must be 4-D")
    assert_rejected(_model(size=(4, 4, 1)), [x], "2 values")
    assert_rejected(_model(stype="INT64"), [x], "must be int32")
    assert_rejected(_model(const=False), [x, np.array([4, 4], np.int32)], "Non-constant >size<")
    assert_rejected(_model(out_shape=(1, 4, 5, 1)), [x], "is not (batches, height, width, depth)")
    assert_rejected(_model(dtype="INT32"), [x.astype(np.int32)], "INT32 (2) not supported")
