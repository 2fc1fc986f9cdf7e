"""EMBEDDING_LOOKUP against TFLM: float32 and int8 tables (2-D to 4-D) with int32 ids
(constant or run-time, repeated), int8 -> int8 copies and int8 -> float32 dequantization
(hybrid); TFLM's prepare errors and its out-of-bounds error."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import scales, shapes

pytestmark = pytest.mark.oracle


@st.composite
def embedding_lookup_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "hybrid"]))
    rows = draw(st.integers(1, 12))
    table_shape = (rows,) + draw(shapes(1, 3, 1, 5))
    n = draw(st.integers(1, 10))
    ids = np.array([draw(st.integers(0, rows - 1)) for _ in range(n)], np.int32)
    table_dtype = "float32" if kind == "float32" else "int8"
    out_dtype = "int8" if kind == "int8" else "float32"
    q = None
    if kind == "hybrid":
        q = (draw(scales(1e-3, 2.0)), 0)
    elif kind == "int8" and draw(st.booleans()):
        q = (draw(scales(1e-3, 2.0)), draw(st.integers(-128, 127)))
    const_ids, const_table = draw(st.booleans()), draw(st.booleans())
    table = any_array(draw, table_shape, table_dtype)
    event(f"{kind} const_ids={const_ids}")
    model = single_op_model("EMBEDDING_LOOKUP", [
        TensorDef(ids.shape, "INT32", data=ids if const_ids else None),
        TensorDef(table_shape, table_dtype.upper(), q, data=table if const_table else None)],
        [TensorDef((n,) + table_shape[1:], out_dtype.upper(), q if kind == "int8" else None)])
    return model, ([] if const_ids else [ids]) + ([] if const_table else [table])


@given(embedding_lookup_case())
def test_embedding_lookup_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="EMBEDDING_LOOKUP")


def _model(ids_shape=(2,), table_shape=(4, 3), out_shape=(2, 3), ids_type="INT32", table_type="FLOAT32",
           out_type=None, q=None, ids=None):
    return single_op_model("EMBEDDING_LOOKUP", [
        TensorDef(ids_shape, ids_type, data=ids), TensorDef(table_shape, table_type, q, data=np.zeros(table_shape, table_type.lower()))],
        [TensorDef(out_shape, out_type or table_type)])


def test_embedding_lookup_errors(oracle):
    i = [np.array([0, 1], np.int32)]
    assert_both_reject(oracle, _model(ids_shape=(1, 2), out_shape=(1, 3)), [i[0].reshape(1, 2)], "ids must be 1-D")
    assert_both_reject(oracle, _model(ids_type="INT64"), [i[0].astype(np.int64)], "ids must be int32")
    assert_both_reject(oracle, _model(table_shape=(4,), out_shape=(2,)), i, "2 or more dimensions")
    assert_both_reject(oracle, _model(table_type="INT16", out_type="INT16"), i, "table type INT16")
    assert_both_reject(oracle, _model(out_type="INT8"), i, "output type INT8 is not supported")
    assert_both_reject(oracle, _model(table_type="INT8", out_type="FLOAT32", q=(0.5, 3)), i, "zero point 0, got 3")
    assert_both_reject(oracle, _model(table_shape=(4, 3, 2), out_shape=(2, 3)), i, "fewer than the table's 3")
    assert_both_reject(oracle, _model(ids=np.array([0, 4], np.int32)), [],
                       "index out of bounds. Got 4, and bounds are [0, 3]", tflm_stage="invoke")


def test_embedding_lookup_runtime_id_out_of_bounds(oracle):
    model = _model()
    with pytest.raises(KernelError, match="Got -1, and bounds are"):
        run_ours(model, [np.array([0, -1], np.int32)])
    assert oracle.run(model, [np.array([0, -1], np.int32)]).stage == "invoke"


def test_embedding_lookup_min_arena(oracle):
    model = _model(table_type="INT8", out_type="FLOAT32", q=(0.5, 0))
    assert_same_min_arena(oracle, model, [np.array([0, 1], np.int32)])
