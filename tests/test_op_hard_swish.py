"""HARD_SWISH against TFLM: float32 and int8 (16-bit fixed point, including extreme scale
ratios with large right shifts and saturating left shifts); plus clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

OP = "HARD_SWISH"


@st.composite
def hard_swish_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int8_extreme"]))
    event(kind)
    shape = draw(shapes(0, 4, 1, 8))
    if kind == "float32":
        spread = draw(st.sampled_from([1.0, 4.0, 10.0]))
        x = arrays(draw, shape, "float32", -spread, spread)
        qin = qout = None
    else:
        if kind == "int8":
            s_in, s_out = draw(scales(0.005, 0.5)), draw(scales(0.005, 0.5))
        else:   # tiny or huge input/output ratios (exponents below -15, reluish left shifts)
            s_in = draw(scales(1e-4, 2e-3) | scales(0.5, 8.0))
            # TFLM needs input_scale / (128 * output_scale) < 1
            s_out = draw(scales(max(0.05, s_in / 120.0), 1.0))
        qin = (s_in, draw(st.integers(-128, 127)))
        qout = (s_out, draw(st.integers(-128, 127)))
        x = arrays(draw, shape, "int8")
    tt = "FLOAT32" if kind == "float32" else "INT8"
    model = single_op_model(OP, [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)])
    return model, [x]


@given(hard_swish_case())
def test_hard_swish_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_hard_swish_every_int8_input(oracle):
    x = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
    for (s_in, zp_in), (s_out, zp_out) in [((0.05, 0), (0.03, -10)), ((0.1, 20), (0.1, 100)),
                                           ((0.02, -128), (0.5, 127)), ((4.0, 5), (0.04, 0)),
                                           ((1e-4, 0), (1.0, 0)), ((3e-3, 9), (0.5, -3))]:
        model = single_op_model(OP, [TensorDef((2, 128), "INT8", (s_in, zp_in))],
                                [TensorDef((2, 128), "INT8", (s_out, zp_out))])
        compare_with_tflm(oracle, model, [x], context=f"{OP} scales {s_in} -> {s_out}")


def test_hard_swish_float_special_values(oracle):
    x = np.array([np.nan, np.inf, -np.inf, -3.0, 3.0, -0.0, 0.0, 2.9999998, -3.0000002, 1e30], np.float32)
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)


def _model(in_type="INT8", out_type=None, qin=(0.1, 0), qout=(0.1, 0), shape=(2, 3), out_shape=None):
    return single_op_model(OP, [TensorDef(shape, in_type, qin)],
                           [TensorDef(out_shape or shape, out_type or in_type, qout)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(in_type="INT16"), "Unsupported type"),
    (dict(out_type="FLOAT32", qout=None), "differ"),
    (dict(qin=(20.0, 0), qout=(0.1, 0)), "output_multiplier_exponent <= 0 was not true"),
    (dict(in_type="FLOAT32", qin=None, qout=None, out_shape=(2, 2)), "does not match"),
])
def test_hard_swish_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert OP in str(info.value)
