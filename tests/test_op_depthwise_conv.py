"""DEPTHWISE_CONV_2D against TFLM: hypothesis draws shapes, depth multipliers, strides,
dilations, padding, activations, types (float32, int8 with int8 / int4 weights, int16
with int64 bias) and per-channel / per-tensor quantization."""
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

KINDS = ["float32", "int8", "int8_per_tensor", "int4", "int16", "int16_no_bias"]


def _inputs(x, w, bias):
    """Without a bias the node has two inputs: TFLM's depthwise prepare crashes on an
    omitted (-1) third input (it releases a null temp tensor)."""
    return [x, w] if bias is None else [x, w, bias]


@st.composite
def depthwise_case(draw, kinds=KINDS, single_channel=False):
    kind = draw(st.sampled_from(kinds))
    batches = draw(st.integers(1, 2))
    in_h, in_w, kh, kw, sh, sw, dh, dw, pad, out_h, out_w = spatial(draw)
    in_depth = 1 if single_channel else draw(st.integers(1, 16))
    multiplier = draw(st.sampled_from([2, 3, 4, 8] if single_channel else [1, 1, 1, 2, 3, 4, 8]))
    if in_depth * multiplier > 32:
        in_depth = max(1, 32 // multiplier)
    out_depth = in_depth * multiplier
    act = draw(activations)
    has_bias = draw(st.booleans())
    options = dict(padding=pad, stride_w=sw, stride_h=sh, dilation_w_factor=dw,
                   dilation_h_factor=dh, depth_multiplier=multiplier,
                   fused_activation_function=act)
    x_shape = (batches, in_h, in_w, in_depth)
    w_shape = (1, kh, kw, out_depth)
    o_shape = (batches, out_h, out_w, out_depth)
    if kind == "float32":
        x = arrays(draw, x_shape, "float32") * float_magnitude(draw)
        w = arrays(draw, w_shape, "float32", -1.0, 1.0)
        bias = bias_def(draw, out_depth, "FLOAT32", 0, [], 0) if has_bias else None
        wdef, w_run = maybe_runtime(draw, TensorDef(w_shape, "FLOAT32", data=w))
        model = single_op_model("DEPTHWISE_CONV_2D",
                                _inputs(TensorDef(x_shape, "FLOAT32"), wdef, bias),
                                [TensorDef(o_shape, "FLOAT32")], **options)
        return model, [x] + ([w_run] if w_run is not None else [])
    io = "int16" if kind.startswith("int16") else "int8"
    in_zp = draw(zero_points(io))
    per_channel = kind != "int8_per_tensor" and draw(st.integers(0, 4)) > 0
    fscales, fq = filter_quant(draw, out_depth, per_channel, qdim=3,
                               zero_point_any=kind == "int8_per_tensor")
    lo, hi = (1e-3, 0.2) if io == "int8" else (1e-4, 0.05)
    if draw(st.integers(0, 9)) == 0:
        lo, hi = 0.5, 4.0
    in_scale, out_scale = io_scales(draw, io, act, fscales, kh * kw, lo, hi)
    out_zp = output_zero_point(draw, io, act)
    if kind == "int4":
        wv = arrays(draw, w_shape, "int8", -8, 7)
        wdef = TensorDef(w_shape, "INT4", data=pack_int4(wv), quant=fq)
    else:
        wdef = TensorDef(w_shape, "INT8", data=arrays(draw, w_shape, "int8"), quant=fq)
    bias = None
    if kind == "int16" or (has_bias and kind != "int16_no_bias"):
        btype = "INT64" if io == "int16" else "INT32"
        magnitude = 1 << 20 if btype == "INT64" else 20000
        bias = bias_def(draw, out_depth, btype, in_scale, fscales, magnitude)
    x = arrays(draw, x_shape, io)
    wdef, w_run = maybe_runtime(draw, wdef)
    model = single_op_model("DEPTHWISE_CONV_2D",
                            _inputs(TensorDef(x_shape, io.upper(), quant=(in_scale, in_zp)), wdef,
                                    bias),
                            [TensorDef(o_shape, io.upper(), quant=(out_scale, out_zp))], **options)
    return model, [x] + ([w_run] if w_run is not None else [])


@given(depthwise_case())
def test_depthwise_conv_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DEPTHWISE_CONV_2D")


@given(depthwise_case(single_channel=True))
def test_single_channel_depthwise_matches_tflm(oracle, case):
    """One input channel and a depth multiplier (person_detect's first layer): the
    kernel's own im2col path (columns gathered one tap at a time), every type, stride,
    dilation and padding."""
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DEPTHWISE_CONV_2D (one channel)")


@given(depthwise_case(kinds=["int8", "int8_per_tensor", "int4"]))
def test_depthwise_conv_int8_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="DEPTHWISE_CONV_2D int8")


# ------------------------------------------------------------------ deterministic
def _model(x_type="INT8", w_type="INT8", w_shape=(1, 3, 3, 4), x_shape=(1, 5, 5, 2),
           o_shape=(1, 5, 5, 4), o_type=None, bias=False, w_quant=(0.02, 0), **options):
    for k in ("stride_w", "stride_h", "dilation_w_factor", "dilation_h_factor"):
        options.setdefault(k, 1)
    options.setdefault("depth_multiplier", 2)
    o_type = o_type or x_type
    q = (0.1, 0) if x_type != "FLOAT32" else None
    oq = (0.2, 0) if o_type != "FLOAT32" else None
    w_np = {"INT8": np.int8, "FLOAT32": np.float32, "INT16": np.int16}[w_type]
    inputs = [TensorDef(x_shape, x_type, quant=q),
              TensorDef(w_shape, w_type, data=np.ones(w_shape, w_np),
                        quant=w_quant if w_type != "FLOAT32" else None)]
    if bias is not False:
        inputs.append(bias)
    return single_op_model("DEPTHWISE_CONV_2D", inputs,
                           [TensorDef(o_shape, o_type, quant=oq)], **options)


def _prepare_error(model) -> str:
    it = MicroInterpreter(model, arena_size=1 << 20, error_reporter=lambda m: None)
    with pytest.raises(MicroRuntimeError) as info:
        it.allocate_tensors()
    return str(info.value)


def test_depthwise_rejects_hybrid():
    msg = _prepare_error(_model(x_type="INT16", w_type="INT16", w_quant=(0.02, 0)))
    assert "Hybrid" in msg and "DEPTHWISE_CONV_2D" in msg


def test_depthwise_rejects_depth_multiplier_mismatch():
    assert "depth_multiplier" in _prepare_error(_model(depth_multiplier=1))


def test_depthwise_rejects_channel_mismatch():
    assert "channels" in _prepare_error(_model(o_shape=(1, 5, 5, 3)))


def test_depthwise_rejects_type_mismatch():
    assert "output type" in _prepare_error(_model(o_type="INT16"))


def test_depthwise_rejects_int32_bias_with_int16():
    # TFLM reads the bias as int64 here (garbage); we refuse the model
    bias = TensorDef((4,), "INT32", data=np.zeros(4, np.int32))
    assert "bias type INT32" in _prepare_error(_model(x_type="INT16", bias=bias))


def test_depthwise_rejects_bad_scale_count():
    assert "quantization scales" in _prepare_error(_model(w_quant=([0.1, 0.2], [0, 0], 3)))


def test_depthwise_rejects_omitted_bias_slot():
    assert "crash" in _prepare_error(_model(bias=None))


def test_depthwise_rejects_bad_dilation():
    assert "dilation" in _prepare_error(_model(dilation_h_factor=0))


# ------------------------------------------------- the operators of the bundled models
BUNDLED = [c for name in ("person_detect", "vww_96_int8", "kws_ref_model", "micro_speech_quantized")
           for c in bundled_ops(name, "DEPTHWISE_CONV_2D")]


@pytest.mark.parametrize("label,model,inputs", BUNDLED, ids=[c[0] for c in BUNDLED])
def test_depthwise_conv_bundled_model_ops_match_tflm(oracle, label, model, inputs):
    compare_with_tflm(oracle, model, inputs, context=label)


@given(depthwise_case(kinds=["int8", "float32", "int16"]), st.integers(0, 2**32 - 1))
def test_depthwise_conv_repeated_invokes_match_tflm(oracle, case, seed):
    model, inputs = case
    rng = np.random.default_rng(seed)
    second = [rng.permutation(x.reshape(-1)).reshape(x.shape) for x in inputs]
    check_repeated_invokes(oracle, model, [inputs, second, inputs], "DEPTHWISE_CONV_2D x3")


def test_depthwise_filter_with_more_rows_matches_tflm(oracle):
    """TFLM reads only the first row of a (2, kh, kw, C) depthwise filter."""
    rng = np.random.default_rng(5)
    w = rng.integers(-127, 127, (2, 3, 3, 4)).astype(np.int8)
    model = single_op_model("DEPTHWISE_CONV_2D",
                            [TensorDef((1, 5, 5, 4), "INT8", quant=(0.1, 3)),
                             TensorDef((2, 3, 3, 4), "INT8", data=w, quant=(0.02, 0))],
                            [TensorDef((1, 5, 5, 4), "INT8", quant=(0.3, -2))], padding=0,
                            stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1,
                            depth_multiplier=1)
    x = rng.integers(-128, 128, (1, 5, 5, 4)).astype(np.int8)
    compare_with_tflm(oracle, model, [x], context="DEPTHWISE_CONV_2D 2-row filter")
