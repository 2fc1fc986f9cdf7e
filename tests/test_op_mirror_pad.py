"""MIRROR_PAD against TFLM: float32 / int8 of rank 1 to 5, REFLECT and SYMMETRIC, int32 /
int64 paddings (constant or run-time), right paddings past the input (TFLM folds them
back in range) and right paddings that disagree with the output shape (TFLM never reads
them); TFLM's prepare errors and its scratch buffers."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_both_reject, assert_rejected, assert_same_min_arena, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle

REFLECT, SYMMETRIC = 0, 1


@st.composite
def mirror_pad_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    mode = draw(st.sampled_from([REFLECT, SYMMETRIC]))
    offset = 1 if mode == REFLECT else 0
    shape = draw(shapes(1, 5, 1, 5))
    pads, out_shape = [], []
    for d in shape:
        left = draw(st.integers(0, d - offset))
        right = draw(st.integers(0, d - offset)) if draw(st.integers(0, 3)) else draw(st.integers(0, 2 * d + 2))
        extent = d + left + right
        if draw(st.integers(0, 5)) == 0:          # TFLM takes the extent from the output shape
            right = draw(st.integers(-3, 9))
        pads.append((left, right))
        out_shape.append(extent)
    ptype = draw(st.sampled_from(["int32", "int64"]))
    pads = np.array(pads, ptype)
    const = draw(st.booleans())
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} {'REFLECT' if mode == REFLECT else 'SYMMETRIC'} {ptype} const={const}")
    model = single_op_model("MIRROR_PAD", [TensorDef(shape, dtype.upper(), q),
                                           TensorDef(pads.shape, ptype.upper(), data=pads if const else None)],
                            [TensorDef(tuple(out_shape), dtype.upper(), q)], mode=mode)
    return model, [x] if const else [x, pads]


@given(mirror_pad_case())
def test_mirror_pad_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="MIRROR_PAD")


def test_mirror_pad_large(oracle):
    """A 1x33x47x16 int8 feature map reflected by 3 on each side (a conv's padding)."""
    x = np.random.default_rng(2).integers(-128, 128, (1, 33, 47, 16), dtype=np.int8)
    pads = np.array([[0, 0], [3, 3], [3, 3], [0, 0]], np.int32)
    model = single_op_model("MIRROR_PAD", [TensorDef(x.shape, "INT8", (0.1, -3)), TensorDef((4, 2), "INT32", data=pads)],
                            [TensorDef((1, 39, 53, 16), "INT8", (0.1, -3))], mode=REFLECT)
    compare_with_tflm(oracle, model, [x], context="MIRROR_PAD large")


def _model(shape=(3, 4), pads=((1, 1), (2, 2)), out_shape=(5, 8), dtype="FLOAT32", ptype="INT32", out_dtype=None,
           mode=REFLECT, pads_shape=None):
    p = np.array(pads, ptype.lower())
    if pads_shape is not None:
        p = p.reshape(pads_shape)
    return single_op_model("MIRROR_PAD", [TensorDef(shape, dtype), TensorDef(p.shape, ptype, data=p)],
                           [TensorDef(out_shape, out_dtype or dtype)], mode=mode)


def test_mirror_pad_errors(oracle):
    x = np.zeros((3, 4), np.float32)
    assert_both_reject(oracle, _model(pads_shape=(4,)), [x], "the paddings must be 2-D")
    assert_both_reject(oracle, _model(pads=((1, 1), (2, 2), (0, 0))), [x], "3 rows for an input of 2 dimensions")
    assert_both_reject(oracle, _model(dtype="INT16"), [x.astype(np.int16)], "type INT16 is not supported",
                       tflm_stage="invoke")
    # TFLM reads outside the input (left padding past the edge) or ignores such paddings
    assert_rejected(_model(pads=((3, 1), (2, 2)), out_shape=(7, 8)), [x], "left padding 3 reads outside the input")
    assert_rejected(_model(ptype="INT8"), [x], "paddings of type INT8 are not supported")
    assert_rejected(_model(out_shape=(5, 8, 1)), [x], "must have the same number of dimensions")


def test_mirror_pad_min_arena(oracle):
    """Two scratch buffers of rank x 4 bytes in the head."""
    model = _model(shape=(2, 3, 4), pads=((1, 0), (0, 2), (1, 1)), out_shape=(3, 5, 6), dtype="INT8", mode=SYMMETRIC)
    assert_same_min_arena(oracle, model, [np.zeros((2, 3, 4), np.int8)])
