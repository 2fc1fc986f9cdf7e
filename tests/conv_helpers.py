"""Shared drawing helpers for the convolution differential tests (CONV_2D,
DEPTHWISE_CONV_2D, TRANSPOSE_CONV)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from kernels.internal.padding import SAME, VALID, out_size
from tests.helpers import TensorDef, model_path, single_op_model

#: schema Padding values
SCHEMA_SAME, SCHEMA_VALID = 0, 1


def pack_int4(values: np.ndarray) -> np.ndarray:
    """Pack int4 values (-8..7) two per byte, low nibble first (TFLM's dense layout)."""
    flat = np.asarray(values, dtype=np.int8).reshape(-1)
    if flat.size % 2:
        flat = np.concatenate([flat, np.zeros(1, np.int8)])
    lo = flat[0::2].astype(np.uint8) & 0x0F
    hi = (flat[1::2].astype(np.uint8) & 0x0F) << 4
    return (lo | hi).astype(np.uint8).view(np.int8)


def log_uniform(draw, lo: float, hi: float) -> float:
    u = draw(st.floats(0.0, 1.0))
    return float(np.float32(math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))))


def spatial(draw, max_side=12, max_kernel=5, max_stride=3, max_dilation=3, dilation=True):
    """(in_h, in_w, kh, kw, sh, sw, dh, dw, schema padding, out_h, out_w), always valid
    (output at least 1x1)."""
    in_h, in_w = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    kh, kw = draw(st.integers(1, max_kernel)), draw(st.integers(1, max_kernel))
    sh, sw = draw(st.integers(1, max_stride)), draw(st.integers(1, max_stride))
    dh = draw(st.integers(1, max_dilation)) if dilation else 1
    dw = draw(st.integers(1, max_dilation)) if dilation else 1
    pad = draw(st.sampled_from([SCHEMA_SAME, SCHEMA_VALID]))
    mode = SAME if pad == SCHEMA_SAME else VALID
    out_h = out_size(mode, in_h, kh, sh, dh)
    out_w = out_size(mode, in_w, kw, sw, dw)
    if not out_h or not out_w:
        pad, mode = SCHEMA_SAME, SAME
        out_h = out_size(mode, in_h, kh, sh, dh)
        out_w = out_size(mode, in_w, kw, sw, dw)
    return in_h, in_w, kh, kw, sh, sw, dh, dw, pad, out_h, out_w


def filter_quant(draw, channels: int, per_channel: bool, qdim: int, ndims: int = 4,
                 lo: float = 1e-3, hi: float = 0.05, zero_point_any: bool = False):
    """(scales list, TensorDef quantization tuple). Per-tensor quantization sometimes
    carries another quantized_dimension (as person_detect does)."""
    if per_channel:
        s = [log_uniform(draw, lo, hi) for _ in range(channels)]
        return s, (s, [0] * channels, qdim)
    s = log_uniform(draw, lo, hi)
    zp = draw(st.integers(-20, 20)) if zero_point_any and draw(st.booleans()) else 0
    return [s] * channels, (s, zp, draw(st.sampled_from([0, qdim, ndims - 1])))


def io_scales(draw, io: str, activation: int, filter_scales, depth: int, lo: float, hi: float):
    """(input scale, output scale) with effective multipliers input * filter / output
    around [lo, hi] / sqrt(depth); with a bounded activation (RELU_N1_TO_1, RELU6) the
    output scale maps the activation range onto roughly the type's range, as a converter
    would."""
    qmax = 127 if io == "int8" else 32767
    if activation == 2:
        out_scale = 2.0 / (2 * qmax) * log_uniform(draw, 0.5, 2.0)
    elif activation == 3:
        out_scale = 6.0 / (2 * qmax) * log_uniform(draw, 0.5, 2.0)
    else:
        out_scale = log_uniform(draw, 1e-3, 1.0) if io == "int8" else log_uniform(draw, 1e-5, 1e-2)
    eff = log_uniform(draw, lo, hi) / math.sqrt(max(depth, 1))
    in_scale = eff * out_scale / float(np.mean(filter_scales))
    return float(np.float32(in_scale)), float(np.float32(out_scale))


def bias_def(draw, channels: int, bias_type: str, in_scale: float, filter_scales, magnitude: int,
             quantized: bool = True) -> TensorDef:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if bias_type == "FLOAT32":
        return TensorDef((channels,), "FLOAT32",
                         data=rng.uniform(-4, 4, channels).astype(np.float32))
    dtype = {"INT32": np.int32, "INT64": np.int64, "INT16": np.int16}[bias_type]
    values = rng.integers(-magnitude, magnitude, size=channels, endpoint=True).astype(dtype)
    q = None
    if quantized:
        scales = [float(np.float32(in_scale * s)) for s in filter_scales]
        q = (scales, [0] * channels) if len(set(filter_scales)) > 1 else (scales[0], 0)
    return TensorDef((channels,), bias_type, quant=q, data=values)


def output_zero_point(draw, io: str, activation: int) -> int:
    """Any zero point; for RELU / RELU6 int8 outputs often one near -128 (as converters
    choose for non-negative ranges)."""
    if io == "int16":
        return 0
    if activation in (1, 3) and draw(st.booleans()):
        return draw(st.integers(-128, -100))
    return draw(st.integers(-128, 127))


def bundled_ops(model_name: str, op_name: str):
    """Every ``op_name`` operator of a bundled model as a one-op model with the same
    tensors (filter / bias constant, input fed with random data) and options:
    [(label, model bytes, [input])]."""
    from micro_runtime.model import load_model

    m = load_model(model_path(model_name))
    sg = m.subgraphs[0]
    rng = np.random.default_rng(0)
    cases = []
    for op in sg.operators:
        if op.name != op_name:
            continue
        defs = []
        for k, ti in enumerate(op.inputs):
            if ti < 0:
                defs.append(None)
                continue
            t = sg.tensors[ti]
            q = None
            if t.quantization is not None:
                q = (t.quantization.scales, t.quantization.zero_points,
                     t.quantization.quantized_dimension)
            defs.append(TensorDef(t.shape, t.type, quant=q, data=t.data))
        o = sg.tensors[op.outputs[0]]
        oq = (o.quantization.scales, o.quantization.zero_points, o.quantization.quantized_dimension)
        model = single_op_model(op_name, defs, [TensorDef(o.shape, o.type, quant=oq)],
                                **op.params.as_dict())
        x_spec = sg.tensors[op.inputs[0]]
        x = rng.integers(-128, 128, size=x_spec.shape).astype(x_spec.dtype)
        cases.append((f"{model_name}#{op.index}", model, [x]))
    return cases



def float_magnitude(draw) -> np.float32:
    """Usually 1; sometimes huge, so that float sums overflow to +-inf (TFLM then clamps
    to +-FLT_MAX) or give NaN (inf - inf)."""
    return np.float32(draw(st.sampled_from([1.0] * 8 + [1e37, 8e37])))


def maybe_runtime(draw, tdef: TensorDef):
    """Usually ``(tdef, None)``; sometimes the same tensor as a model input (TFLM also
    runs with a filter / bias computed at run time): ``(non-constant def, its data)``."""
    if tdef is None or tdef.dtype == "INT4" or draw(st.integers(0, 7)):
        return tdef, None
    return TensorDef(tdef.shape, tdef.dtype, quant=tdef.quant), np.asarray(tdef.data)


def check_repeated_invokes(oracle, model: bytes, runs, context: str) -> None:
    """Several invokes of one interpreter (caches and buffers reused) match TFLM's last
    outputs."""
    from tests.helpers import assert_bit_exact, run_ours

    theirs = oracle.run(model, runs=[list(r) for r in runs])
    assert theirs.ok, f"{context}: TFLM failed: {theirs.error}"
    ours, _, _ = run_ours(model, runs[-1], runs=[list(r) for r in runs])
    assert_bit_exact(ours, theirs.outputs, context)
