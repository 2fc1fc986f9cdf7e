"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL against TFLM: every type
path of TFLM's kernel (bool for (NOT_)EQUAL; float32 with NaN / infinities / signed zeros;
int32; int64; int8 with rescaled comparison of differently quantized operands),
broadcasting up to 6-D, constant operands, many ties; the OpData allocation; clear errors
for bad models (including int16 GREATER, whose TFLM params are uninitialised)."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import broadcast_shapes, draw_const
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import operand, runtime_inputs, values
from tests.strategies import scales

pytestmark = pytest.mark.oracle
OPS = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]
TYPES = {op: ["float32", "int32", "int64", "int8"] + (["bool"] if op in ("EQUAL", "NOT_EQUAL") else [])
         for op in OPS}


@st.composite
def comparison_case(draw, op):
    dtype = draw(st.sampled_from(TYPES[op]))
    s1, s2, out = draw(broadcast_shapes())
    x1, x2 = values(draw, s1, dtype), values(draw, s2, dtype)
    q1 = q2 = None
    if dtype == "int8":
        def quant():
            scale = draw(scales(1e-4, 0.999))
            return (scale, draw(st.integers(-128, 127)))
        q1 = quant()
        q2 = q1 if draw(st.booleans()) else quant()
    elif dtype in ("int32", "int64", "float32") and draw(st.integers(0, 4)) == 0:
        q1 = q2 = (0.5, 0)            # carried, ignored by TFLM
    const = draw_const(draw)
    defs = [operand(s1, dtype, x1, q1, const[0]), operand(s2, dtype, x2, q2, const[1])]
    model = single_op_model(op, defs, [TensorDef(out, "BOOL")])
    return model, runtime_inputs(defs, [x1, x2])


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_comparison_matches_tflm(oracle, op, data):
    model, inputs = data.draw(comparison_case(op))
    compare_with_tflm(oracle, model, inputs, context=op)


@pytest.mark.parametrize("op", OPS)
def test_int8_rescaled_comparison_all_pairs(oracle, op):
    """All 65536 int8 pairs under two different quantizations."""
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    model = single_op_model(op, [TensorDef((256, 256), "INT8", (0.0371, 5)),
                                 TensorDef((256, 256), "INT8", (0.0123, -17))],
                            [TensorDef((256, 256), "BOOL")])
    compare_with_tflm(oracle, model, [a, b], context=op)


def _run(op, types, shapes, quants=(None, None)):
    model = single_op_model(op, [TensorDef(shapes[0], types[0], quants[0]),
                                 TensorDef(shapes[1], types[1], quants[1])],
                            [TensorDef(shapes[2], types[2])])
    with pytest.raises(KernelError) as info:
        run_ours(model, [])
    assert op in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("types, shapes, quants, message", [
    (("INT8", "INT32", "BOOL"), ((2, 3), (2, 3), (2, 3)), ((0.5, 0), None), "must match"),
    (("UINT8", "UINT8", "BOOL"), ((2, 3), (2, 3), (2, 3)), (None, None), "not supported"),
    (("FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (2, 3), (2, 3)), (None, None), "must be BOOL"),
    (("FLOAT32", "FLOAT32", "BOOL"), ((2, 3), (3, 2), (2, 3)), (None, None), "do not broadcast"),
    (("FLOAT32", "FLOAT32", "BOOL"), ((2, 3), (1, 3), (3, 2)), (None, None), "output has shape"),
    (("FLOAT32", "FLOAT32", "BOOL"), ((1,) * 7, (1,) * 7, (1,) * 7), (None, None), "at most 6"),
    (("INT8", "INT8", "BOOL"), ((2, 3), (2, 3), (2, 3)), ((1.5, 0), (0.5, 0)), r"in \(0, 1\)"),
    (("INT8", "INT8", "BOOL"), ((2, 3), (2, 3), (2, 3)), (None, None), r"in \(0, 1\)"),
])
def test_comparison_rejects_bad_models(op, types, shapes, quants, message):
    assert re.search(message, _run(op, types, shapes, quants))


@pytest.mark.parametrize("op", ["LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"])
def test_ordering_rejects_bool(op):
    assert "not supported" in _run(op, ("BOOL", "BOOL", "BOOL"), ((2,), (2,), (2,)))


def test_int16_greater_is_refused():
    msg = _run("GREATER", ("INT16", "INT16", "BOOL"), ((2,), (2,), (2,)), ((0.5, 0), (0.5, 0)))
    assert "never initialises" in msg
    for op in ("EQUAL", "LESS"):
        assert "not supported" in _run(op, ("INT16", "INT16", "BOOL"), ((2,), (2,), (2,)))
