"""NEG, EXP, FLOOR, CEIL and ROUND against TFLM: float32 bit for bit (glibc expf, NaN
payloads kept by floorf / ceilf, banker's rounding with TFLM's float32 RoundToNearest,
signed zeros); NEG and FLOOR allocate nothing (no Prepare in TFLM); clear errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.unary_helpers import SPECIALS, float_values, small_shapes

pytestmark = pytest.mark.oracle

OPS = ["NEG", "EXP", "FLOOR", "CEIL", "ROUND"]


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_unary_float_matches_tflm(oracle, op, data):
    shape = data.draw(small_shapes())
    x = float_values(data.draw, shape, spreads=(1.0, 4.0, 30.0, 100.0, 1e7, 1e30))
    model = single_op_model(op, [TensorDef(shape, "FLOAT32")], [TensorDef(shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=op)


@pytest.mark.parametrize("op", OPS)
def test_unary_float_special_values(oracle, op):
    rng = np.random.default_rng(3)
    x = np.concatenate([SPECIALS, (np.arange(-64, 64) / 4).astype(np.float32),
                        np.float32([8388607.5, -8388607.5, 4194303.5, 16777215.0, -0.49999997, 0.49999997]),
                        rng.uniform(-100, 100, 1000).astype(np.float32),
                        rng.integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    model = single_op_model(op, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=op)


@pytest.mark.parametrize("op, in_type, out_type, out_shape, message", [
    ("NEG", "INT8", "INT8", (2, 3), "not supported"),
    ("NEG", "FLOAT32", "FLOAT32", (7,), "does not match"),
    ("FLOOR", "INT32", "INT32", (2, 3), "not supported"),
    ("FLOOR", "FLOAT32", "INT32", (2, 3), "must be FLOAT32"),
    ("EXP", "INT8", "INT8", (2, 3), "not supported"),
    ("EXP", "FLOAT32", "FLOAT32", (3, 2), "differs from input shape"),
    ("CEIL", "FLOAT32", "INT32", (2, 3), "differs"),
    ("ROUND", "INT32", "INT32", (2, 3), "not supported"),
    ("ROUND", "FLOAT32", "FLOAT32", (6,), "differs from input shape"),
])
def test_unary_float_rejects_bad_models(op, in_type, out_type, out_shape, message):
    q = (0.1, 0) if in_type == "INT8" else None
    model = single_op_model(op, [TensorDef((2, 3), in_type, q)], [TensorDef(out_shape, out_type, q)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert op in str(info.value)
