"""BROADCAST_ARGS against TFLM: int32 and int64 shape vectors of any lengths (including
empty), 1s on either side, output lengths shorter or longer than the inputs, int64
entries beyond int32 (TFLM truncates them to int), constant and run-time inputs; no
arena allocation beyond temporaries; clear errors for bad models and incompatible
shapes (TFLM aborts on those)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model

pytestmark = pytest.mark.oracle


@st.composite
def compatible_shapes(draw):
    """Two shape vectors whose right-aligned entries are equal or 1 (after truncation of
    int64 entries to 32 bits), and an output length."""
    n = draw(st.integers(0, 7))
    full = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))

    def side():
        keep = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        s = [d if k else 1 for d, k in zip(full, keep)]
        return s[draw(st.integers(0, n)):]
    a, b = side(), side()
    out_len = draw(st.one_of(st.just(max(len(a), len(b))), st.integers(0, 8)))
    return a, b, out_len


@given(data=st.data())
def test_broadcast_args_matches_tflm(oracle, data):
    dtype = data.draw(st.sampled_from(["int32", "int64"]))
    a, b, n = data.draw(compatible_shapes())
    a, b = np.array(a, dtype), np.array(b, dtype)
    if dtype == "int64" and data.draw(st.booleans()):
        # entries differing above bit 31: TFLM compares and writes their low 32 bits
        a = a + (np.int64(data.draw(st.sampled_from([1, -1, 5]))) << 32) * (a == 1)
    const = data.draw(st.integers(0, 3))
    defs = [TensorDef(a.shape, dtype.upper(), data=a if const == 1 else None),
            TensorDef(b.shape, dtype.upper(), data=b if const == 2 else None)]
    model = single_op_model("BROADCAST_ARGS", defs, [TensorDef((n,), dtype.upper())])
    inputs = [x for d, x in zip(defs, (a, b)) if d.data is None]
    compare_with_tflm(oracle, model, inputs, context="BROADCAST_ARGS")


def _model(t1="INT32", t2="INT32", to="INT32", s1=(2,), s2=(2,), so=(2,)):
    return single_op_model("BROADCAST_ARGS", [TensorDef(s1, t1), TensorDef(s2, t2)], [TensorDef(so, to)])


@pytest.mark.parametrize("kwargs, message", [
    (dict(t1="FLOAT32", t2="FLOAT32", to="FLOAT32"), "INT32 or INT64"),
    (dict(t2="INT64"), "must match"),
    (dict(to="INT64"), "must match"),
    (dict(s1=(1, 2)), "1-D"),
    (dict(so=()), "1-D"),
])
def test_broadcast_args_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "BROADCAST_ARGS" in str(info.value)


def test_broadcast_args_incompatible_constant_shapes_are_refused():
    model = single_op_model("BROADCAST_ARGS", [TensorDef((2,), "INT32", data=np.array([2, 3], np.int32)),
                                               TensorDef((1,), "INT32", data=np.array([4], np.int32))],
                            [TensorDef((2,), "INT32")])
    with pytest.raises(KernelError, match="do not broadcast"):
        run_ours(model, [])


def test_broadcast_args_incompatible_runtime_shapes_fail_at_invoke():
    model = _model()
    with pytest.raises(KernelError, match="do not broadcast"):
        run_ours(model, [np.array([2, 3], np.int32), np.array([2, 4], np.int32)])
