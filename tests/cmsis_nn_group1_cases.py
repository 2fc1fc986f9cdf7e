"""Seeded single-op models for the CMSIS-NN kernel variants of CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, SOFTMAX, AVERAGE_POOL_2D / MAX_POOL_2D, ADD and MUL: random shapes and
quantisation, with the cases where CMSIS-NN's kernels, buffers or arithmetic part from the
reference kernels:

* rejections of the CMSIS-NN build: int16 zero points, int16 per-channel fully connected;
* conv: 1x1 (no buffer), 1 x N (one-row input), im2col sizes (depth x filter not a
  multiple of 4), strides, dilation, SAME / VALID padding, groups (int8), int4 weights,
  int16 with int64 / int32 / no bias (CMSIS-NN: no bias = 32-bit path), int16 dot products
  longer than 512 columns with extreme values (int32 partial sums), extreme multipliers;
* depthwise: depth multiplier 1 (3x3 kernel with padding <= 1 / the "opt" kernel with a
  buffer), multipliers > 1, batches > 1, dilation, one input channel, int4 (odd input
  channels on the generic kernel: CMSIS-NN's nibble walk), int16;
* fully connected: 2-D / 3-D outputs, depths multiple of 4 or not (CMSIS-NN's conv 1x1
  path, whose per-tensor form aborts in the default build), per-channel int8, int4,
  int16 with int64 or no bias, non-constant weights;
* softmax: int8 -> int8 / int16, int16, float32, long rows (sums needing 32+ bit shifts),
  extreme input scales;
* pooling: average / max, int8 / int16 / float32, windows partly in the padding;
* add / mul: int8 / int16 / float32 / int32, broadcasting up to 5-D, extreme output
  multipliers.

``BUILDERS`` maps each op module to ``builder(rng, index) -> (name, model, inputs)``;
tests/cmsis_nn_op_cases.py's ``generate`` reads them, tests/record_cmsis_nn_cases.py
stores them with the oracle's figures in tests/data/cmsis_nn_cases/.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import numpy as np

from tests.helpers import TensorDef, single_op_model

Case = Tuple[str, bytes, List[np.ndarray]]

SAME, VALID = 0, 1
NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
_NP = {"INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
       "FLOAT32": np.float32}


def _f32(x: float) -> float:
    return float(np.float32(x))


def _log_uniform(rng, lo: float, hi: float) -> float:
    return _f32(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def _out_size(size: int, filt: int, stride: int, dilation: int, padding: int) -> int:
    effective = (filt - 1) * dilation + 1
    if padding == SAME:
        return (size + stride - 1) // stride
    return (size - effective + stride) // stride


def _data(rng, shape, dtype: str, extreme: bool = False) -> np.ndarray:
    if dtype == "FLOAT32":
        return rng.standard_normal(shape).astype(np.float32)
    info = np.iinfo(_NP[dtype])
    if extreme:
        return rng.choice([info.min, info.max, info.min + 1, -1, 0], size=shape).astype(_NP[dtype])
    return rng.integers(info.min, int(info.max) + 1, shape).astype(_NP[dtype])


def _pack_int4(values: np.ndarray) -> np.ndarray:
    flat = np.asarray(values, np.int8).reshape(-1)
    if flat.size % 2:
        flat = np.concatenate([flat, np.zeros(1, np.int8)])
    return ((flat[0::2].astype(np.uint8) & 0x0F) | ((flat[1::2].astype(np.uint8) & 0x0F) << 4)).view(np.int8)


def _io_zero_point(rng, io: str) -> int:
    return int(rng.integers(-128, 128)) if io == "INT8" else 0


def _filter_quant(rng, channels: int, per_channel: bool, qdim: int):
    scales = [_log_uniform(rng, 2e-3, 5e-2) for _ in range(channels if per_channel else 1)]
    if per_channel:
        return scales, (np.array(scales, np.float32), np.zeros(channels, np.int64), qdim)
    return scales, (scales[0], 0)


def _output_scale(rng, in_scale: float, filter_scales, taps: int, io: str, extreme: bool) -> float:
    """An output scale putting typical sums inside the output range (``extreme``: a
    multiplier near 1 or above, or a tiny one)."""
    typical = in_scale * max(filter_scales) * (100.0 if io == "INT8" else 20000.0) * 60.0 * np.sqrt(taps)
    scale = typical / (100.0 if io == "INT8" else 20000.0)
    if extreme:
        scale *= float(rng.choice([1e-3, 0.05, 30.0, 300.0]))
    return _f32(max(scale, 1e-9))


def _bias(rng, channels: int, btype: str, in_scale: float, filter_scales, magnitude: int):
    scales = np.array([_f32(in_scale * s) for s in filter_scales], np.float32)
    q = (scales, np.zeros(len(scales), np.int64), 0) if len(scales) > 1 else (float(scales[0]), 0)
    data = rng.integers(-magnitude, magnitude + 1, channels).astype(_NP[btype])
    return TensorDef((channels,), btype, data=data, quant=q)


# --------------------------------------------------------------------------- CONV_2D
def conv_case(rng, index: int) -> Case:
    kinds = ("int8", "int8", "int8_1x1", "int8_1xn", "int4", "int16_s64", "int16_s32",
             "int16_nobias", "int8_groups", "int16_long", "float32", "int8")
    kind = kinds[index % len(kinds)] if index < 48 else (
        "int16_overflow" if index < 52 else "int16_zero_point")
    name = f"conv_{index:03d}_{kind}"
    io = "INT16" if kind.startswith("int16") else ("FLOAT32" if kind == "float32" else "INT8")
    batches = int(rng.choice([1, 1, 2]))
    in_h, in_w = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    in_c = int(rng.integers(1, 13))
    zero_point = int(rng.integers(1, 50)) if kind == "int16_zero_point" else 0
    out_c = int(rng.integers(1, 10))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = (1, 1) if rng.random() < 0.7 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    padding = int(rng.integers(0, 2))
    groups = 1
    if kind == "int8_1x1":
        fh = fw = 1
        sh, sw = (1, 1) if rng.random() < 0.6 else (2, 2)
        dh = dw = 1
        padding = VALID if rng.random() < 0.5 else SAME
        in_c = int(rng.choice([4, 8, 16, 7]))
    elif kind == "int8_1xn":
        in_h, fh, dh, dw = 1, 1, 1, 1
        in_c = int(rng.choice([4, 8, 12]))
        in_w = int(rng.integers(3, 12))
        fw = int(rng.integers(1, 5))
    elif kind == "int8_groups":
        groups = int(rng.integers(2, 4))
        in_c = groups * int(rng.integers(1, 4))
        out_c = groups * int(rng.integers(1, 4))
    elif kind in ("int16_long", "int16_overflow"):
        in_c, fh, fw = int(rng.integers(60, 80)), 3, 3      # 540+ columns: int32 partial sums
        in_h, in_w, padding = int(rng.integers(3, 6)), int(rng.integers(3, 6)), VALID
        sh = sw = dh = dw = 1
        batches = 1
    in_h = max(in_h, (fh - 1) * dh + 1) if padding == VALID else in_h
    in_w = max(in_w, (fw - 1) * dw + 1) if padding == VALID else in_w
    out_h = _out_size(in_h, fh, sh, dh, padding)
    out_w = _out_size(in_w, fw, sw, dw, padding)
    filter_c = in_c // groups
    w_shape = (out_c, fh, fw, filter_c)
    act = int(rng.choice([NONE, NONE, RELU, RELU6, RELU_N1_TO_1]))
    options = dict(padding=padding, stride_w=sw, stride_h=sh, dilation_w_factor=dw,
                   dilation_h_factor=dh, fused_activation_function=act)
    x_shape = (batches, in_h, in_w, in_c)
    o_shape = (batches, out_h, out_w, out_c)
    extreme = rng.random() < 0.2 or kind in ("int16_long", "int16_overflow")
    if kind == "int16_overflow":
        padding, in_h, in_w = VALID, 3, int(rng.choice([3, 4]))   # 1 or 2 output pixels
    if io == "FLOAT32":
        w = rng.standard_normal(w_shape).astype(np.float32)
        inputs = [TensorDef(x_shape, io), TensorDef(w_shape, io, data=w)]
        if rng.random() < 0.7:
            inputs.append(TensorDef((out_c,), io, data=rng.standard_normal(out_c).astype(np.float32)))
        model = single_op_model("CONV_2D", inputs, [TensorDef(o_shape, io)], **options)
        return name, model, [_data(rng, x_shape, io)]
    per_channel = rng.random() < 0.7
    fscales, fq = _filter_quant(rng, out_c, per_channel, 0)
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "INT8" else _log_uniform(rng, 1e-5, 1e-3)
    out_scale = _output_scale(rng, in_scale, fscales, fh * fw * filter_c, io, extreme)
    if kind == "int4":
        wv = rng.integers(-8, 8, w_shape).astype(np.int8)
        wdef = TensorDef(w_shape, "INT4", data=_pack_int4(wv), quant=fq)
    elif kind == "int16_overflow":
        # every product 2^22: the int32 partial sums of CMSIS-NN wrap
        wv = np.full(w_shape, -128, np.int8)
        wv[int(rng.integers(0, out_c))] = 127
        wdef = TensorDef(w_shape, "INT8", data=wv, quant=fq)
    else:
        wv = _data(rng, w_shape, "INT8", extreme=kind == "int16_long")
        wdef = TensorDef(w_shape, "INT8", data=wv, quant=fq)
    inputs = [TensorDef(x_shape, io, quant=(in_scale, _io_zero_point(rng, io) + zero_point)), wdef]
    if kind in ("int16_s64", "int16_long", "int16_overflow", "int16_zero_point"):
        inputs.append(_bias(rng, out_c, "INT64", in_scale, fscales, 1 << 22))
    elif kind == "int16_s32":
        inputs.append(_bias(rng, out_c, "INT32", in_scale, fscales, 30000))
    elif kind == "int16_nobias":
        options["quantized_bias_type"] = int(rng.choice([0, 2, 4]))
    elif rng.random() < 0.8:
        inputs.append(_bias(rng, out_c, "INT32", in_scale, fscales, 20000))
    out_zp = _io_zero_point(rng, io)
    model = single_op_model("CONV_2D", inputs, [TensorDef(o_shape, io, quant=(out_scale, out_zp))],
                            **options)
    if kind == "int16_overflow":
        return name, model, [np.full(x_shape, -32768, np.int16)]
    return name, model, [_data(rng, x_shape, io, extreme=kind == "int16_long")]


# ------------------------------------------------------------------ DEPTHWISE_CONV_2D
def depthwise_conv_case(rng, index: int) -> Case:
    kinds = ("int8_3x3", "int8_opt", "int8_mult", "int8", "int4", "int16", "int8_one_channel",
             "float32", "int8_batch", "int4_mult", "int4_odd")
    kind = kinds[index % len(kinds)] if index < 48 else "int16_zero_point"
    name = f"depthwise_conv_{index:03d}_{kind}"
    io = "INT16" if kind.startswith("int16") else ("FLOAT32" if kind == "float32" else "INT8")
    batches = 2 if kind == "int8_batch" else 1
    in_c = int(rng.integers(1, 17))
    if kind == "int4_odd":
        # arm_depthwise_conv_s4's generic kernel with odd input channels (its nibble walk)
        in_c = int(rng.choice([1, 3, 5, 7, 9]))
        batches = int(rng.choice([1, 2]))
    mult = 1
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = (1, 1) if rng.random() < 0.75 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    padding = int(rng.integers(0, 2))
    if kind == "int8_3x3":
        fh = fw = 3
        dh = dw = 1
    elif kind == "int8_opt":
        dh = dw = 1
        if fh == 3 and fw == 3:
            fw = 4
    elif kind in ("int8_mult", "int4_mult"):
        mult = int(rng.integers(2, 4))
    elif kind == "int4_odd":
        mult = int(rng.choice([1, 2, 3]))
        if mult == 1 and batches == 1:
            dh, dw = 2, 1
    elif kind == "int8_one_channel":
        in_c, mult = 1, int(rng.integers(2, 9))
    elif kind == "int16":
        mult = int(rng.choice([1, 1, 2]))
    in_h, in_w = int(rng.integers(1, 10)), int(rng.integers(1, 10))
    if padding == VALID:
        in_h = max(in_h, (fh - 1) * dh + 1)
        in_w = max(in_w, (fw - 1) * dw + 1)
    out_c = in_c * mult
    out_h, out_w = _out_size(in_h, fh, sh, dh, padding), _out_size(in_w, fw, sw, dw, padding)
    w_shape = (1, fh, fw, out_c)
    act = int(rng.choice([NONE, NONE, RELU, RELU6]))
    options = dict(padding=padding, stride_w=sw, stride_h=sh, dilation_w_factor=dw,
                   dilation_h_factor=dh, depth_multiplier=mult, fused_activation_function=act)
    x_shape = (batches, in_h, in_w, in_c)
    o_shape = (batches, out_h, out_w, out_c)
    if io == "FLOAT32":
        inputs = [TensorDef(x_shape, io), TensorDef(w_shape, io, data=rng.standard_normal(w_shape).astype(np.float32)),
                  TensorDef((out_c,), io, data=rng.standard_normal(out_c).astype(np.float32))]
        model = single_op_model("DEPTHWISE_CONV_2D", inputs, [TensorDef(o_shape, io)], **options)
        return name, model, [_data(rng, x_shape, io)]
    per_channel = rng.random() < 0.7
    fscales, fq = _filter_quant(rng, out_c, per_channel, 3)
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "INT8" else _log_uniform(rng, 1e-5, 1e-3)
    out_scale = _output_scale(rng, in_scale, fscales, fh * fw, io, rng.random() < 0.2)
    if kind.startswith("int4"):
        wdef = TensorDef(w_shape, "INT4", data=_pack_int4(rng.integers(-8, 8, w_shape)), quant=fq)
    else:
        wdef = TensorDef(w_shape, "INT8", data=_data(rng, w_shape, "INT8"), quant=fq)
    zero_point = 7 if kind == "int16_zero_point" else _io_zero_point(rng, io)
    inputs = [TensorDef(x_shape, io, quant=(in_scale, zero_point)), wdef]
    if io == "INT16":
        inputs.append(_bias(rng, out_c, "INT64", in_scale, fscales, 1 << 20))
    elif rng.random() < 0.8:
        inputs.append(_bias(rng, out_c, "INT32", in_scale, fscales, 20000))
    model = single_op_model("DEPTHWISE_CONV_2D", inputs,
                            [TensorDef(o_shape, io, quant=(out_scale, _io_zero_point(rng, io)))],
                            **options)
    return name, model, [_data(rng, x_shape, io)]


# -------------------------------------------------------------------- FULLY_CONNECTED
def fully_connected_case(rng, index: int) -> Case:
    kinds = ("int8", "int8_per_channel", "int8_3d_per_channel", "int8_3d", "int4", "int16",
             "int16_nobias", "int16_long", "float32", "int8_runtime_weights")
    kind = kinds[index % len(kinds)] if index < 48 else (
        "int16_overflow" if index < 52 else "int16_per_channel")
    name = f"fully_connected_{index:03d}_{kind}"
    io = "INT16" if kind.startswith("int16") else ("FLOAT32" if kind == "float32" else "INT8")
    depth = int(rng.integers(1, 40))
    if kind.startswith("int8_3d"):
        depth = 4 * int(rng.integers(1, 10))
    if kind in ("int16_long", "int16_overflow"):
        depth = int(rng.integers(513, 700))
    units = int(rng.integers(1, 20))
    batches = int(rng.integers(1, 4))
    three_d = kind.startswith("int8_3d")
    x_shape = (1, batches, depth) if three_d else (batches, depth)
    o_shape = (1, batches, units) if three_d else (batches, units)
    w_shape = (units, depth)
    act = int(rng.choice([NONE, NONE, RELU, RELU6]))
    options = dict(fused_activation_function=act, keep_num_dims=three_d)
    if io == "FLOAT32":
        inputs = [TensorDef(x_shape, io), TensorDef(w_shape, io, data=rng.standard_normal(w_shape).astype(np.float32)),
                  TensorDef((units,), io, data=rng.standard_normal(units).astype(np.float32))]
        return name, single_op_model("FULLY_CONNECTED", inputs, [TensorDef(o_shape, io)], **options), \
            [_data(rng, x_shape, io)]
    per_channel = "per_channel" in kind
    fscales, fq = _filter_quant(rng, units, per_channel, 0)
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "INT8" else _log_uniform(rng, 1e-5, 1e-3)
    out_scale = _output_scale(rng, in_scale, fscales, depth, io, rng.random() < 0.2)
    extreme = kind in ("int16_long", "int16_overflow")
    runtime_weights = kind == "int8_runtime_weights"
    if kind == "int4":
        wdef = TensorDef(w_shape, "INT4", data=_pack_int4(rng.integers(-8, 8, w_shape)), quant=fq)
    else:
        wv = _data(rng, w_shape, "INT8", extreme=extreme)
        wdef = TensorDef(w_shape, "INT8", data=None if runtime_weights else wv, quant=fq)
    inputs = [TensorDef(x_shape, io, quant=(in_scale, _io_zero_point(rng, io))), wdef]
    if io == "INT16" and kind != "int16_nobias":
        inputs.append(_bias(rng, units, "INT64", in_scale, fscales, 1 << 22))
    elif io == "INT8" and rng.random() < 0.8:
        inputs.append(_bias(rng, units, "INT32", in_scale, fscales, 20000))
    model = single_op_model("FULLY_CONNECTED", inputs,
                            [TensorDef(o_shape, io, quant=(out_scale, _io_zero_point(rng, io)))],
                            **options)
    if kind == "int16_overflow":
        # every product 2^22: CMSIS-NN's int32 partial sums (DSP / MVE) wrap
        wv = np.full(w_shape, -128, np.int8)
        inputs[1] = TensorDef(w_shape, "INT8", data=wv, quant=fq)
        model = single_op_model("FULLY_CONNECTED", inputs,
                                [TensorDef(o_shape, io, quant=(out_scale, 0))], **options)
        return name, model, [np.full(x_shape, -32768, np.int16)]
    feeds = [_data(rng, x_shape, io, extreme=extreme)]
    if runtime_weights:
        feeds.append(wv)
    return name, model, feeds


# ---------------------------------------------------------------------------- SOFTMAX
def softmax_case(rng, index: int) -> Case:
    kinds = ("int8", "int8_int16", "int16", "int8", "float32", "int8_long", "int16", "int8_int16_long")
    kind = kinds[index % len(kinds)] if index < 48 else ("int8_extreme", "int16_extreme")[index % 2]
    name = f"softmax_{index:03d}_{kind}"
    rows = int(rng.integers(1, 5))
    depth = int(rng.integers(1, 40))
    if kind.endswith("long"):
        depth = int(rng.integers(500, 1100))
        rows = int(rng.integers(1, 3))
    shape = (rows, depth) if rng.random() < 0.5 else (1, rows, depth)
    beta = _f32(rng.choice([1.0, 1.0, 0.5, 2.0, rng.uniform(0.1, 3.0)]))
    if kind == "float32":
        model = single_op_model("SOFTMAX", [TensorDef(shape, "FLOAT32")], [TensorDef(shape, "FLOAT32")],
                                beta=beta)
        return name, model, [_data(rng, shape, "FLOAT32") * 3]
    in_type = "INT16" if kind.startswith("int16") else "INT8"
    out_type = "INT8" if kind in ("int8", "int8_long", "int8_extreme") else "INT16"
    if in_type == "INT8":
        in_q = (_log_uniform(rng, 0.01, 0.5), int(rng.integers(-128, 128)))
    else:
        in_q = (_log_uniform(rng, 1e-4, 1e-2), 0)
    if kind.endswith("extreme"):
        # input multipliers far above 1 (large scales: every difference below diff_min
        # but the maximum) or barely above the smallest the kernels take
        scale = float(rng.choice([2.0, 8.0, 3e-6 if in_type == "INT8" else 2e-7]))
        in_q = (_f32(scale), in_q[1])
    out_q = {"INT8": (1.0 / 256, -128), "INT16": (1.0 / 65536, -32768)}[out_type]
    if in_type == "INT16":
        out_q = (1.0 / 32768, 0)
    model = single_op_model("SOFTMAX", [TensorDef(shape, in_type, quant=in_q)],
                            [TensorDef(shape, out_type, quant=out_q)], beta=beta)
    x = _data(rng, shape, in_type)
    if kind.endswith("long") and rng.random() < 0.7:
        x = np.full(shape, int(rng.integers(-20, 20)), _NP[in_type])   # 500+ values at the maximum
    return name, model, [x]


# ---------------------------------------------------------------------------- POOLING
def pooling_case(rng, index: int) -> Case:
    op = "AVERAGE_POOL_2D" if index % 2 == 0 else "MAX_POOL_2D"
    io = ("INT8", "INT16", "INT8", "FLOAT32")[(index // 2) % 4]
    name = f"pooling_{index:03d}_{op.split('_')[0].lower()}_{io.lower()}"
    batches = int(rng.choice([1, 1, 2]))
    in_h, in_w, c = int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.integers(1, 20))
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding = int(rng.integers(0, 2))
    if padding == VALID:
        in_h, in_w = max(in_h, fh), max(in_w, fw)
    else:
        # every window must hold at least one input value (TFLM divides by the count)
        fh, fw = min(fh, in_h + 1), min(fw, in_w + 1)
    out_h, out_w = _out_size(in_h, fh, sh, 1, padding), _out_size(in_w, fw, sw, 1, padding)
    act = int(rng.choice([NONE, NONE, RELU, RELU6]))
    options = dict(padding=padding, stride_w=sw, stride_h=sh, filter_width=fw, filter_height=fh,
                   fused_activation_function=act)
    x_shape, o_shape = (batches, in_h, in_w, c), (batches, out_h, out_w, c)
    q = None
    if io != "FLOAT32":
        q = (_log_uniform(rng, 1e-3, 0.1), _io_zero_point(rng, io))
    model = single_op_model(op, [TensorDef(x_shape, io, quant=q)], [TensorDef(o_shape, io, quant=q)],
                            **options)
    return name, model, [_data(rng, x_shape, io)]


# ------------------------------------------------------------------------ ADD and MUL
def _broadcast_shapes(rng, rank: int, broadcast: bool):
    shape = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    if not broadcast:
        return shape, shape, shape
    other = tuple(1 if rng.random() < 0.5 else d for d in shape)
    if rng.random() < 0.3:
        other = other[int(rng.integers(0, rank)):]
    if rng.random() < 0.5:
        return shape, other, shape
    return other, shape, shape


def _elementwise_case(op: str, rng, index: int) -> Case:
    io = ("INT8", "INT16", "INT8", "FLOAT32", "INT32", "INT8", "INT16")[index % 7]
    extreme = index >= 48
    if extreme:
        io = ("INT8", "INT16")[index % 2]
    rank = int(rng.choice([1, 2, 3, 4, 4, 5]))
    broadcast = rng.random() < 0.4
    s1, s2, so = _broadcast_shapes(rng, rank, broadcast)
    name = f"{op.lower()}_{index:03d}_{io.lower()}_{'b' if broadcast else 'e'}{rank}"
    act = int(rng.choice([NONE, NONE, RELU, RELU6, RELU_N1_TO_1])) if io != "INT32" else NONE
    qs = [None, None, None]
    if io in ("INT8", "INT16"):
        lo, hi = (1e-3, 0.2) if io == "INT8" else (1e-5, 1e-3)
        qs = [(_log_uniform(rng, lo, hi), _io_zero_point(rng, io)) for _ in range(3)]
        if op == "MUL" and rng.random() < 0.3:
            qs[2] = (_f32(qs[0][0] * qs[1][0] * float(rng.choice([0.01, 0.5, 2.0]))), qs[2][1])
        if extreme:
            # output multipliers far above 1 (left shifts that wrap int32) or tiny
            ratio = float(rng.choice([1e-4, 1e-3, 40.0, 3000.0]))
            base = qs[0][0] * (qs[1][0] if op == "MUL" else 1.0)
            qs[2] = (_f32(base * ratio), qs[2][1])
    model = single_op_model(op, [TensorDef(s1, io, quant=qs[0]), TensorDef(s2, io, quant=qs[1])],
                            [TensorDef(so, io, quant=qs[2])], fused_activation_function=act)
    return name, model, [_data(rng, s1, io), _data(rng, s2, io)]


def add_case(rng, index: int) -> Case:
    return _elementwise_case("ADD", rng, index)


def mul_case(rng, index: int) -> Case:
    return _elementwise_case("MUL", rng, index)


#: op module name -> case builder (rng, index) -> (name, model, inputs)
BUILDERS: Dict[str, Callable] = {
    "conv": conv_case,
    "depthwise_conv": depthwise_conv_case,
    "fully_connected": fully_connected_case,
    "softmax": softmax_case,
    "pooling": pooling_case,
    "add": add_case,
    "mul": mul_case,
}
