"""FULLY_CONNECTED against TFLM: hypothesis draws shapes, types and quantization."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import activations, arrays, scales, zero_points

pytestmark = pytest.mark.oracle


@st.composite
def fc_case(draw):
    kind = draw(st.sampled_from(["int8", "int8_per_channel", "float32", "int16", "int16_int64_bias"]))
    batches = draw(st.integers(1, 4))
    depth = draw(st.integers(1, 64))
    units = draw(st.integers(1, 32))
    act = draw(activations)
    has_bias = draw(st.booleans())
    if kind == "float32":
        x = arrays(draw, (batches, depth), "float32")
        w = arrays(draw, (units, depth), "float32", -1.0, 1.0)
        bias = TensorDef((units,), "FLOAT32", data=arrays(draw, (units,), "float32")) if has_bias else None
        model = single_op_model("FULLY_CONNECTED",
                                [TensorDef((batches, depth), "FLOAT32"),
                                 TensorDef((units, depth), "FLOAT32", data=w), bias],
                                [TensorDef((batches, units), "FLOAT32")],
                                fused_activation_function=act)
        return model, [x]
    io = "int16" if kind.startswith("int16") else "int8"
    s_in, s_out = draw(scales(1e-3, 0.5)), draw(scales(1e-3, 1.0))
    zp_in = draw(zero_points(io))
    zp_out = draw(zero_points(io))
    per_channel = kind == "int8_per_channel"
    if per_channel:
        s_w = [draw(scales(1e-3, 0.1)) for _ in range(units)]
        wq = (s_w, [0] * units, 0)
    else:
        s_w = draw(scales(1e-3, 0.1))
        wq = (s_w, 0)
    w = arrays(draw, (units, depth), "int8")
    x = arrays(draw, (batches, depth), io)
    bias = None
    if has_bias or kind == "int16_int64_bias":
        bias_type = "INT64" if kind == "int16_int64_bias" else "INT32"
        bscale = (np.float64(s_in) * np.asarray(s_w, np.float64))
        bdata = arrays(draw, (units,), "int32", -5000, 5000)
        bias = TensorDef((units,), bias_type, data=bdata.astype("int64" if bias_type == "INT64" else "int32"),
                         quant=(bscale if per_channel else [bscale], [0] * (units if per_channel else 1)))
    model = single_op_model("FULLY_CONNECTED",
                            [TensorDef((batches, depth), io.upper(), quant=(s_in, zp_in)),
                             TensorDef((units, depth), "INT8", data=w, quant=wq), bias],
                            [TensorDef((batches, units), io.upper(), quant=(s_out, zp_out))],
                            fused_activation_function=act)
    return model, [x]


@given(fc_case())
def test_fully_connected_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="FULLY_CONNECTED")


@given(st.data())
def test_weights_and_bias_given_at_run_time_match_tflm(oracle, data):
    """Weights (and bias) that are model inputs, over a run of invokes that repeats and
    changes them (host copies built on the first invoke of new bytes, output stages on
    the second, both replaced when the bytes change): every invoke equals TFLM's."""
    draw = data.draw
    kind = draw(st.sampled_from(["int8", "int8_per_channel", "float32", "int16"]))
    batches, depth, units = draw(st.integers(1, 3)), draw(st.integers(1, 24)), draw(st.integers(1, 12))
    act = draw(activations)
    has_bias = draw(st.booleans())
    if kind == "float32":
        io, wq, bq, bias_type = "float32", None, None, "FLOAT32"
        xq = oq = None
        draw_w = lambda: arrays(draw, (units, depth), "float32", -1.0, 1.0)   # noqa: E731
        draw_b = lambda: arrays(draw, (units,), "float32")                    # noqa: E731
    else:
        io = "int16" if kind == "int16" else "int8"
        s_in, s_out = draw(scales(1e-3, 0.5)), draw(scales(1e-3, 1.0))
        xq, oq = (s_in, draw(zero_points(io))), (s_out, draw(zero_points(io)))
        if kind == "int8_per_channel":
            s_w = [draw(scales(1e-3, 0.1)) for _ in range(units)]
            wq = (s_w, [0] * units, 0)
        else:
            s_w = draw(scales(1e-3, 0.1))
            wq = (s_w, 0)
        bscale = np.float64(s_in) * np.asarray(s_w, np.float64)
        bq = (bscale if kind == "int8_per_channel" else [bscale],
              [0] * (units if kind == "int8_per_channel" else 1))
        bias_type = "INT32"
        draw_w = lambda: arrays(draw, (units, depth), "int8")                 # noqa: E731
        draw_b = lambda: arrays(draw, (units,), "int32", -5000, 5000)          # noqa: E731
    constants = [[draw_w()] + ([draw_b()] if has_bias else []) for _ in range(2)]
    order = draw(st.lists(st.integers(0, 1), min_size=3, max_size=7))
    runs = [[arrays(draw, (batches, depth), io)] + constants[k] for k in order]
    model = single_op_model(
        "FULLY_CONNECTED",
        [TensorDef((batches, depth), io.upper(), quant=xq),
         TensorDef((units, depth), "FLOAT32" if io == "float32" else "INT8", quant=wq),
         TensorDef((units,), bias_type, quant=bq) if has_bias else None],
        [TensorDef((batches, units), io.upper(), quant=oq)], fused_activation_function=act)
    theirs = oracle.run(model, runs=runs)
    assert theirs.ok, theirs.error
    it = run_ours(model, runs[0])[2]
    for k, run in enumerate(runs):
        for i, x in enumerate(run):
            it.set_input(x, i)
        it.invoke()
        assert it.output(0).tobytes() == np.asarray(theirs.invokes[k][0]).tobytes(), \
            f"invoke {k} (weights {order[k]} after {order[:k]})"


# issue 17: ad01_int8's last FULLY_CONNECTED (operator 9), its scales as stored in the model
AD01_SCALES = dict(s_in=0.024790890514850616, s_w=0.0195566825568676, s_bias=0.0004848275857511908,
                   s_out=0.36449846625328064, zp_out=96)


@pytest.mark.parametrize("accumulator", [-88337, -88336, -88338, -88001, 88337])
def test_multiplier_is_the_double_product_of_the_scales(oracle, accumulator):
    """TFLM's multiplier is double(input scale) * double(filter scale) / double(output
    scale) (1462485049 here, shift -9); the float32 product of the two scales gives
    1462485078, one output step off on the accumulator -88337 (issue 17: ad01_int8 gave -22
    where TFLM gives -21)."""
    p = AD01_SCALES
    model = single_op_model(
        "FULLY_CONNECTED",
        [TensorDef((1, 1), "INT8", quant=(p["s_in"], -128)),
         TensorDef((1, 1), "INT8", data=np.array([[1]], np.int8), quant=(p["s_w"], 0)),
         TensorDef((1,), "INT32", data=np.array([accumulator], np.int32), quant=([p["s_bias"]], [0]))],
        [TensorDef((1, 1), "INT8", quant=(p["s_out"], p["zp_out"]))])
    ours, _ = compare_with_tflm(oracle, model, [np.array([[-128]], np.int8)], context="FC ad01 scales")
    if accumulator == -88337:
        assert int(ours[0].ravel()[0]) == -21
