"""ELU against TFLM: float32 (glibc expm1f) and int8 (the 256-entry table in the OpData,
float32 arithmetic with glibc expf, x86 float-to-int conversion); clear errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales
from tests.unary_helpers import SPECIALS, float_values, small_shapes

pytestmark = pytest.mark.oracle
OP = "ELU"


@st.composite
def elu_case(draw):
    kind = draw(st.sampled_from(["float32", "int8"]))
    event(kind)
    shape = draw(small_shapes())
    if kind == "float32":
        x, q, tt = float_values(draw, shape), (None, None), "FLOAT32"
    else:
        q = ((draw(scales(1e-3, 2.0)), draw(st.integers(-128, 127))),
             (draw(scales(1e-3, 2.0)), draw(st.integers(-128, 127))))
        x, tt = arrays(draw, shape, "int8"), "INT8"
    return single_op_model(OP, [TensorDef(shape, tt, q[0])], [TensorDef(shape, tt, q[1])]), [x]


@given(elu_case())
def test_elu_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


def test_elu_every_int8_input_and_special_floats(oracle):
    x8 = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    for qin, qout in (((0.1, 3), (0.05, -20)), ((2.0, 0), (1e-6, 0)), ((2.0, 5), (1e-8, 0)),
                       ((1 / 16, -128), (1 / 16, 127))):
        model = single_op_model(OP, [TensorDef(x8.shape, "INT8", qin)], [TensorDef(x8.shape, "INT8", qout)])
        compare_with_tflm(oracle, model, [x8], context=f"{OP} {qin} {qout}")
    rng = np.random.default_rng(5)
    x = np.concatenate([SPECIALS, rng.uniform(-100, 10, 2000).astype(np.float32)])
    model = single_op_model(OP, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [x], context=OP)


@pytest.mark.parametrize("in_type, out_type, out_shape, message", [
    ("INT8", "INT16", (2, 3), "differ"),
    ("INT16", "INT16", (2, 3), "only supports float32 and int8"),
    ("FLOAT32", "FLOAT32", (4, 2), "does not match"),
])
def test_elu_rejects_bad_models(in_type, out_type, out_shape, message):
    q = None if in_type == "FLOAT32" else (0.1, 0)
    model = single_op_model(OP, [TensorDef((2, 3), in_type, q)], [TensorDef(out_shape, out_type, q)])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
