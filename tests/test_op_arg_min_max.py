"""ARG_MAX and ARG_MIN against TFLM: float32 (NaN anywhere, including first along the
axis, infinities, signed zeros, many ties) and int8 (ties), every axis (negative too),
constant and run-time axis tensors, ranks 1-6; no arena allocation (TFLM's kernel has no
init or prepare); clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import values
from tests.strategies import shapes

pytestmark = pytest.mark.oracle
OPS = ["ARG_MAX", "ARG_MIN"]


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_arg_min_max_matches_tflm(oracle, op, data):
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    shape = data.draw(shapes(1, 6, 1, 6))
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    x = values(data.draw, shape, dtype)
    if dtype == "float32" and data.draw(st.integers(0, 3)) == 0:
        # NaN in first position along the axis in some rows
        first = [slice(None)] * rank
        first[axis] = 0
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        x[tuple(first)] = np.where(rng.random(x[tuple(first)].shape) < 0.5, np.nan, x[tuple(first)])
    out_shape = tuple(d for i, d in enumerate(shape) if i != axis % rank)
    q = (0.1, 3) if dtype == "int8" and data.draw(st.booleans()) else None
    axis_shape = data.draw(st.sampled_from([(), (1,)]))
    axis_data = np.array(axis, np.int32).reshape(axis_shape)
    const_axis = data.draw(st.booleans())
    model = single_op_model(op, [TensorDef(shape, dtype.upper(), q),
                                 TensorDef(axis_shape, "INT32", data=axis_data if const_axis else None)],
                            [TensorDef(out_shape, "INT32")], output_type=2)   # TensorType INT32
    inputs = [x] if const_axis else [x, axis_data]
    compare_with_tflm(oracle, model, inputs, context=op)


def _model(op, in_type="FLOAT32", axis_type="INT32", out_type="INT32", shape=(2, 3), axis=1,
           out_shape=(2,), const=True):
    axis_def = TensorDef((1,), axis_type, data=np.array([axis], axis_type.lower()) if const else None)
    return single_op_model(op, [TensorDef(shape, in_type), axis_def], [TensorDef(out_shape, out_type)])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kwargs, message", [
    (dict(in_type="INT16"), "float32 and int8"),
    (dict(in_type="INT32"), "float32 and int8"),
    (dict(axis_type="INT64"), "for the axis"),
    (dict(out_type="INT64"), "for the output"),
    (dict(axis=2), "out of range"),
    (dict(axis=-3), "out of range"),
    (dict(out_shape=(3,)), "elements"),
    (dict(shape=(), out_shape=()), "at least one dimension"),
])
def test_arg_min_max_rejects_bad_models(op, kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(op, **kwargs), [])
    assert op in str(info.value)


@pytest.mark.parametrize("op", OPS)
def test_arg_min_max_runtime_axis_out_of_range_fails_at_invoke(op):
    model = _model(op, const=False)
    with pytest.raises(KernelError, match="out of range"):
        run_ours(model, [np.zeros((2, 3), np.float32), np.array([5], np.int32)])
