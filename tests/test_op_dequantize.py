"""DEQUANTIZE against TFLM: int8 / int16 / uint8 -> float32 (double-precision product
rounded to float), per-tensor parameters (a per-channel tensor uses its first scale and
zero point, as TFLM's params); plus clear errors for other types."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


@st.composite
def dequantize_case(draw):
    src = draw(st.sampled_from(["int8", "int16", "uint8"]))
    event(src)
    shape = draw(shapes(0, 4, 1, 8))
    lo, hi = RANGES[src]
    q = (draw(scales(1e-6, 1e3) | st.sampled_from([0.1, 1.0 / 3, 2.0 ** -20])),
         draw(st.integers(lo, hi)))
    model = single_op_model("DEQUANTIZE", [TensorDef(shape, src.upper(), q)],
                            [TensorDef(shape, "FLOAT32")])
    return model, [arrays(draw, shape, src)]


@given(dequantize_case())
def test_dequantize_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DEQUANTIZE")


def test_dequantize_per_channel_uses_first_parameters(oracle):
    x = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    model = single_op_model("DEQUANTIZE", [TensorDef((3, 4), "INT8", ([0.5, 0.25, 2.0], [1, 2, 3], 0))],
                            [TensorDef((3, 4), "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context="DEQUANTIZE per-channel")


@pytest.mark.parametrize("src, dst, message", [
    ("INT32", "FLOAT32", "input type"),
    ("FLOAT32", "FLOAT32", "input type"),
    ("INT8", "INT16", "output type"),
    ("INT16", "INT32", "output type"),
])
def test_dequantize_rejects_bad_models(src, dst, message):
    model = single_op_model("DEQUANTIZE", [TensorDef((2,), src, (0.1, 0))], [TensorDef((2,), dst, (0.1, 0))])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert "DEQUANTIZE" in str(info.value)
