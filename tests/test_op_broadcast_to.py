"""BROADCAST_TO against TFLM: every fixed-size type (float32 with NaN payloads, int8,
int16, int32, int64, uint8, bool; quantization carried, ignored), int32 and int64 shape
tensors, input ranks 0-5 broadcast to output ranks up to 5; no arena allocation beyond
temporaries; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import values
from tests.strategies import arrays

pytestmark = pytest.mark.oracle
TYPES = ["float32", "int8", "int16", "int32", "int64", "uint8", "bool"]


@given(data=st.data())
def test_broadcast_to_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(TYPES))
    out_rank = data.draw(st.integers(1, 5))   # an empty shape tensor cannot be a constant
    target = tuple(data.draw(st.lists(st.integers(1, 6), min_size=out_rank, max_size=out_rank)))
    in_rank = data.draw(st.integers(0, out_rank))
    keep = data.draw(st.lists(st.booleans(), min_size=in_rank, max_size=in_rank))
    in_shape = tuple(d if k else 1 for d, k in zip(target[out_rank - in_rank:], keep))
    x = arrays(data.draw, in_shape, "uint8") if dtype == "uint8" else values(data.draw, in_shape, dtype)
    shape_type = data.draw(st.sampled_from(["int32", "int64"]))
    q = (0.5, 3) if dtype == "int8" and data.draw(st.booleans()) else None
    model = single_op_model("BROADCAST_TO", [TensorDef(in_shape, dtype.upper(), q),
                                             TensorDef((out_rank,), shape_type.upper(),
                                                       data=np.array(target, shape_type))],
                            [TensorDef(target, dtype.upper(), q)])
    compare_with_tflm(oracle, model, [x], context="BROADCAST_TO")


def _model(in_shape=(1, 3), target=(2, 3), out_shape=None, in_type="FLOAT32", out_type=None,
           shape_type="INT32", const=True, shape_shape=None):
    data = np.array(target, shape_type.lower())
    if shape_shape is not None:
        data = data.reshape(shape_shape)
    return single_op_model("BROADCAST_TO", [TensorDef(in_shape, in_type),
                                            TensorDef(data.shape, shape_type, data=data if const else None)],
                           [TensorDef(out_shape if out_shape is not None else target, out_type or in_type)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(shape_type="FLOAT32"), "INT32 or INT64"),
    (dict(out_type="INT8"), "must match"),
    (dict(const=False), "Non-constant"),
    (dict(shape_shape=(1, 2)), "1-D"),
    (dict(out_shape=(1, 2, 3)), "expected shape dimension"),
    (dict(in_shape=(1, 1, 3), target=(2, 3)), "broadcastable"),
    (dict(in_shape=(2, 3), target=(4, 3)), "broadcastable"),
    (dict(in_shape=(1,) * 6, target=(1,) * 6), "1-5D"),
    (dict(in_shape=(3,), target=(1,) * 5 + (3,)), "1-5D"),
    (dict(target=(2, 3), out_shape=(3, 3)), "shape tensor says"),
])
def test_broadcast_to_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "BROADCAST_TO" in str(info.value)
