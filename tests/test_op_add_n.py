"""ADD_N against TFLM: float32 (sequential float sum from +0.0, special values) and int8
(shared input quantization, the offset-seeded accumulator, int32 wrap with many inputs),
2 to 24 inputs of one shape (rank 0-6), constant inputs; the scratch buffer of input
pointers and int8's OpData; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import operand, runtime_inputs, values
from tests.strategies import scales, shapes, zero_points

pytestmark = pytest.mark.oracle


@given(data=st.data())
def test_add_n_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    shape = data.draw(shapes(0, 6, 1, 5))
    n = data.draw(st.one_of(st.integers(2, 5), st.integers(2, 24)))
    xs = [values(data.draw, shape, dtype) for _ in range(n)]
    if dtype == "float32" and data.draw(st.integers(0, 4)) == 0:
        xs = [np.full(shape, -0.0, np.float32) for _ in range(n)]
    q_in = q_out = None
    if dtype == "int8":
        q_in = (data.draw(scales(1e-3, 2.0)), data.draw(zero_points("int8")))
        q_out = q_in if data.draw(st.integers(0, 3)) == 0 else (
            data.draw(scales(1e-3, 8.0)), data.draw(zero_points("int8")))
    consts = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if all(consts):
        consts[0] = False
    defs = [operand(shape, dtype, x, q_in, c) for x, c in zip(xs, consts)]
    model = single_op_model("ADD_N", defs, [TensorDef(shape, dtype.upper(), q_out)])
    compare_with_tflm(oracle, model, runtime_inputs(defs, xs), context="ADD_N")


def _model(types, shapes_, quants=None):
    quants = quants or [None] * len(types)
    return single_op_model("ADD_N", [TensorDef(s, t, q) for s, t, q in zip(shapes_[:-1], types[:-1], quants[:-1])],
                           [TensorDef(shapes_[-1], types[-1], quants[-1])])


@pytest.mark.parametrize("types, shapes_, quants, message", [
    (("FLOAT32", "FLOAT32"), ((2, 3), (2, 3)), None, "at least two inputs"),
    (("FLOAT32", "FLOAT32", "INT8"), ((2, 3),) * 3, None, "output type"),
    (("FLOAT32", "INT8", "FLOAT32"), ((2, 3),) * 3, None, "same type"),
    (("FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (1, 3), (2, 3)), None, "same shape"),
    (("FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (2, 3), (7,)), None, "elements"),
    (("INT32", "INT32", "INT32"), ((2, 3),) * 3, None, "FLOAT32 and INT8"),
    (("INT16", "INT16", "INT16"), ((2, 3),) * 3, None, "FLOAT32 and INT8"),
    (("INT8", "INT8", "INT8"), ((2, 3),) * 3, [(0.5, 1), (0.5, 2), (0.5, 0)], "share"),
    (("INT8", "INT8", "INT8"), ((2, 3),) * 3, [(0.5, 1), (0.25, 1), (0.5, 0)], "share"),
    (("INT8", "INT8", "INT8"), ((2, 3),) * 3, None, "positive"),
    (("INT8", "INT8", "INT8"), ((2, 3),) * 3, [(1.0, 0), (1.0, 0), (1e-6, 0)], "2\\^19"),
])
def test_add_n_rejects_bad_models(types, shapes_, quants, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(types, shapes_, quants), [])
    assert "ADD_N" in str(info.value)
