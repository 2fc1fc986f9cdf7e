"""ABS, RSQRT, SIN, COS, LOG, SQRT and SQUARE (TFLM's elementwise.cc) against TFLM:
float32 bit for bit with glibc's sinf / cosf / logf (special values, subnormals, NaN
payloads, huge arguments), int8 ABS / RSQRT requantisation, int16 ABS with and without
quantization, int16 RSQRT; clear errors for bad models, RSQRT's invoke error for negative inputs."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales
from tests.unary_helpers import SPECIALS, float_values, small_shapes

pytestmark = pytest.mark.oracle

FLOAT_OPS = ["ABS", "RSQRT", "SIN", "COS", "LOG", "SQRT", "SQUARE"]


@pytest.mark.parametrize("op", FLOAT_OPS)
@given(data=st.data())
def test_float_ops_match_tflm(oracle, op, data):
    shape = data.draw(small_shapes())
    x = float_values(data.draw, shape)
    model = single_op_model(op, [TensorDef(shape, "FLOAT32")], [TensorDef(shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=op)


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_ops_special_values(oracle, op):
    rng = np.random.default_rng(7)
    dense = np.concatenate([SPECIALS, rng.uniform(-200, 200, 2000).astype(np.float32),
                            rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    model = single_op_model(op, [TensorDef(dense.shape, "FLOAT32")], [TensorDef(dense.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [dense], context=op)


@st.composite
def abs_case(draw):
    kind = draw(st.sampled_from(["int8", "int8_same_scale", "int16", "int16_plain"]))
    event(kind)
    shape = draw(small_shapes())
    if kind.startswith("int8"):
        s_in = draw(scales(1e-3, 2.0))
        s_out = s_in if kind == "int8_same_scale" else draw(scales(1e-3, 2.0))
        qin, qout = (s_in, draw(st.integers(-128, 127))), (s_out, draw(st.integers(-128, 127)))
        x, tt = arrays(draw, shape, "int8"), "INT8"
    elif kind == "int16":
        qin, qout = (draw(scales(1e-4, 1.0)), 0), (draw(scales(1e-4, 1.0)), 0)
        x, tt = arrays(draw, shape, "int16"), "INT16"
    else:
        qin = qout = None
        x, tt = arrays(draw, shape, "int16"), "INT16"
    return single_op_model("ABS", [TensorDef(shape, tt, qin)], [TensorDef(shape, tt, qout)]), [x]


@given(abs_case())
def test_abs_quantized_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="ABS")


@st.composite
def rsqrt_int8_case(draw):
    shape = draw(small_shapes())
    zp = draw(st.integers(-128, 127))
    qin = (draw(scales(1e-3, 2.0)), zp)
    qout = (draw(scales(1e-3, 2.0)), draw(st.integers(-128, 127)))
    x = arrays(draw, shape, "int8", zp, 127)          # TFLM fails below the zero point
    return single_op_model("RSQRT", [TensorDef(shape, "INT8", qin)], [TensorDef(shape, "INT8", qout)]), [x]


@given(rsqrt_int8_case())
def test_rsqrt_int8_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="RSQRT")


def test_every_int8_input(oracle):
    for op, zp in (("ABS", -3), ("RSQRT", -128)):
        for qin, qout in (((0.05, zp), (0.02, -7)), ((0.5, zp), (0.5, 11)), ((0.002, zp), (1.3, -128))):
            x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
            model = single_op_model(op, [TensorDef(x.shape, "INT8", qin)], [TensorDef(x.shape, "INT8", qout)])
            compare_with_tflm(oracle, model, [x], context=f"{op} {qin} {qout}")
    x16 = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    for q in (None, (0.01, 0)):
        model = single_op_model("ABS", [TensorDef(x16.shape, "INT16", q)],
                                [TensorDef(x16.shape, "INT16", q and (0.013, 0))])
        compare_with_tflm(oracle, model, [x16], context=f"ABS int16 {q}")
    x16 = np.arange(0, 32768, dtype=np.int16).reshape(128, 256)    # RSQRT: x >= 0
    for qin, qout in (((0.5, 0), (0.5, 0)), ((0.001, 0), (0.02, 0)), ((3.0, 0), (1e-4, 0))):
        model = single_op_model("RSQRT", [TensorDef(x16.shape, "INT16", qin)],
                                [TensorDef(x16.shape, "INT16", qout)])
        compare_with_tflm(oracle, model, [x16], context=f"RSQRT int16 {qin} {qout}")


@pytest.mark.parametrize("io, qin, qout", [
    ("INT16", 1.0000000031710769e-30, 565646720.0),   # sqrt and product in double, not float
    ("INT8", 0.1, 3e4),                              # a right shift of 33
    ("INT8", 1e-30, 1e-30),                          # a left shift of 80
    ("INT8", 1.4e-45, 1.4e-45),                      # product 0: a multiplier of inf
    ("INT16", 3.4e38, 3.4e38),                       # product inf: a multiplier of 0
])
def test_rsqrt_extreme_scales_match_tflm(oracle, io, qin, qout):
    """TFLM's prepare checks no range: every multiplier runs, as the CPU computes it."""
    x = (np.arange(-128, 128, dtype=np.int8).reshape(16, 16) if io == "INT8"
         else np.arange(0, 32768, dtype=np.int16).reshape(128, 256))
    model = single_op_model("RSQRT", [TensorDef(x.shape, io, (qin, -128 if io == "INT8" else 0))],
                            [TensorDef(x.shape, io, (qout, 0))])
    compare_with_tflm(oracle, model, [x], context=f"RSQRT {io} {qin} {qout}")


def test_rsqrt_negative_input_fails_at_invoke(oracle):
    model = single_op_model("RSQRT", [TensorDef((4,), "INT8", (0.1, 3))], [TensorDef((4,), "INT8", (0.1, 0))])
    x = np.array([5, 3, 2, 9], np.int8)
    theirs = oracle.run(model, [x], 1 << 20)
    assert not theirs.ok and theirs.stage == "invoke"
    with pytest.raises(KernelError, match="only defined for positive") as info:
        run_ours(model, [x])
    assert "RSQRT" in str(info.value)


def _model(op, in_type="FLOAT32", out_type=None, qin=None, qout=None, shape=(2, 3), out_shape=None):
    return single_op_model(op, [TensorDef(shape, in_type, qin)],
                           [TensorDef(out_shape or shape, out_type or in_type, qout)])


@pytest.mark.parametrize("op, kwargs, message", [
    ("SIN", dict(in_type="INT8", qin=(0.1, 0), qout=(0.1, 0)), "not supported"),
    ("LOG", dict(out_type="INT32"), "differ"),
    ("SQRT", dict(out_shape=(2, 4)), "does not match"),
    ("SQUARE", dict(in_type="INT32"), "not supported"),
    ("ABS", dict(in_type="INT32"), "not supported"),
    ("ABS", dict(in_type="INT8"), "affine quantization"),
    ("ABS", dict(in_type="INT16", qin=(0.1, 2), qout=(0.1, 0)), "zero points must be 0"),
    ("RSQRT", dict(in_type="INT16"), "needs quantized"),
    ("RSQRT", dict(in_type="INT16", qin=(0.1, 1), qout=(0.1, 0)), "zero points must be 0"),
])
def test_elementwise_rejects_bad_models(op, kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(op, **kwargs), [])
    assert op in str(info.value)


def test_rsqrt_multiplier_float32_on_cortex_m():
    """Cortex-M targets compute sqrt(input scale) * output scale in float32 (TFLM
    90b983c2's source; the package widens to double first): at these scales the two
    multipliers differ in their low bits, which moves a few int16 outputs by one step.
    (Derived from the source; not measured on a Cortex-M build.)"""
    x = np.arange(0, 32768, dtype=np.int16).reshape(128, 256)
    model = single_op_model("RSQRT", [TensorDef(x.shape, "INT16", (1.0000000031710769e-30, 0))],
                            [TensorDef(x.shape, "INT16", (565646720.0, 0))])
    host, _, _ = run_ours(model, [x], target="host64", recording=False)
    arm, _, _ = run_ours(model, [x], target="cortex-m4", recording=False)
    diff = host[0].astype(np.int32) - arm[0].astype(np.int32)
    assert 0 < np.count_nonzero(diff) < 100 and set(np.unique(diff)) <= {-1, 0, 1}
