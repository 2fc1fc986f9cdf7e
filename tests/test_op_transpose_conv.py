"""TRANSPOSE_CONV against TFLM: hypothesis draws shapes, strides, padding, output sizes,
activations, types (float32, int8, int16 with int64 / int16 bias) and per-channel /
per-tensor quantization."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import MicroRuntimeError
from tests.conv_helpers import (SCHEMA_SAME, SCHEMA_VALID, bias_def, check_repeated_invokes,
                                filter_quant, float_magnitude, io_scales, maybe_runtime,
                                output_zero_point)
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import activations, arrays, zero_points

pytestmark = pytest.mark.oracle

KINDS = ["float32", "int8", "int8_per_tensor", "int16", "int16_int16_bias", "int16_no_bias"]


def _out_size(draw, in_size, k, s, pad):
    if draw(st.integers(0, 5)) == 0:  # any output size: TFLM skips what falls outside
        return draw(st.integers(1, max(1, in_size * s + k)))
    return in_size * s if pad == SCHEMA_SAME else (in_size - 1) * s + k


@st.composite
def transpose_conv_case(draw, kinds=KINDS):
    kind = draw(st.sampled_from(kinds))
    batches = draw(st.integers(1, 2))
    in_h, in_w = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pad = draw(st.sampled_from([SCHEMA_SAME, SCHEMA_VALID]))
    out_h, out_w = _out_size(draw, in_h, kh, sh, pad), _out_size(draw, in_w, kw, sw, pad)
    in_depth, out_depth = draw(st.integers(1, 16)), draw(st.integers(1, 16))
    act = draw(activations)
    has_bias = draw(st.booleans())
    options = dict(padding=pad, stride_w=sw, stride_h=sh, fused_activation_function=act)
    x_shape = (batches, in_h, in_w, in_depth)
    w_shape = (out_depth, kh, kw, in_depth)
    o_shape = (batches, out_h, out_w, out_depth)
    shape_t = TensorDef((4,), "INT32", data=np.array(o_shape, np.int32))
    if kind == "float32":
        x = arrays(draw, x_shape, "float32") * float_magnitude(draw)
        w = arrays(draw, w_shape, "float32", -1.0, 1.0)
        wdef, w_run = maybe_runtime(draw, TensorDef(w_shape, "FLOAT32", data=w))
        inputs = [shape_t, wdef, TensorDef(x_shape, "FLOAT32")]
        if has_bias:
            inputs.append(bias_def(draw, out_depth, "FLOAT32", 0, [], 0))
        elif draw(st.booleans()):
            inputs.append(None)
        model = single_op_model("TRANSPOSE_CONV", inputs, [TensorDef(o_shape, "FLOAT32")],
                                **options)
        return model, ([w_run] if w_run is not None else []) + [x]
    io = "int16" if kind.startswith("int16") else "int8"
    in_zp = draw(zero_points(io))
    per_channel = kind != "int8_per_tensor" and draw(st.integers(0, 4)) > 0
    fscales, fq = filter_quant(draw, out_depth, per_channel, qdim=0,
                               zero_point_any=kind == "int8_per_tensor")
    lo, hi = (1e-3, 0.2) if io == "int8" else (1e-4, 0.05)
    if draw(st.integers(0, 9)) == 0:
        lo, hi = 0.5, 4.0
    taps = max(1, -(-kh // sh)) * max(1, -(-kw // sw))
    in_scale, out_scale = io_scales(draw, io, act, fscales, taps * in_depth, lo, hi)
    out_zp = output_zero_point(draw, io, act)
    wdef = TensorDef(w_shape, "INT8", data=arrays(draw, w_shape, "int8"), quant=fq)
    wdef, w_run = maybe_runtime(draw, wdef)
    inputs = [shape_t, wdef, TensorDef(x_shape, io.upper(), quant=(in_scale, in_zp))]
    if kind in ("int16", "int16_int16_bias") or (has_bias and kind != "int16_no_bias"):
        btype = {"int16": "INT64", "int16_int16_bias": "INT16"}.get(kind, "INT32")
        magnitude = {"INT64": 1 << 20, "INT16": 30000, "INT32": 20000}[btype]
        inputs.append(bias_def(draw, out_depth, btype, in_scale, fscales, magnitude))
    elif draw(st.booleans()):
        inputs.append(None)
    x = arrays(draw, x_shape, io)
    model = single_op_model("TRANSPOSE_CONV", inputs,
                            [TensorDef(o_shape, io.upper(), quant=(out_scale, out_zp))], **options)
    return model, ([w_run] if w_run is not None else []) + [x]


@given(transpose_conv_case())
def test_transpose_conv_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="TRANSPOSE_CONV")


@given(transpose_conv_case(kinds=["int8", "int8_per_tensor", "float32"]))
def test_transpose_conv_int8_float_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="TRANSPOSE_CONV int8/float")


# ------------------------------------------------------------------ deterministic
def _model(x_type="INT8", w_type="INT8", w_shape=(4, 3, 3, 2), x_shape=(1, 5, 5, 2),
           o_shape=(1, 5, 5, 4), o_type=None, bias=None, w_quant=(0.02, 0), **options):
    options.setdefault("stride_w", 1)
    options.setdefault("stride_h", 1)
    o_type = o_type or x_type
    q = (0.1, 0) if x_type != "FLOAT32" else None
    oq = (0.2, 0) if o_type != "FLOAT32" else None
    w_np = {"INT8": np.int8, "FLOAT32": np.float32, "INT16": np.int16}[w_type]
    return single_op_model("TRANSPOSE_CONV",
                           [TensorDef((4,), "INT32", data=np.array(o_shape, np.int32)),
                            TensorDef(w_shape, w_type, data=np.ones(w_shape, w_np),
                                      quant=w_quant if w_type != "FLOAT32" else None),
                            TensorDef(x_shape, x_type, quant=q), bias],
                           [TensorDef(o_shape, o_type, quant=oq)], **options)


def _prepare_error(model) -> str:
    it = MicroInterpreter(model, arena_size=1 << 20, error_reporter=lambda m: None)
    with pytest.raises(MicroRuntimeError) as info:
        it.allocate_tensors()
    return str(info.value)


def test_transpose_conv_rejects_hybrid():
    msg = _prepare_error(_model(x_type="FLOAT32", w_type="INT8"))
    assert "Hybrid" in msg and "TRANSPOSE_CONV" in msg


def test_transpose_conv_rejects_int16_filter():
    assert "filter type INT16 not supported" in _prepare_error(_model(x_type="INT16",
                                                                      w_type="INT16"))


def test_transpose_conv_rejects_type_mismatch():
    assert "output type" in _prepare_error(_model(o_type="INT16"))


def test_transpose_conv_rejects_depth_mismatch():
    assert "filter depth" in _prepare_error(_model(w_shape=(4, 3, 3, 3)))


def test_transpose_conv_rejects_channel_mismatch():
    assert "channels" in _prepare_error(_model(o_shape=(1, 5, 5, 3)))


def test_transpose_conv_rejects_int32_bias_with_int16():
    # TFLM reads such a bias as int64 (garbage); we refuse the model
    bias = TensorDef((4,), "INT32", data=np.zeros(4, np.int32))
    assert "bias type INT32" in _prepare_error(_model(x_type="INT16", bias=bias))


def test_transpose_conv_rejects_bad_float_bias():
    bias = TensorDef((3,), "FLOAT32", data=np.zeros(3, np.float32))
    assert "bias has 3 values" in _prepare_error(_model(x_type="FLOAT32", w_type="FLOAT32",
                                                        bias=bias))


@given(transpose_conv_case(kinds=["int8", "float32", "int16"]), st.integers(0, 2**32 - 1))
def test_transpose_conv_repeated_invokes_match_tflm(oracle, case, seed):
    model, inputs = case
    rng = np.random.default_rng(seed)
    second = [rng.permutation(x.reshape(-1)).reshape(x.shape) for x in inputs]
    check_repeated_invokes(oracle, model, [inputs, second, inputs], "TRANSPOSE_CONV x3")
