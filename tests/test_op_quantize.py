"""QUANTIZE against TFLM: float32 -> int8 / int16 (with NaN, infinities and values
beyond int32, which TFLM's float -> int32 conversion sends to INT32_MIN) and every
requantization TFLM has (int8 -> int8 / uint8 / int16 / int32, int16 -> int8 / int16 /
int32, uint8 -> int8, int32 -> int8 / int16), including multipliers > 1 whose left shift
wraps; plus clear errors for the pairs TFLM rejects."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import special_floats
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

PAIRS = [("float32", "int8"), ("float32", "int16"), ("int8", "int8"), ("int8", "uint8"),
         ("int8", "int16"), ("int8", "int32"), ("int16", "int8"), ("int16", "int16"),
         ("int16", "int32"), ("uint8", "int8"), ("int32", "int8"), ("int32", "int16")]
RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
          "int32": (-2**31, 2**31 - 1)}


def _zero_point(draw, dtype):
    if dtype == "int32":
        return draw(st.sampled_from([0, 0, 1000, -1000, 2**30]))
    lo, hi = RANGES[dtype]
    return draw(st.sampled_from([0, lo, hi]) | st.integers(lo, hi))


@st.composite
def quantize_case(draw):
    src, dst = draw(st.sampled_from(PAIRS))
    event(f"{src}->{dst}")
    shape = draw(shapes(0, 4, 1, 8))
    out_q = (draw(scales(1e-4, 2.0)), _zero_point(draw, dst))
    if src == "float32":
        spread = draw(st.sampled_from([1.0, 100.0, 1e5, 1e10]))
        x = special_floats(draw, shape, -spread, spread)
        in_q = None
    else:
        # effective scale in_scale / out_scale from 2^-20 to 2^20 (left shifts wrap like C++)
        ratio = 2.0 ** draw(st.floats(-20, 20))
        in_scale = float(np.float32(min(max(out_q[0] * ratio, 1e-30), 1e30)))
        in_q = (in_scale, _zero_point(draw, src) if src != "int32" else draw(st.sampled_from([0, 7, -2**31])))
        x = arrays(draw, shape, src)
    model = single_op_model("QUANTIZE", [TensorDef(shape, src.upper(), in_q)],
                            [TensorDef(shape, dst.upper(), out_q)])
    return model, [x]


@given(quantize_case())
def test_quantize_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="QUANTIZE")


def test_quantize_float_extremes(oracle):
    x = np.array([1e10, -1e10, np.nan, np.inf, -np.inf, 3e9, 2.5, -2.5, 127.5, -128.5,
                  2147483520.0, 2147483648.0, -2147483904.0, 0.49999997, -0.5, -0.0], np.float32)
    for dst in ("INT8", "INT16"):
        for zp in (-128, -3, 0, 3, 127):
            model = single_op_model("QUANTIZE", [TensorDef(x.shape, "FLOAT32")],
                                    [TensorDef(x.shape, dst, (1.0, zp))])
            compare_with_tflm(oracle, model, [x], context=f"QUANTIZE {dst} zp {zp}")


def test_quantize_requantize_same_scale_int8_uint8(oracle):
    """TFLM's XOR-0x80 fast path equals the general formula."""
    x = np.arange(-128, 128, dtype=np.int8)
    model = single_op_model("QUANTIZE", [TensorDef(x.shape, "INT8", (0.05, -3))],
                            [TensorDef(x.shape, "UINT8", (0.05, 125))])
    compare_with_tflm(oracle, model, [x], context="QUANTIZE int8->uint8")
    model = single_op_model("QUANTIZE", [TensorDef(x.shape, "UINT8", (0.05, 125))],
                            [TensorDef(x.shape, "INT8", (0.05, -3))])
    compare_with_tflm(oracle, model, [x.view(np.uint8)], context="QUANTIZE uint8->int8")


@pytest.mark.parametrize("src, dst, out_q, message", [
    ("FLOAT32", "UINT8", (0.1, 0), "not supported"),
    ("FLOAT32", "INT32", (0.1, 0), "not supported"),
    ("INT16", "UINT8", (0.1, 0), "not supported"),
    ("UINT8", "INT16", (0.1, 0), "not supported"),
    ("INT32", "INT32", (0.1, 0), "not supported"),
    ("FLOAT32", "FLOAT32", (0.1, 0), "not supported"),
    ("FLOAT32", "INT8", None, "quantization"),
    ("FLOAT32", "INT8", ([0.1, 0.2], [0, 0], 0), "per-tensor"),
    ("FLOAT32", "INT8", (0.0, 0), "positive"),
])
def test_quantize_rejects_bad_models(src, dst, out_q, message):
    in_q = (0.1, 0) if src != "FLOAT32" else None
    model = single_op_model("QUANTIZE", [TensorDef((2,), src, in_q)], [TensorDef((2,), dst, out_q)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert "QUANTIZE" in str(info.value)
