"""ZEROS_LIKE against TFLM: int64, int32, int8 and float32 (temporary tensors only, no
OpData); clear errors for unsupported types and mismatched outputs."""
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, shapes

pytestmark = pytest.mark.oracle
OP = "ZEROS_LIKE"


@given(data=st.data())
def test_zeros_like_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(["int64", "int32", "int8", "float32"]))
    shape = data.draw(shapes(0, 5, 1, 7))
    x = arrays(data.draw, shape, dtype, -100, 100) if dtype != "int64" else arrays(data.draw, shape, "int32").astype("int64")
    q = (0.5, 3) if dtype == "int8" and data.draw(st.booleans()) else None
    const = data.draw(st.integers(0, 4)) == 0
    model = single_op_model(OP, [TensorDef(shape, dtype.upper(), q, data=x if const else None)],
                            [TensorDef(shape, dtype.upper(), q)])
    compare_with_tflm(oracle, model, [] if const else [x], context=OP)


@pytest.mark.parametrize("in_type, out_type, out_shape, message", [
    ("INT16", "INT16", (2, 3), "only currently supports"),
    ("BOOL", "BOOL", (2, 3), "only currently supports"),
    ("FLOAT32", "INT8", (2, 3), "element size"),
    ("INT32", "INT32", (3, 3), "does not match"),
])
def test_zeros_like_rejects_bad_models(in_type, out_type, out_shape, message):
    model = single_op_model(OP, [TensorDef((2, 3), in_type)], [TensorDef(out_shape, out_type)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
