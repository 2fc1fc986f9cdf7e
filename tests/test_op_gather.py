"""GATHER against TFLM: float32 / int8 values, int32 positions (constant or run-time),
any axis and batch_dims (negative too), 1-D to 4-D inputs and positions; clear errors
for what TFLM rejects (int64 positions, other value types ...)."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@st.composite
def gather_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    in_shape = draw(shapes(1, 4, 1, 5))
    batch_dims = draw(st.integers(0, len(in_shape) - 1))
    axis = draw(st.integers(batch_dims, len(in_shape) - 1))
    c_shape = in_shape[:batch_dims] + draw(shapes(0, 3, 1, 4))
    if len(c_shape) == 0 and draw(st.booleans()):
        c_shape = ()
    out_shape = in_shape[:axis] + c_shape[batch_dims:] + in_shape[axis + 1:]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    coords = rng.integers(0, in_shape[axis], size=c_shape).astype(np.int32)
    const = draw(st.booleans())
    q = quant_or_none(draw, dtype)
    x = any_array(draw, in_shape, dtype)
    p_axis = axis - len(in_shape) if draw(st.booleans()) else axis
    p_batch = batch_dims - len(c_shape) if batch_dims < len(c_shape) and draw(st.booleans()) else batch_dims
    event(f"{dtype} batch_dims={batch_dims} const={const}")
    model = single_op_model("GATHER", [TensorDef(in_shape, dtype.upper(), q),
                                       TensorDef(c_shape, "INT32", data=coords if const else None)],
                            [TensorDef(out_shape, dtype.upper(), q)], axis=p_axis, batch_dims=p_batch)
    return model, [x] if const else [x, coords]


@given(gather_case())
def test_gather_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="GATHER")


def test_gather_large_matches_tflm(oracle):
    """An embedding-style lookup."""
    rng = np.random.default_rng(3)
    table = rng.integers(-128, 128, (500, 64), dtype=np.int8)
    ids = rng.integers(0, 500, (1, 40)).astype(np.int32)
    model = single_op_model("GATHER", [TensorDef(table.shape, "INT8", (0.05, 0), data=table),
                                       TensorDef(ids.shape, "INT32")],
                            [TensorDef((1, 40, 64), "INT8", (0.05, 0))], axis=0, batch_dims=0)
    compare_with_tflm(oracle, model, [ids], context="GATHER embedding")


def _model(coords, out_shape, axis=0, batch_dims=0, dtype="FLOAT32", ctype="INT32", const=True):
    c = np.array(coords)
    return single_op_model("GATHER", [TensorDef((3, 4), dtype), TensorDef(c.shape, ctype, data=c if const else None)],
                           [TensorDef(out_shape, dtype)], axis=axis, batch_dims=batch_dims)


def test_gather_errors():
    x = np.zeros((3, 4), np.float32)
    assert_rejected(_model([0, 3], (2, 4)), [x], "position 3 is outside [0, 3)")
    assert_rejected(_model([0, -1], (2, 4)), [x], "position -1 is outside")
    assert_rejected(_model([0, 1], (2, 4), ctype="INT64"), [x], "Positions of type 'INT64'")
    assert_rejected(_model([0, 1], (2, 4), dtype="INT16"), [x.astype(np.int16)], "Type 'INT16' is not supported")
    assert_rejected(_model([0, 1], (2, 4), axis=2), [x], "axis 2 is out of range")
    assert_rejected(_model([0, 1], (3, 2), axis=0, batch_dims=1), [x], "batch_dims 1 exceeds")
    assert_rejected(_model([0, 1], (2, 3)), [x], "is not the gathered shape (2, 4)")


def test_gather_runtime_position_out_of_range():
    model = _model([0, 1], (2, 4), const=False)
    with pytest.raises(KernelError, match="position 7 is outside"):
        run_ours(model, [np.zeros((3, 4), np.float32), np.array([0, 7], np.int32)])


def test_gather_min_arena(oracle):
    assert_same_min_arena(oracle, _model([[0, 2]], (1, 2, 4)), [np.zeros((3, 4), np.float32)])
