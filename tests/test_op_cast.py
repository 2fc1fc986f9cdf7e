"""CAST against TFLM: every pair of int8, int16, int32, uint32, float32 and bool (the
package's set), with wrapping integer conversions, saturating float -> integer
conversions (NaN -> 0), and x != 0 for bool; plus clear errors for other types."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import special_floats
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle

TYPES = ["int8", "int16", "int32", "uint32", "float32", "bool"]


@st.composite
def cast_case(draw):
    src, dst = draw(st.sampled_from(TYPES)), draw(st.sampled_from(TYPES))
    event(f"{src}->{dst}")
    shape = draw(shapes(0, 4, 1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if src == "float32":
        spread = draw(st.sampled_from([3.0, 300.0, 1e5, 5e9, 1e20]))
        x = special_floats(draw, shape, -spread, spread)
    elif src == "bool":
        x = rng.integers(0, 2, size=shape).astype(bool)
    else:
        info = np.iinfo(src)
        if draw(st.booleans()):
            x = rng.integers(-3, 4, size=shape).astype(np.int64).astype(src)
        else:
            x = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64).astype(src)
    model = single_op_model("CAST", [TensorDef(shape, src.upper())], [TensorDef(shape, dst.upper())])
    return model, [x]


@given(cast_case())
def test_cast_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="CAST")


def test_cast_every_pair_on_edge_values(oracle):
    values = {
        "int8": np.array([-128, -1, 0, 1, 127], np.int8),
        "int16": np.array([-32768, -129, -1, 0, 1, 300, 32767], np.int16),
        "int32": np.array([-2**31, -70000, -1, 0, 1, 300, 2**24 + 1, 2**31 - 1], np.int32),
        "uint32": np.array([0, 1, 300, 2**24 + 1, 2**31, 2**32 - 1], np.uint32),
        "float32": np.array([-1.5, -0.5, -0.0, 0.0, 0.5, 127.5, -128.5, 1e10, -1e10, np.nan,
                             np.inf, -np.inf, 2147483520.0, 2147483648.0, 4294967040.0, 3e9],
                            np.float32),
        "bool": np.array([True, False]),
    }
    for src, x in values.items():
        for dst in TYPES:
            model = single_op_model("CAST", [TensorDef(x.shape, src.upper())], [TensorDef(x.shape, dst.upper())])
            compare_with_tflm(oracle, model, [x], context=f"CAST {src}->{dst}")


@pytest.mark.parametrize("src, dst, message", [
    ("INT64", "INT32", "Input type"),
    ("UINT8", "INT32", "Input type"),
    ("INT32", "INT64", "Output type"),
    ("FLOAT32", "FLOAT16", "Output type"),
])
def test_cast_rejects_bad_types(src, dst, message):
    model = single_op_model("CAST", [TensorDef((2,), src)], [TensorDef((2,), dst)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert "CAST" in str(info.value)


def test_cast_rejects_size_mismatch():
    model = single_op_model("CAST", [TensorDef((2, 3), "INT8")], [TensorDef((5,), "INT32")])
    with pytest.raises(KernelError, match="differ in size"):
        run_ours(model, [])
