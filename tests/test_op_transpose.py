"""TRANSPOSE against TFLM: float32 / int8 / int16, 1-D to 5-D, every permutation;
int64 permutation tensors (read by TFLM as int32 words); clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def transpose_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16"]))
    shape = draw(shapes(1, 5, 1, 7))
    perm = draw(st.permutations(range(len(shape))))
    out_shape = tuple(shape[p] for p in perm)
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} ndims={len(shape)}")
    model = single_op_model("TRANSPOSE", [TensorDef(shape, dtype.upper(), q),
                                          TensorDef((len(shape),), "INT32", data=np.array(perm, np.int32))],
                            [TensorDef(out_shape, dtype.upper(), q)])
    return model, [x]


@given(transpose_case())
def test_transpose_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="TRANSPOSE")


def test_transpose_large_matches_tflm(oracle):
    x = np.random.default_rng(1).integers(-128, 128, (1, 48, 64, 16), dtype=np.int8)
    model = single_op_model("TRANSPOSE", [TensorDef(x.shape, "INT8", (0.1, 2)),
                                          TensorDef((4,), "INT32", data=np.array([0, 3, 1, 2], np.int32))],
                            [TensorDef((1, 16, 48, 64), "INT8", (0.1, 2))])
    compare_with_tflm(oracle, model, [x], context="TRANSPOSE large")


def _model(perm, out_shape, dtype="FLOAT32", perm_type="INT32", const=True):
    perm = np.array(perm)
    return single_op_model("TRANSPOSE", [TensorDef((2, 3), dtype),
                                         TensorDef(perm.shape, perm_type, data=perm if const else None)],
                           [TensorDef(out_shape, dtype)])


def test_transpose_errors():
    x = np.zeros((2, 3), np.float32)
    assert_rejected(_model([1, 2], (3, 2)), [x], "permutations array is out of bounds")
    assert_rejected(_model([0, 0], (2, 2)), [x], "repeats an axis")
    assert_rejected(_model([1, 0], (2, 3)), [x], "is not the input shape")
    assert_rejected(_model([1, 0, 2], (3, 2)), [x], "1-D with 2 entries")
    assert_rejected(_model([1, 0], (3, 2), const=False), [x, np.array([1, 0], np.int32)], "Non-constant >perm<")
    assert_rejected(_model([1, 0], (3, 2), dtype="INT32"), [x.astype(np.int32)], "Only float32, int8 and int16")


def test_transpose_int64_perm_read_as_int32_words(oracle):
    """int64 [1, 0] is the int32 words 1, 0, 0, 0: TFLM's perm is [1, 0]."""
    model = _model([1, 0], (3, 2), perm_type="INT64")
    compare_with_tflm(oracle, model, [np.arange(6, dtype=np.float32).reshape(2, 3)], context="TRANSPOSE int64")
    # int64 [0, 1] is read as [0, 0]: refused (TFLM would read outside the input)
    assert_rejected(_model([0, 1], (2, 3), perm_type="INT64"), [np.zeros((2, 3), np.float32)], "repeats")
