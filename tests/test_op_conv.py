"""CONV_2D against TFLM: hypothesis draws shapes, strides, dilations, padding, groups,
activations, types (float32, int8 with int8 / int4 weights, int16 with int64 / int32
bias) and per-channel / per-tensor quantization."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import MicroRuntimeError
from tests.conv_helpers import (bias_def, bundled_ops, check_repeated_invokes, filter_quant,
                                float_magnitude, io_scales, maybe_runtime, output_zero_point,
                                pack_int4, spatial)
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import activations, arrays, zero_points

pytestmark = pytest.mark.oracle

KINDS = ["float32", "int8", "int8_per_tensor", "int4", "int16", "int16_int32_bias",
         "int16_no_bias"]


def _inputs(draw, x, w, bias):
    """Without a bias the node has either two inputs or an omitted (-1) third one."""
    if bias is None and draw(st.booleans()):
        return [x, w]
    return [x, w, bias]


@st.composite
def conv_case(draw, kinds=KINDS):
    kind = draw(st.sampled_from(kinds))
    batches = draw(st.integers(1, 2))
    in_h, in_w, kh, kw, sh, sw, dh, dw, pad, out_h, out_w = spatial(draw)
    groups = draw(st.sampled_from([1, 1, 1, 2, 3]))
    filter_depth = draw(st.integers(1, max(1, 16 // groups)))
    in_depth = groups * filter_depth
    out_depth = groups * draw(st.integers(1, max(1, 16 // groups)))
    act = draw(activations)
    has_bias = draw(st.booleans())
    options = dict(padding=pad, stride_w=sw, stride_h=sh, dilation_w_factor=dw,
                   dilation_h_factor=dh, fused_activation_function=act)
    x_shape = (batches, in_h, in_w, in_depth)
    w_shape = (out_depth, kh, kw, filter_depth)
    o_shape = (batches, out_h, out_w, out_depth)
    depth = kh * kw * filter_depth
    if kind == "float32":
        x = arrays(draw, x_shape, "float32") * float_magnitude(draw)
        w = arrays(draw, w_shape, "float32", -1.0, 1.0)
        bias = bias_def(draw, out_depth, "FLOAT32", 0, [], 0) if has_bias else None
        wdef, w_run = maybe_runtime(draw, TensorDef(w_shape, "FLOAT32", data=w))
        model = single_op_model("CONV_2D", _inputs(draw, TensorDef(x_shape, "FLOAT32"), wdef, bias),
                                [TensorDef(o_shape, "FLOAT32")], **options)
        return model, [x] + ([w_run] if w_run is not None else [])
    io = "int16" if kind.startswith("int16") else "int8"
    in_zp = draw(zero_points(io))
    per_channel = kind != "int8_per_tensor" and draw(st.integers(0, 4)) > 0
    fscales, fq = filter_quant(draw, out_depth, per_channel, qdim=0,
                               zero_point_any=kind == "int8_per_tensor")
    lo, hi = (1e-3, 0.2) if io == "int8" else (1e-4, 0.05)
    if draw(st.integers(0, 9)) == 0:
        lo, hi = 0.5, 4.0  # multipliers near / above 1 (left shifts, saturation)
    in_scale, out_scale = io_scales(draw, io, act, fscales, depth, lo, hi)
    out_zp = output_zero_point(draw, io, act)
    if kind == "int4":
        wv = arrays(draw, w_shape, "int8", -8, 7)
        wdef = TensorDef(w_shape, "INT4", data=pack_int4(wv), quant=fq)
    else:
        wdef = TensorDef(w_shape, "INT8", data=arrays(draw, w_shape, "int8"), quant=fq)
    bias = None
    if kind in ("int16", "int16_int32_bias") or (has_bias and kind != "int16_no_bias"):
        btype = {"int16": "INT64", "int16_int32_bias": "INT32"}.get(kind, "INT32")
        magnitude = 1 << 20 if btype == "INT64" else 20000
        bias = bias_def(draw, out_depth, btype, in_scale, fscales, magnitude)
    if kind == "int16_no_bias":
        options["quantized_bias_type"] = draw(st.sampled_from([0, 2, 4]))  # none / INT32 / INT64
    x = arrays(draw, x_shape, io)
    wdef, w_run = maybe_runtime(draw, wdef)
    xdef = TensorDef(x_shape, io.upper(), quant=(in_scale, in_zp))
    model = single_op_model("CONV_2D", _inputs(draw, xdef, wdef, bias),
                            [TensorDef(o_shape, io.upper(), quant=(out_scale, out_zp))], **options)
    return model, [x] + ([w_run] if w_run is not None else [])


@given(conv_case())
def test_conv_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="CONV_2D")


@given(conv_case(kinds=["int8", "int8_per_tensor", "int4"]))
def test_conv_int8_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="CONV_2D int8")


# ------------------------------------------------------------------ deterministic
def _model(x_type="INT8", w_type="INT8", w_shape=(4, 3, 3, 2), x_shape=(1, 5, 5, 2),
           o_shape=(1, 5, 5, 4), o_type=None, bias=None, w_quant=(0.02, 0), **options):
    options.setdefault("stride_w", 1)
    options.setdefault("stride_h", 1)
    options.setdefault("dilation_w_factor", 1)
    options.setdefault("dilation_h_factor", 1)
    o_type = o_type or x_type
    q = (0.1, 0) if x_type != "FLOAT32" else None
    oq = (0.2, 0) if o_type != "FLOAT32" else None
    w_np = {"INT8": np.int8, "INT4": np.int8, "FLOAT32": np.float32, "INT16": np.int16}[w_type]
    w = np.ones(w_shape, dtype=w_np)
    return single_op_model("CONV_2D", [TensorDef(x_shape, x_type, quant=q),
                                       TensorDef(w_shape, w_type, data=w,
                                                 quant=w_quant if w_type != "FLOAT32" else None),
                                       bias],
                           [TensorDef(o_shape, o_type, quant=oq)], **options)


def _prepare_error(model) -> str:
    """The reference kernel's prepare error (what the tflite-micro package reports)."""
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64", error_reporter=lambda m: None)
    with pytest.raises(MicroRuntimeError) as info:
        it.allocate_tensors()
    return str(info.value)


def test_conv_rejects_hybrid():
    msg = _prepare_error(_model(x_type="FLOAT32", w_type="INT8", w_quant=(0.02, 0)))
    assert "Hybrid" in msg and "CONV_2D" in msg


def test_conv_rejects_type_mismatch():
    assert "output type" in _prepare_error(_model(o_type="INT16"))


def test_conv_rejects_channel_mismatch():
    assert "channels" in _prepare_error(_model(o_shape=(1, 5, 5, 3)))


def test_conv_rejects_bad_depth():
    assert "multiple of the filter depth" in _prepare_error(
        _model(x_shape=(1, 5, 5, 3), w_shape=(4, 3, 3, 2)))


def test_conv_rejects_wrong_filter_rank():
    assert "4 dimensions" in _prepare_error(_model(w_shape=(4, 3, 2)))


def test_conv_rejects_bad_scale_count():
    assert "quantization scales" in _prepare_error(_model(w_quant=([0.1, 0.2], [0, 0])))


def test_conv_rejects_bad_bias():
    bias = TensorDef((4,), "INT64", data=np.zeros(4, np.int64))
    assert "bias type" in _prepare_error(_model(bias=bias))
    bias = TensorDef((3,), "INT32", data=np.zeros(3, np.int32))
    assert "bias has 3 values" in _prepare_error(_model(bias=bias))


def test_conv_rejects_zero_stride():
    assert "strides must be >= 1" in _prepare_error(_model(stride_w=0))


def test_conv_rejects_missing_quantization():
    assert "no quantization" in _prepare_error(_model(w_quant=None))


# ------------------------------------------------- the operators of the bundled models
BUNDLED = [c for name in ("person_detect", "vww_96_int8", "kws_ref_model", "pretrainedResnet_quant")
           for c in bundled_ops(name, "CONV_2D")]


@pytest.mark.parametrize("label,model,inputs", BUNDLED, ids=[c[0] for c in BUNDLED])
def test_conv_bundled_model_ops_match_tflm(oracle, label, model, inputs):
    compare_with_tflm(oracle, model, inputs, context=label)


@given(conv_case(kinds=["int8", "float32", "int16"]), st.integers(0, 2**32 - 1))
def test_conv_repeated_invokes_match_tflm(oracle, case, seed):
    model, inputs = case
    rng = np.random.default_rng(seed)
    second = [rng.permutation(x.reshape(-1)).reshape(x.shape) for x in inputs]
    check_repeated_invokes(oracle, model, [inputs, second, inputs], "CONV_2D x3")


@pytest.mark.parametrize("dtype", ["INT8", "FLOAT32"])
@pytest.mark.parametrize("out_hw", [(7, 4), (3, 3), (9, 9)])
def test_conv_output_size_other_than_computed_matches_tflm(oracle, dtype, out_hw):
    """TFLM loops over the output tensor's height / width whatever the padding computes
    (taps outside the input are skipped)."""
    rng = np.random.default_rng(5)
    w = rng.integers(-127, 127, (3, 3, 3, 2)).astype(np.int8)
    q = {"INT8": ((0.1, 3), (0.02, 0), (0.3, -2)), "FLOAT32": (None, None, None)}[dtype]
    np_type = np.int8 if dtype == "INT8" else np.float32
    model = single_op_model("CONV_2D", [TensorDef((1, 5, 5, 2), dtype, quant=q[0]),
                                        TensorDef((3, 3, 3, 2), dtype, data=w.astype(np_type),
                                                  quant=q[1]), None],
                            [TensorDef((1, *out_hw, 3), dtype, quant=q[2])], padding=0,
                            stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1)
    x = rng.integers(-128, 128, (1, 5, 5, 2)).astype(np_type)
    compare_with_tflm(oracle, model, [x], context=f"CONV_2D output {out_hw}")
