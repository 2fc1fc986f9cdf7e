"""SLICE against TFLM: float32, int32, int8, int16, bool on 1-D to 5-D tensors; int32 /
int64 begin and size, constant or given at run time, size -1; an output of another shape
with the slice's element count; clear errors for what TFLM cannot do."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int32", "int8", "int16", "bool"]


@st.composite
def slice_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(shapes(1, 5, 1, 7))
    begin, size, out_shape = [], [], []
    for d in shape:
        b = draw(st.integers(0, d - 1))
        n = draw(st.integers(1, d - b))
        out_shape.append(n)
        if n == d - b and draw(st.booleans()):
            n = -1
        begin.append(b)
        size.append(n)
    out_shape = tuple(out_shape)
    if draw(st.integers(0, 9)) == 0:
        out_shape = (int(np.prod(out_shape)),)   # TFLM writes the slice flat
    index_type = draw(st.sampled_from(["INT32", "INT64"]))
    runtime_index = draw(st.integers(0, 3)) == 0
    q = quant_or_none(draw, dtype)
    x = any_array(draw, shape, dtype)
    event(f"{dtype} index={index_type} runtime={runtime_index}")
    npt = np.int32 if index_type == "INT32" else np.int64
    b_arr, s_arr = np.array(begin, npt), np.array(size, npt)
    inputs = [TensorDef(shape, dtype.upper(), q),
              TensorDef((len(shape),), index_type, data=None if runtime_index else b_arr),
              TensorDef((len(shape),), index_type, data=None if runtime_index else s_arr)]
    runtime = [x, b_arr, s_arr] if runtime_index else [x]
    model = single_op_model("SLICE", inputs, [TensorDef(out_shape, dtype.upper(), q)])
    return model, runtime


@given(slice_case())
def test_slice_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SLICE")


def _model(begin, size, out_shape, dtype="FLOAT32", index_type="INT32", const=True):
    b, s = np.array(begin), np.array(size)
    return single_op_model("SLICE", [TensorDef((4, 6), dtype),
                                     TensorDef(b.shape, index_type, data=b if const else None),
                                     TensorDef(s.shape, index_type, data=s if const else None)],
                           [TensorDef(out_shape, dtype)])


def test_slice_errors():
    x = np.zeros((4, 6), np.float32)
    assert_rejected(_model([3, 0], [2, 6], (2, 6)), [x], "slice [3, 5) of axis 0 leaves the input")
    assert_rejected(_model([-1, 0], [1, 6], (1, 6)), [x], "slice [-1, 0) of axis 0")
    assert_rejected(_model([0, 0], [2, 6], (3, 6)), [x], "the slice has 12 elements, the output 18")
    assert_rejected(_model([0], [2], (2, 6)), [x], "one value per input dimension")
    assert_rejected(_model([0, 0], [2, 6], (2, 6), index_type="INT16"), [x], "int32 or both int64")
    assert_rejected(_model([0, 0], [2, 6], (2, 6), dtype="UINT8"), [x.astype(np.uint8)],
                    "Input tensor type UINT8 (3) not supported")


def test_slice_runtime_begin_out_of_range():
    model = _model([0, 0], [2, 6], (2, 6), const=False)
    with pytest.raises(KernelError, match="leaves the input"):
        run_ours(model, [np.zeros((4, 6), np.float32), np.array([3, 0], np.int32), np.array([2, 6], np.int32)])
