"""FILL against TFLM: float32, int32 and int8 values (constant or run-time), dims
tensors of int8 / int16 / int32 / int64, scalar to 5-D outputs; clear errors for
non-constant or mismatched dims, non-scalar values and unsupported types."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import shapes
from tests.unary_helpers import SPECIALS

pytestmark = pytest.mark.oracle
OP = "FILL"
DIMS_DTYPES = {"INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64}


@given(data=st.data())
def test_fill_matches_tflm(oracle, data):
    vtype = data.draw(st.sampled_from(["FLOAT32", "INT32", "INT8"]))
    shape = data.draw(shapes(1, 5, 1, 6))
    dtype_name = data.draw(st.sampled_from(sorted(DIMS_DTYPES)))
    dims = np.array(shape, DIMS_DTYPES[dtype_name])
    if vtype == "FLOAT32":
        value = np.array(data.draw(st.sampled_from(list(SPECIALS)) | st.floats(width=32)), np.float32)
    elif vtype == "INT32":
        value = np.array(data.draw(st.integers(-2**31, 2**31 - 1)), np.int32)
    else:
        value = np.array(data.draw(st.integers(-128, 127)), np.int8)
    const_value = data.draw(st.booleans())
    model = single_op_model(OP, [TensorDef(dims.shape, dtype_name, data=dims),
                                 TensorDef((), vtype, data=value if const_value else None)],
                            [TensorDef(shape, vtype)])
    compare_with_tflm(oracle, model, [] if const_value else [value], context=OP)


def _model(dims=np.array([2, 3], np.int32), dims_type="INT32", dims_const=True, vshape=(), vtype="FLOAT32",
           out_shape=(2, 3), out_type=None):
    return single_op_model(OP, [TensorDef(dims.shape, dims_type, data=dims if dims_const else None),
                                TensorDef(vshape, vtype)], [TensorDef(out_shape, out_type or vtype)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(vshape=(1,)), "must be a scalar"),
    (dict(out_type="INT32"), "differ"),
    (dict(dims_const=False), "Non-constant"),
    (dict(dims=np.array([[2, 3]], np.int32)), "must be 1-D"),
    (dict(dims=np.array([2, 3, 1], np.int32)), "dimensions"),
    (dict(dims=np.array([2, 4], np.int32)), "do not match"),
    (dict(dims=np.array([2, 3], np.float32), dims_type="FLOAT32"), "cannot compare"),
    (dict(vtype="INT16"), "only currently supports"),
    (dict(vtype="BOOL"), "only currently supports"),
])
def test_fill_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert OP in str(info.value)
