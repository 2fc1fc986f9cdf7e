"""FLOOR_DIV and FLOOR_MOD against TFLM: float32 (TFLM's only type path) with signs mixed,
exact multiples, NaN / infinities / signed zeros / huge and tiny values, broadcasting up
to 6-D, constant operands; FLOOR_DIV's "Division by 0" eval error, FLOOR_MOD's zero
divisor (NaN); no arena allocation beyond temporaries; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import broadcast_shapes, draw_const
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import operand, runtime_inputs, values

pytestmark = pytest.mark.oracle
OPS = ["FLOOR_DIV", "FLOOR_MOD"]


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_floor_div_mod_matches_tflm(oracle, op, data):
    s1, s2, out = data.draw(broadcast_shapes())
    x1, x2 = values(data.draw, s1, "float32"), values(data.draw, s2, "float32")
    if data.draw(st.booleans()):
        with np.errstate(over="ignore"):
            x1 = (x1 * np.float32(data.draw(st.sampled_from([1.0, 7.5, 1e6, 1e-6])))).astype(np.float32)
    if op == "FLOOR_DIV":
        x2 = np.where(x2 == 0, np.float32(0.75), x2).astype(np.float32)
    const = draw_const(data.draw)
    defs = [operand(s1, "float32", x1, const=const[0]), operand(s2, "float32", x2, const=const[1])]
    model = single_op_model(op, defs, [TensorDef(out, "FLOAT32")])
    compare_with_tflm(oracle, model, runtime_inputs(defs, [x1, x2]), context=op)


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_floor_div_by_zero_fails_at_invoke_like_tflm(oracle, zero):
    model = single_op_model("FLOOR_DIV", [TensorDef((3,), "FLOAT32"), TensorDef((3,), "FLOAT32")],
                            [TensorDef((3,), "FLOAT32")])
    inputs = [np.array([1, 2, 3], np.float32), np.array([1, zero, 2], np.float32)]
    theirs = oracle.run(model, inputs)
    assert not theirs.ok and theirs.stage == "invoke" and not theirs.crashed
    with pytest.raises(KernelError, match="Division by 0") as info:
        run_ours(model, inputs)
    assert "FLOOR_DIV" in str(info.value)


def test_floor_mod_by_zero_matches_tflm(oracle):
    model = single_op_model("FLOOR_MOD", [TensorDef((4,), "FLOAT32"), TensorDef((4,), "FLOAT32")],
                            [TensorDef((4,), "FLOAT32")])
    inputs = [np.array([1, -2, 0, np.inf], np.float32), np.array([0, -0.0, 0, 0], np.float32)]
    compare_with_tflm(oracle, model, inputs, context="FLOOR_MOD")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("types, shapes_, message", [
    (("INT32", "INT32", "INT32"), ((2, 3),) * 3, "not supported"),
    (("INT8", "INT8", "INT8"), ((2, 3),) * 3, "not supported"),
    (("FLOAT32", "INT32", "FLOAT32"), ((2, 3),) * 3, "must match"),
    (("FLOAT32", "FLOAT32", "INT32"), ((2, 3),) * 3, "must match"),
    (("FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (3, 2), (2, 3)), "do not broadcast"),
    (("FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (1, 3), (3, 2)), "output has shape"),
])
def test_floor_div_mod_rejects_bad_models(op, types, shapes_, message):
    model = single_op_model(op, [TensorDef(shapes_[0], types[0]), TensorDef(shapes_[1], types[1])],
                            [TensorDef(shapes_[2], types[2])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert op in str(info.value)


@pytest.mark.parametrize("op", OPS)
def test_floor_div_mod_nan_signs_and_edges(oracle, op):
    nan = np.float32(np.nan)
    a = np.array([nan, -nan, nan, -nan, 1.0, -1.0, -0.0, 0.0, 5.0, -5.0, np.inf, 3e38, -7.0], np.float32)
    b = np.array([-nan, nan, 2.0, -2.0, -nan, np.inf, 3.0, -3.0, -np.inf, np.inf, 2.0, 1e-30, -2.0],
                 np.float32)
    a, b = np.tile(a, 16), np.tile(b, 16)      # long enough for numpy's SIMD loops
    model = single_op_model(op, [TensorDef(a.shape, "FLOAT32"), TensorDef(b.shape, "FLOAT32")],
                            [TensorDef(a.shape, "FLOAT32")])
    compare_with_tflm(oracle, model, [a, b], context=op)
