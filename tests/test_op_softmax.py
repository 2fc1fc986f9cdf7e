"""SOFTMAX against TFLM: float32, int8 -> int8, int8 -> int16, int16 -> int16 (with its
exp / reciprocal lookup tables), over the last axis of 1-D to 4-D tensors; plus clear
errors for the quantization TFLM rejects."""
import numpy as np
import pytest
from hypothesis import assume, event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales, shapes

pytestmark = pytest.mark.oracle

KINDS = {  # kind: (input type, output type, output quantization)
    "float32": ("FLOAT32", "FLOAT32", None),
    "int8": ("INT8", "INT8", (1.0 / 256, -128)),
    "int8_int16": ("INT8", "INT16", (1.0 / 65536, -32768)),
    "int16": ("INT16", "INT16", (1.0 / 32768, 0)),
}


@st.composite
def softmax_case(draw):
    kind = draw(st.sampled_from(sorted(KINDS)))
    event(kind)
    in_type, out_type, out_q = KINDS[kind]
    if draw(st.integers(0, 9)) == 0:
        shape = (draw(st.integers(1, 3)), draw(st.integers(100, 1200)))   # long rows
    else:
        shape = draw(shapes(1, 4, 1, 6)) + (draw(st.integers(1, 40)),)
        shape = shape[-draw(st.integers(1, len(shape))):]
    beta = draw(st.sampled_from([1.0, 0.5, 2.0]) | scales(0.05, 4.0))
    if kind == "float32":
        in_q = None
        if draw(st.integers(0, 9)) == 0:
            beta = -beta     # TFLM's float kernel takes any beta (exp may overflow to inf)
        spread = draw(st.sampled_from([1.0, 10.0, 50.0]))
        x = arrays(draw, shape, "float32", -spread, spread)
    elif kind == "int16":
        in_q = (draw(scales(1e-4, 2e-3)), 0)
        x = arrays(draw, shape, "int16")
    else:
        in_q = (draw(scales(1e-3, 0.5)), draw(st.integers(-128, 127)))
        x = arrays(draw, shape, "int8")
    if in_type != "FLOAT32" and draw(st.booleans()):
        # many ties at the row maximum, as after a saturated layer
        x = np.maximum(x, x.dtype.type(np.percentile(x.astype(np.float64), 60)))
    if kind == "int8":
        # TFLM aborts when a row's sum of exps reaches 512 (see the test below)
        rows = x.reshape(-1, shape[-1]).astype(np.float64)
        sums = np.exp((rows - rows.max(axis=1, keepdims=True)) * beta * in_q[0]).sum(axis=1)
        assume(sums.max() < 500)
    model = single_op_model("SOFTMAX", [TensorDef(shape, in_type, in_q)],
                            [TensorDef(shape, out_type, out_q)], beta=beta)
    return model, [x]


@given(softmax_case())
def test_softmax_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="SOFTMAX")


@given(st.data())
def test_softmax_int8_outputs_kept_by_sum_match_tflm(oracle, data):
    """One interpreter, many int8 invokes of one row or of blocks of rows drawn from a
    small pool (so that sums of exps repeat within an invoke and across invokes: the
    outputs kept per sum are read, the store is cleared when full), or of all-distinct
    rows (the plain vectorised routine): every invoke's outputs equal TFLM's."""
    from kernels import softmax
    draw = data.draw
    kind = draw(st.sampled_from(["int8", "int8_int16"]))
    in_type, out_type, out_q = KINDS[kind]
    depth = draw(st.integers(1, 40))   # a sum of exps stays below 512 (TFLM's limit)
    rows = draw(st.sampled_from([1, 1, 2, 7, 40, 300]))
    shape = draw(st.sampled_from([(rows, depth), (1, rows, depth)] + ([(depth,)] if rows == 1 else [])))
    in_q = (draw(scales(1e-3, 0.5)), draw(st.integers(-128, 127)))
    beta = draw(st.sampled_from([1.0, 0.5, 2.0]) | scales(0.05, 4.0))
    pool = arrays(draw, (draw(st.integers(1, 6)), depth), "int8")
    distinct = draw(st.booleans())
    runs = []
    for _ in range(draw(st.integers(3, 12))):
        if distinct:
            x = arrays(draw, (rows, depth), "int8")
        else:
            x = pool[np.random.default_rng(len(runs)).integers(0, len(pool), rows)]
        runs.append([x.reshape(shape)])
    model = single_op_model("SOFTMAX", [TensorDef(shape, in_type, in_q)],
                            [TensorDef(shape, out_type, out_q)], beta=beta)
    theirs = oracle.run(model, runs=runs)
    assert theirs.ok, theirs.error
    kept = softmax._ROW_OUTPUTS_KEPT
    softmax._ROW_OUTPUTS_KEPT = draw(st.sampled_from([kept, 2]))
    try:
        it = run_ours(model, runs[0])[2]
        for k, run in enumerate(runs):
            it.set_input(run[0], 0)
            it.invoke()
            out = it.output(0)
            assert out.tobytes() == np.asarray(theirs.invokes[k][0]).tobytes(), f"invoke {k}"
    finally:
        softmax._ROW_OUTPUTS_KEPT = kept


def test_softmax_float_special_values(oracle):
    x = np.array([[np.nan, 1, 2, 3], [-np.inf, -np.inf, 0, 0], [np.inf, 0, 1, 2],
                  [-80, -90, -100, 0]], np.float32)
    model = single_op_model("SOFTMAX", [TensorDef((4, 4), "FLOAT32")], [TensorDef((4, 4), "FLOAT32")],
                            beta=1.0)
    compare_with_tflm(oracle, model, [x], context="SOFTMAX")


def _model(in_type="INT8", out_type="INT8", in_q=(0.1, 0), out_q=(1 / 256, -128), shape=(2, 5), beta=1.0,
           out_shape=None):
    return single_op_model("SOFTMAX", [TensorDef(shape, in_type, in_q)],
                           [TensorDef(out_shape or shape, out_type, out_q)], beta=beta)


@pytest.mark.parametrize("kwargs, message", [
    (dict(out_q=(1 / 256, -127)), "zero point must be -128"),
    (dict(out_q=(1 / 255, -128)), "scale must be 1/256"),
    (dict(out_type="INT16", out_q=(1 / 65536, 0)), "-32768"),
    (dict(out_type="INT16", out_q=(1 / 60000, -32768)), "1/65536"),
    (dict(in_type="INT16", out_type="INT16", in_q=(0.001, 0), out_q=(1 / 32768, 1)), "zero point"),
    (dict(in_type="INT16", out_type="INT16", in_q=(0.001, 3), out_q=(1 / 32768, 0)), "zero points of 0"),
    (dict(in_type="INT16", out_type="INT16", in_q=(0.001, 0), out_q=(1 / 30000, 0)), "1/32768"),
    (dict(in_type="INT16", out_type="INT8", in_q=(0.001, 0)), "differ"),
    (dict(in_type="FLOAT32", out_type="INT16", in_q=None), "int8 or int16 input"),
    (dict(in_type="INT32", out_type="INT32", in_q=None, out_q=None), "not supported"),
    (dict(out_shape=(2, 4)), "does not match"),
    (dict(in_q=(1e-9, 0), beta=1e-3), "too small"),
])
def test_softmax_rejects_bad_models(kwargs, message):
    with pytest.raises(KernelError, match=message) as info:
        run_ours(_model(**kwargs), [])
    assert "SOFTMAX" in str(info.value)


def test_softmax_ops_of_zoo_models(oracle):
    from tests.zoo_op_cases import zoo_op_cases
    cases = list(zoo_op_cases("SOFTMAX"))
    assert cases
    for label, model, inputs in cases:
        compare_with_tflm(oracle, model, inputs, context=f"SOFTMAX of {label}")


def test_softmax_int8_row_sum_too_large_is_an_error(oracle):
    """TFLM aborts (TFLITE_CHECK) when an int8 -> int8 row's sum of exps reaches 512;
    we raise a KernelError at invoke instead."""
    model = _model(shape=(1, 512), in_q=(0.01, 0))
    x = np.zeros((1, 512), np.int8)
    assert not oracle.run(model, [x]).ok
    with pytest.raises(KernelError, match="sum of exponentials is too large") as info:
        run_ours(model, [x])
    assert "SOFTMAX" in str(info.value)
    # 511 equal values are fine
    model = _model(shape=(1, 511), in_q=(0.01, 0))
    compare_with_tflm(oracle, model, [np.zeros((1, 511), np.int8)], context="SOFTMAX")
