"""SELECT_V2 against TFLM: float32 (special values), int8 and int16 (quantization carried,
ignored), three-way broadcasting up to 6-D including TFLM's mixed single-element
shapes, constant operands; the OpData allocation; clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.binary_helpers import MAX_ELEMENTS
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.logic_helpers import operand, runtime_inputs, values

pytestmark = pytest.mark.oracle


@st.composite
def select_shapes(draw):
    """(cond, x, y, output) shapes: all equal, numpy-broadcasting, or all single-element."""
    kind = draw(st.sampled_from(["same", "broadcast", "broadcast", "broadcast", "scalars"]))
    if kind == "scalars":
        picks = st.sampled_from([(), (1,), (1, 1), (1, 1, 1)])
        return tuple(draw(picks) for _ in range(4))
    rank = draw(st.integers(0 if kind == "same" else 1, 6))
    full = list(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    while int(np.prod(full)) > MAX_ELEMENTS:
        full[full.index(max(full))] //= 2
    full = tuple(full)
    if kind == "same":
        return full, full, full, full

    def side():
        keep = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        s = tuple(d if k else 1 for d, k in zip(full, keep))
        return s[draw(st.integers(0, rank)):]
    sh = [side(), side(), side()]
    sh[draw(st.integers(0, 2))] = full if draw(st.booleans()) else sh[0]
    out_rank = max(len(s) for s in sh)
    out = tuple(np.broadcast_shapes(*sh))
    out = (1,) * (out_rank - len(out)) + out
    return sh[0], sh[1], sh[2], out


@given(data=st.data())
def test_select_v2_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(["float32", "int8", "int16"]))
    sc, sx, sy, so = data.draw(select_shapes())
    c = values(data.draw, sc, "bool")
    x, y = values(data.draw, sx, dtype), values(data.draw, sy, dtype)
    q = (0.25, -3) if dtype == "int8" and data.draw(st.booleans()) else None
    kinds = data.draw(st.integers(0, 7))
    defs = [operand(sc, "bool", c, const=kinds == 1), operand(sx, dtype, x, q, const=kinds == 2),
            operand(sy, dtype, y, q, const=kinds == 3)]
    if all(d.data is not None for d in defs):
        defs[0] = operand(sc, "bool", c)
    model = single_op_model("SELECT_V2", defs, [TensorDef(so, dtype.upper(), q)])
    compare_with_tflm(oracle, model, runtime_inputs(defs, [c, x, y]), context="SELECT_V2")


@pytest.mark.parametrize("types, shapes_, message", [
    (("INT8", "FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3),) * 4, "condition must be BOOL"),
    (("BOOL", "FLOAT32", "INT8", "FLOAT32"), ((2, 3),) * 4, "must match"),
    (("BOOL", "INT32", "INT32", "INT32"), ((2, 3),) * 4, "int8|int16|float32"),
    (("BOOL", "BOOL", "BOOL", "BOOL"), ((2, 3),) * 4, "int8|int16|float32"),
    (("BOOL", "FLOAT32", "FLOAT32", "INT8"), ((2, 3),) * 4, "output type"),
    (("BOOL", "FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (3, 3), (2, 3), (2, 3)), "not broadcastable"),
    (("BOOL", "FLOAT32", "FLOAT32", "FLOAT32"), ((2, 1), (1, 3), (2, 3), (3, 3)), "output has shape"),
    (("BOOL", "FLOAT32", "FLOAT32", "FLOAT32"), ((2, 1), (1, 3), (2, 3), (1, 2, 3)), "rank"),
    (("BOOL", "FLOAT32", "FLOAT32", "FLOAT32"), ((2, 3), (2, 3), (2, 3), (7,)), "elements"),
    (("BOOL", "FLOAT32", "FLOAT32", "FLOAT32"), ((1,) * 7, (1,) * 7, (2,) + (1,) * 6, (2,) + (1,) * 6), "at most 6"),
])
def test_select_v2_rejects_bad_models(types, shapes_, message):
    model = single_op_model("SELECT_V2", [TensorDef(s, t) for s, t in zip(shapes_[:3], types[:3])],
                            [TensorDef(shapes_[3], types[3])])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert "SELECT_V2" in str(info.value)
