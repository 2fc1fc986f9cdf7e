"""RESIZE_BILINEAR against TFLM: float32 (float interpolation) and int8 (TFLM's integer
1/1024 interpolation), up- and down-sampling, align_corners, half_pixel_centers; TFLM's
prepare errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_both_reject, assert_rejected, assert_same_min_arena, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model

pytestmark = pytest.mark.oracle


@st.composite
def resize_bilinear_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    b, h, w, d = (draw(st.integers(1, 3)), draw(st.integers(1, 12)), draw(st.integers(1, 12)),
                  draw(st.integers(1, 4)))
    oh, ow = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    mode = draw(st.sampled_from(["plain", "align_corners", "half_pixel_centers"]))
    q = quant_or_none(draw, dtype)
    x = any_array(draw, (b, h, w, d), dtype)
    event(f"{dtype} {mode}")
    model = single_op_model("RESIZE_BILINEAR",
                            [TensorDef((b, h, w, d), dtype.upper(), q),
                             TensorDef((2,), "INT32", data=np.array([oh, ow], np.int32))],
                            [TensorDef((b, oh, ow, d), dtype.upper(), q)],
                            align_corners=mode == "align_corners", half_pixel_centers=mode == "half_pixel_centers")
    return model, [x]


@given(resize_bilinear_case())
def test_resize_bilinear_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="RESIZE_BILINEAR")


@pytest.mark.parametrize("dtype", ["FLOAT32", "INT8"])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
def test_resize_bilinear_segmentation_head_size(oracle, dtype, align, half):
    """A 1x12x16x21 class map upsampled 8x (a segmentation head)."""
    rng = np.random.default_rng(11)
    x = (rng.integers(-128, 128, (1, 12, 16, 21), dtype=np.int8) if dtype == "INT8"
         else rng.uniform(-6, 6, (1, 12, 16, 21)).astype(np.float32))
    q = (0.05, 4) if dtype == "INT8" else None
    model = single_op_model("RESIZE_BILINEAR", [TensorDef(x.shape, dtype, q),
                                                TensorDef((2,), "INT32", data=np.array([96, 128], np.int32))],
                            [TensorDef((1, 96, 128, 21), dtype, q)], align_corners=align, half_pixel_centers=half)
    compare_with_tflm(oracle, model, [x], arena_size=1 << 22, context="RESIZE_BILINEAR 8x")


def _model(in_shape=(1, 2, 2, 1), size=(4, 4), out_shape=(1, 4, 4, 1), dtype="FLOAT32", stype="INT32", const=True,
           out_dtype=None, **options):
    s = np.array(size).astype(stype.lower())
    return single_op_model("RESIZE_BILINEAR", [TensorDef(in_shape, dtype), TensorDef(s.shape, stype, data=s if const else None)],
                           [TensorDef(out_shape, out_dtype or dtype)], **options)


def test_resize_bilinear_errors(oracle):
    x = np.zeros((1, 2, 2, 1), np.float32)
    assert_both_reject(oracle, _model(in_shape=(2, 2, 1), out_shape=(4, 4, 1)), [x[0]], "must be 4-D")
    assert_both_reject(oracle, _model(size=((4, 4),), out_shape=(1, 4, 4, 1)), [x], "the size must be 1-D")
    assert_both_reject(oracle, _model(stype="INT64"), [x], "the size must be int32")
    assert_both_reject(oracle, _model(const=False), [x, np.array([4, 4], np.int32)], "Non-constant >size<")
    assert_both_reject(oracle, _model(align_corners=True, half_pixel_centers=True), [x],
                       "If half_pixel_centers is True, align_corners must be False.")
    assert_both_reject(oracle, _model(dtype="INT16"), [x.astype(np.int16)], "Output type is 7, requires float or int8.",
                       tflm_stage="invoke")
    # TFLM writes the size it reads, whatever the output's shape or type
    assert_rejected(_model(out_shape=(1, 4, 5, 1)), [x], "is not (batch, height, width, depth)")
    assert_rejected(_model(out_dtype="INT8"), [x], "input type FLOAT32 and output type INT8 differ")
    # 1 -> 2048 rows: the integer scale rounds to 1/1024 and y0 reaches row 1 of 1
    wide = _model(in_shape=(1, 1, 2, 1), size=(2048, 2), out_shape=(1, 2048, 2, 1), dtype="INT8", half_pixel_centers=True)
    assert_rejected(wide, [np.zeros((1, 1, 2, 1), np.int8)], "outside the input")


def test_resize_bilinear_min_arena(oracle):
    assert_same_min_arena(oracle, _model(dtype="INT8"), [np.zeros((1, 2, 2, 1), np.int8)])
