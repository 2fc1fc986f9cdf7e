"""BATCH_MATMUL against TFLM: float32, int8 (any zero points) and int16 (zero points 0),
ranks 2 to 5 with broadcast batch dimensions, adj_x / adj_y, constant or run-time
operands; int32 accumulator wrap-around on a deep int8 product; TFLM's prepare errors."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_both_reject, assert_same_arena_fits, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import scales, shapes

pytestmark = pytest.mark.oracle


def _operand_batch(draw, batch):
    """A suffix of the output batch shape with some dimensions turned into 1 (broadcast)."""
    keep = draw(st.integers(0, len(batch)))
    dims = batch[len(batch) - keep:]
    return tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in dims)


@st.composite
def batch_matmul_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8", "int16"]))
    batch = draw(shapes(0, 3, 1, 3))
    m, k, n = draw(st.integers(1, 7)), draw(st.integers(1, 9)), draw(st.integers(1, 7))
    adj_x, adj_y = draw(st.booleans()), draw(st.booleans())
    a_batch, b_batch = _operand_batch(draw, batch), _operand_batch(draw, batch)
    # the output batch is the broadcast of the operands' batches
    out_batch = tuple(int(d) for d in np.broadcast_shapes(a_batch, b_batch))
    a_shape = a_batch + ((k, m) if adj_x else (m, k))
    b_shape = b_batch + ((n, k) if adj_y else (k, n))
    qa = qb = qo = None
    if dtype != "float32":
        zp = (lambda: draw(st.integers(-128, 127))) if dtype == "int8" else (lambda: 0)
        qa, qb = (draw(scales(1e-3, 0.5)), zp()), (draw(scales(1e-3, 0.5)), zp())
        qo = (draw(scales(1e-4, 0.5)), zp())
    const_a, const_b = draw(st.integers(0, 4)) == 0, draw(st.booleans())
    a, b = any_array(draw, a_shape, dtype), any_array(draw, b_shape, dtype)
    if dtype == "float32":
        a, b = a / np.float32(10), b / np.float32(10)
    event(f"{dtype} adj_x={adj_x} adj_y={adj_y} rank={len(out_batch) + 2}")
    model = single_op_model(
        "BATCH_MATMUL",
        [TensorDef(a_shape, dtype.upper(), qa, data=a if const_a else None),
         TensorDef(b_shape, dtype.upper(), qb, data=b if const_b else None)],
        [TensorDef(out_batch + (m, n), dtype.upper(), qo)], adj_x=adj_x, adj_y=adj_y)
    return model, [t for t, c in ((a, const_a), (b, const_b)) if not c]


@given(batch_matmul_case())
def test_batch_matmul_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="BATCH_MATMUL")


def test_batch_matmul_int8_accumulator_wraps_like_tflm(oracle):
    """A depth of 40000 with every (value - zero point) = 255: the int32 sum wraps."""
    k = 40000
    a = np.full((2, k), 127, np.int8)
    b = np.full((k, 2), 127, np.int8)
    b[::3, 1] = -128
    model = single_op_model("BATCH_MATMUL", [TensorDef(a.shape, "INT8", (0.01, -128)),
                                             TensorDef(b.shape, "INT8", (0.01, -128), data=b)],
                            [TensorDef((2, 2), "INT8", (0.5, 3))])
    compare_with_tflm(oracle, model, [a], context="BATCH_MATMUL int32 wrap")


def test_batch_matmul_attention_sized(oracle):
    """Scores of an 8-head attention over 32 tokens of 16 values (adj_y, int8)."""
    rng = np.random.default_rng(7)
    q = rng.integers(-128, 128, (1, 8, 32, 16), dtype=np.int8)
    kt = rng.integers(-128, 128, (1, 8, 32, 16), dtype=np.int8)
    model = single_op_model("BATCH_MATMUL", [TensorDef(q.shape, "INT8", (0.02, 5)),
                                             TensorDef(kt.shape, "INT8", (0.03, -7))],
                            [TensorDef((1, 8, 32, 32), "INT8", (0.1, -2))], adj_y=True)
    compare_with_tflm(oracle, model, [q, kt], context="BATCH_MATMUL attention")


def _model(a_shape=(2, 3), b_shape=(3, 4), out_shape=(2, 4), dtype="FLOAT32", b_dtype=None, out_dtype=None,
           qa=None, qb=None, qo=None, **options):
    return single_op_model("BATCH_MATMUL", [TensorDef(a_shape, dtype, qa), TensorDef(b_shape, b_dtype or dtype, qb)],
                           [TensorDef(out_shape, out_dtype or dtype, qo)], **options)


def _zeros(*shapes_and_types):
    return [np.zeros(s, t) for s, t in shapes_and_types]


def test_batch_matmul_errors(oracle):
    f = _zeros(((2, 3), np.float32), ((3, 4), np.float32))
    assert_both_reject(oracle, _model(dtype="INT32"), _zeros(((2, 3), np.int32), ((3, 4), np.int32)),
                       "lhs type INT32 is not supported")
    assert_both_reject(oracle, _model(b_dtype="INT8", qb=(0.1, 0)), [f[0], np.zeros((3, 4), np.int8)],
                       "hybrid products are not supported")
    assert_both_reject(oracle, _model(out_dtype="INT8", qo=(0.1, 0)), f, "output type INT8 differs")
    assert_both_reject(oracle, _model(a_shape=(3,), out_shape=(4,)), [np.zeros(3, np.float32), f[1]],
                       "lhs has 1 dimensions")
    six = (1, 1, 1, 1, 2, 3)
    assert_both_reject(oracle, _model(a_shape=six, out_shape=(1, 1, 1, 1, 2, 4)),
                       [np.zeros(six, np.float32), f[1]], "lhs has 6 dimensions")
    assert_both_reject(oracle, _model(b_shape=(4, 4), out_shape=(2, 4)), [f[0], np.zeros((4, 4), np.float32)],
                       "the inner dimensions differ")
    assert_both_reject(oracle, _model(a_shape=(2, 2, 3), b_shape=(3, 3, 4), out_shape=(3, 2, 4)),
                       _zeros(((2, 2, 3), np.float32), ((3, 3, 4), np.float32)), "does not broadcast")
    assert_both_reject(oracle, _model(dtype="INT16", qa=(0.1, 1), qb=(0.1, 0), qo=(0.1, 0)),
                       _zeros(((2, 3), np.int16), ((3, 4), np.int16)), "int16 lhs zero point must be 0")
    assert_both_reject(oracle, _model(out_shape=(4, 2, 4)), f, "is not the product's shape (2, 4)")
    assert_both_reject(oracle, _model(out_shape=(2,)), f, "the product has 2 dimensions, the output only 1")


def test_batch_matmul_min_arena(oracle):
    """float32: both operands transposed into persistent copies (adj_x, adj_y false)."""
    model = single_op_model("BATCH_MATMUL", [TensorDef((2, 5, 3), "FLOAT32"), TensorDef((2, 5, 4), "FLOAT32")],
                            [TensorDef((2, 3, 4), "FLOAT32")], adj_x=True, adj_y=False)
    assert_same_min_arena(oracle, model, [np.zeros((2, 5, 3), np.float32), np.zeros((2, 5, 4), np.float32)])


@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (False, True), (True, False)])
def test_batch_matmul_int8_arena_sizes(oracle, adj_x, adj_y):
    """int8: the quantization struct, transposed copies and output dims are written while
    the quantized temporaries are live; in a tight arena they land on them. TFLM then
    aborts at some sizes above the smallest that works: ours agree size by size."""
    a_shape = (2, 5, 3) if adj_x else (2, 3, 5)
    b_shape = (2, 4, 5) if adj_y else (2, 5, 4)
    model = single_op_model("BATCH_MATMUL", [TensorDef(a_shape, "INT8", (0.1, 1)), TensorDef(b_shape, "INT8", (0.2, -3))],
                            [TensorDef((2, 3, 4), "INT8", (0.3, 2))], adj_x=adj_x, adj_y=adj_y)
    assert_same_arena_fits(oracle, model, [np.zeros(a_shape, np.int8), np.zeros(b_shape, np.int8)])
