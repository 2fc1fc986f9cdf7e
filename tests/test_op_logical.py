"""LOGICAL_AND, LOGICAL_OR (broadcasting up to 6-D, constant operands) and LOGICAL_NOT
against TFLM: bool tensors, no arena allocation for AND / OR (TFLM's kernels have no init
or prepare), temporaries only for NOT; clear errors for non-bool tensors and bad shapes."""
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import broadcast_shapes, draw_const
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import operand, runtime_inputs, values
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
@given(data=st.data())
def test_logical_binary_matches_tflm(oracle, op, data):
    s1, s2, out = data.draw(broadcast_shapes())
    x1, x2 = values(data.draw, s1, "bool"), values(data.draw, s2, "bool")
    const = draw_const(data.draw)
    defs = [operand(s1, "bool", x1, const=const[0]), operand(s2, "bool", x2, const=const[1])]
    model = single_op_model(op, defs, [TensorDef(out, "BOOL")])
    compare_with_tflm(oracle, model, runtime_inputs(defs, [x1, x2]), context=op)


@given(data=st.data())
def test_logical_not_matches_tflm(oracle, data):
    shape = data.draw(shapes(0, 6, 1, 6))
    x = values(data.draw, shape, "bool")
    model = single_op_model("LOGICAL_NOT", [TensorDef(shape, "BOOL")], [TensorDef(shape, "BOOL")])
    compare_with_tflm(oracle, model, [x], context="LOGICAL_NOT")


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
@pytest.mark.parametrize("types, shapes_, message", [
    (("INT8", "BOOL", "BOOL"), ((2, 3), (2, 3), (2, 3)), "BOOL tensors only"),
    (("BOOL", "BOOL", "INT32"), ((2, 3), (2, 3), (2, 3)), "BOOL tensors only"),
    (("BOOL", "BOOL", "BOOL"), ((2, 3), (3, 2), (2, 3)), "do not broadcast"),
    (("BOOL", "BOOL", "BOOL"), ((2, 3), (1, 3), (3, 2)), "output has shape"),
    (("BOOL", "BOOL", "BOOL"), ((2, 3), (2, 3), (7,)), "elements"),
])
def test_logical_binary_rejects_bad_models(op, types, shapes_, message):
    model = single_op_model(op, [TensorDef(shapes_[0], types[0]), TensorDef(shapes_[1], types[1])],
                            [TensorDef(shapes_[2], types[2])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert op in str(info.value)


@pytest.mark.parametrize("types, shapes_, message", [
    (("FLOAT32", "FLOAT32"), ((2, 3), (2, 3)), "not supported"),
    (("BOOL", "INT8"), ((2, 3), (2, 3)), "must match"),
    (("BOOL", "BOOL"), ((2, 3), (7,)), "element counts"),
])
def test_logical_not_rejects_bad_models(types, shapes_, message):
    model = single_op_model("LOGICAL_NOT", [TensorDef(shapes_[0], types[0])], [TensorDef(shapes_[1], types[1])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert "LOGICAL_NOT" in str(info.value)
