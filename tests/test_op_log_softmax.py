"""LOG_SOFTMAX against TFLM: float32 (glibc expf / logf, sequential float32 sums, NaN and
infinities) and int8 (gemmlowp exp, TFLM's fixed-point log, output fixed at 16/256 and
127; the OpData is allocated for int8 only); clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes
from tests.unary_helpers import float_values

pytestmark = pytest.mark.oracle
OP = "LOG_SOFTMAX"
QOUT = (16 / 256, 127)


@st.composite
def log_softmax_case(draw):
    kind = draw(st.sampled_from(["float32", "int8"]))
    event(kind)
    shape = draw(shapes(1, 4, 1, 9))
    if draw(st.integers(0, 4)) == 0:
        shape = shape[:-1][:1] + (draw(st.integers(50, 2000)),)   # fits the arena
    if kind == "float32":
        x = float_values(draw, shape, spreads=(1.0, 10.0, 100.0, 1e30))
        qin = qout = None
    else:
        qin = (draw(scales(1e-3, 2.0) | st.sampled_from([1.0, 0.5, 1 / 16])), draw(st.integers(-128, 127)))
        qout = QOUT
        x = arrays(draw, shape, "int8")
    tt = kind.upper()
    return single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)]), [x]


@given(log_softmax_case())
def test_log_softmax_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_log_softmax_special_rows(oracle):
    x = np.array([[0, 0, 0, 0], [np.nan, 1, 2, 3], [-np.inf, 0, 1, 2], [np.inf, 0, 1, 2],
                  [-np.inf] * 4, [-3e38, 3e38, 0, 1]], np.float32)
    # a signalling NaN before +inf: numpy's SIMD fmax reductions lose the infinity there
    snan_row = np.array([[0x7FA00000, 0x7F800000, 0x3F000000, 0xFFC00000]], np.uint32).view(np.float32)
    x = np.concatenate([x, snan_row, -snan_row])
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)
    xi = np.array([[-128] * 4, [127] * 4, [-128, 127, 0, 5], [3, 3, -100, 3]], np.int8)
    for scale in (0.01, 0.1, 1.0, 5.0):
        model = single_op_model(OP, [TensorDef(xi.shape, "INT8", (scale, 0))], [TensorDef(xi.shape, "INT8", QOUT)])
        compare_with_tflm(oracle, model, [xi], context=f"{OP} {scale}")


@pytest.mark.parametrize("scale", [40.0, 6395.9395, 3.6e26, 3.4e38])
def test_log_softmax_int8_huge_input_scales_match_tflm(oracle, scale):
    """An input scale of 32 or more caps the Q5.26 multiplier at 2^31 - 1 (left shift
    31): TFLM runs it (the shift as the CPU evaluates it; no range check)."""
    rng = np.random.default_rng(3)
    xi = np.concatenate([np.arange(-128, 128, dtype=np.int8).reshape(1, 256),
                         rng.integers(-128, 128, (7, 256)).astype(np.int8),
                         np.full((1, 256), 9, np.int8), np.array([[5] * 255 + [6]], np.int8)])
    model = single_op_model(OP, [TensorDef(xi.shape, "INT8", (scale, -3))], [TensorDef(xi.shape, "INT8", QOUT)])
    compare_with_tflm(oracle, model, [xi], context=f"{OP} {scale}")


@pytest.mark.parametrize("in_type, out_type, qout, out_shape, message", [
    ("INT16", "INT16", (0.1, 0), (2, 3), "only supports float32, int8"),
    ("INT8", "FLOAT32", None, (2, 3), "differ"),
    ("FLOAT32", "FLOAT32", None, (3, 2), "differs from input shape"),
    ("INT8", "INT8", (1 / 16, 0), (2, 3), "zero point must be 127"),
    ("INT8", "INT8", (1 / 8, 127), (2, 3), "scale must be 16/256"),
])
def test_log_softmax_rejects_bad_models(in_type, out_type, qout, out_shape, message):
    qin = None if in_type == "FLOAT32" else (0.1, 0)
    model = single_op_model(OP, [TensorDef((2, 3), in_type, qin)], [TensorDef(out_shape, out_type, qout)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
