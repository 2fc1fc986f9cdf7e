"""Seeded single-op models for esp-tflite-micro's ESP-NN kernels (CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED, SOFTMAX, AVERAGE_POOL_2D / MAX_POOL_2D, ADD, MUL): every
type, stride, padding, dilation and channel count the ESP-NN function sets branch on.

* conv: 1x1 stride 1 without padding (input channels a multiple of 8 or not: esp32s3 /
  esp32p4 scratch branches; fewer than 16 channels: esp32p4's channel padding), 1x1 with
  stride 2, small-channel windows (the esp32s3 / esp32p4 im2col paths: filter width x
  channels < 16 <= window), the general path with and without padding (and right /
  bottom overhang), esp32p4's tiled path (padded inputs beyond its 32 KiB cache budget),
  dilation (reference fallback), groups (1x1: refused on the generic optimised C and
  esp32p4; larger: the plain C), int4 weights, int16 with int64 / int32 / no bias,
  float32;
* depthwise: multiplier 1 with channels a multiple of 16, 8 (>= 12 or = 8), other counts
  > 3 and <= 3, 3x3 and other filters, padded and not; multipliers a multiple of 4 and
  others; dilation; int4; int16; float32;
* fully connected: per-tensor and per-channel int8 (per-channel weights with a non-zero
  zero point: ESP-NN applies it), int4, int16 with int64 / int32 / no bias (and the
  model's int32 bias quantisation), per-channel int16 (refused), float32;
* softmax: int8 -> int8 rows of rank 2 and 3 (rank 3 rows longer than dims[1]: the
  optimised sets' scratch overflow, refused), rows with 512+ values at the maximum (the
  32+-bit shift), int8 -> int16, int16, float32;
* pooling: average / max, int8 with channels a multiple of 4 and not, int16, float32;
* add / mul: int8 with equal shapes (ESP-NN) and broadcasts (reference), int16, int32,
  float32.

``generate(op, count, seed)`` returns ``[(name, model bytes, [input arrays])]``;
tests/record_esp_nn_cases.py stores them with the ESP oracle's figures in
tests/data/esp_nn_cases/.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import numpy as np

from tests.cmsis_nn_group1_cases import (NONE, RELU, RELU6, SAME, VALID, _bias, _data,
                                         _elementwise_case, _filter_quant, _io_zero_point,
                                         _log_uniform, _out_size, _output_scale, _pack_int4,
                                         pooling_case)
from tests.helpers import TensorDef, single_op_model

Case = Tuple[str, bytes, List[np.ndarray]]


# --------------------------------------------------------------------------- CONV_2D
CONV_KINDS = ("int8_1x1_c8", "int8_1x1", "int8_1x1_small", "int8_1x1_s2", "int8_im2col",
              "int8_general_pad", "int8_general_valid", "int8_overhang", "int8_p4_tiled",
              "int8_dilated", "int8_groups", "int8_groups_1x1", "int4", "int16_s64",
              "int16_s32", "int16_nobias", "float32", "int8")


def conv_case(rng, index: int) -> Case:
    kind = CONV_KINDS[index % len(CONV_KINDS)]
    name = f"conv_{index:03d}_{kind}"
    io = "INT16" if kind.startswith("int16") else ("FLOAT32" if kind == "float32" else "INT8")
    batches = int(rng.choice([1, 1, 2]))
    in_h, in_w = int(rng.integers(2, 10)), int(rng.integers(2, 10))
    in_c, out_c = int(rng.integers(1, 20)), int(rng.integers(1, 12))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw, dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3)), 1, 1
    padding, groups = int(rng.integers(0, 2)), 1
    if kind.startswith("int8_1x1"):
        fh = fw = 1
        sh = sw = 2 if kind == "int8_1x1_s2" else 1
        in_c = {"int8_1x1_c8": 8 * int(rng.integers(2, 5)), "int8_1x1_small": int(rng.integers(1, 16))
                }.get(kind, int(rng.choice([17, 19, 20, 27, 33])))
        padding = int(rng.integers(0, 2))
    elif kind == "int8_im2col":
        fh, fw = 3, 3
        in_c = int(rng.integers(2, 6))          # 3 x channels < 16 <= 9 x channels
    elif kind in ("int8_general_pad", "int8_general_valid", "int8_overhang"):
        fh, fw = int(rng.integers(2, 4)), int(rng.integers(2, 4))
        in_c = int(rng.choice([8, 16, 17, 24]))
        padding = SAME if kind == "int8_general_pad" else VALID
        if kind == "int8_overhang":
            sh, sw = 2, 2                       # VALID with stride 2: a right / bottom overhang
            in_h, in_w = 2 * int(rng.integers(2, 5)) + fh, 2 * int(rng.integers(2, 5)) + fw
    elif kind == "int8_p4_tiled":
        fh, fw, padding, sh, sw = 3, 3, SAME, 1, 1
        in_h, in_w, in_c = 40, 40, 24          # padded input > 32 KiB
        out_c, batches = 2, 1
    elif kind == "int8_dilated":
        dh, dw = int(rng.choice([1, 2])), 2
        fh, fw = 2, int(rng.integers(2, 4))
    elif kind.startswith("int8_groups"):
        groups = int(rng.integers(2, 4))
        in_c, out_c = groups * int(rng.integers(1, 5)), groups * int(rng.integers(1, 4))
        if kind == "int8_groups_1x1":
            fh = fw = 1
            sh = sw = 1
    if padding == VALID:
        in_h, in_w = max(in_h, (fh - 1) * dh + 1), max(in_w, (fw - 1) * dw + 1)
    out_h, out_w = _out_size(in_h, fh, sh, dh, padding), _out_size(in_w, fw, sw, dw, padding)
    w_shape = (out_c, fh, fw, in_c // groups)
    act = int(rng.choice([NONE, NONE, RELU, RELU6]))
    options = dict(padding=padding, stride_w=sw, stride_h=sh, dilation_w_factor=dw,
                   dilation_h_factor=dh, fused_activation_function=act)
    x_shape, o_shape = (batches, in_h, in_w, in_c), (batches, out_h, out_w, out_c)
    if io == "FLOAT32":
        inputs = [TensorDef(x_shape, io), TensorDef(w_shape, io, data=rng.standard_normal(w_shape).astype(np.float32)),
                  TensorDef((out_c,), io, data=rng.standard_normal(out_c).astype(np.float32))]
        return name, single_op_model("CONV_2D", inputs, [TensorDef(o_shape, io)], **options), \
            [_data(rng, x_shape, io)]
    fscales, fq = _filter_quant(rng, out_c, rng.random() < 0.7, 0)
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "INT8" else _log_uniform(rng, 1e-5, 1e-3)
    out_scale = _output_scale(rng, in_scale, fscales, fh * fw * in_c // groups, io, rng.random() < 0.2)
    if kind == "int4":
        wdef = TensorDef(w_shape, "INT4", data=_pack_int4(rng.integers(-8, 8, w_shape)), quant=fq)
    else:
        wdef = TensorDef(w_shape, "INT8", data=_data(rng, w_shape, "INT8"), quant=fq)
    inputs = [TensorDef(x_shape, io, quant=(in_scale, _io_zero_point(rng, io))), wdef]
    if kind == "int16_s64":
        inputs.append(_bias(rng, out_c, "INT64", in_scale, fscales, 1 << 22))
    elif kind == "int16_s32":
        inputs.append(_bias(rng, out_c, "INT32", in_scale, fscales, 30000))
    elif kind == "int16_nobias":
        options["quantized_bias_type"] = int(rng.choice([0, 2, 4]))
    elif rng.random() < 0.8:
        inputs.append(_bias(rng, out_c, "INT32", in_scale, fscales, 20000))
    model = single_op_model("CONV_2D", inputs,
                            [TensorDef(o_shape, io, quant=(out_scale, _io_zero_point(rng, io)))], **options)
    return name, model, [_data(rng, x_shape, io)]


# ------------------------------------------------------------------ DEPTHWISE_CONV_2D
DEPTHWISE_KINDS = ("int8_c16_3x3", "int8_c16_3x3_valid", "int8_c24_3x3", "int8_c8_3x3",
                   "int8_c8_5x5", "int8_c8_big", "int8_mult1", "int8_c3", "int8_mult4",
                   "int8_mult2", "int8_dilated", "int4", "int16", "float32")


def depthwise_conv_case(rng, index: int) -> Case:
    kind = DEPTHWISE_KINDS[index % len(DEPTHWISE_KINDS)]
    name = f"depthwise_conv_{index:03d}_{kind}"
    io = "INT16" if kind == "int16" else ("FLOAT32" if kind == "float32" else "INT8")
    batches = int(rng.choice([1, 1, 2]))
    in_h, in_w = int(rng.integers(3, 10)), int(rng.integers(3, 10))
    in_c, mult = int(rng.integers(1, 12)), 1
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw, dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3)), 1, 1
    padding = int(rng.integers(0, 2))
    if kind.startswith("int8_c") and kind not in ("int8_c3",):
        in_c = {"int8_c16_3x3": 16 * int(rng.integers(1, 3)), "int8_c16_3x3_valid": 16,
                "int8_c24_3x3": int(rng.choice([24, 40])), "int8_c8_big": 8}.get(kind, 8)
        fh = fw = 5 if kind == "int8_c8_5x5" else 3 if "3x3" in kind else int(rng.integers(2, 5))
        if kind == "int8_c16_3x3_valid":
            padding, sh, sw = VALID, 1, 1
        if kind == "int8_c8_big":              # int16 copies past esp32s3's 48 KiB: tiled
            in_h, in_w, padding = 60, 60, VALID
            batches = 1
    elif kind == "int8_mult1":
        in_c = int(rng.choice([4, 5, 6, 7, 9, 10, 12]))
    elif kind == "int8_c3":
        in_c = int(rng.integers(1, 4))
    elif kind == "int8_mult4":
        mult = int(rng.choice([4, 8]))
    elif kind == "int8_mult2":
        mult = int(rng.choice([2, 3]))
    elif kind == "int8_dilated":
        dh, dw = 2, int(rng.choice([1, 2]))
    elif kind == "int16":
        mult = int(rng.choice([1, 2]))
    if padding == VALID:
        in_h, in_w = max(in_h, (fh - 1) * dh + 1), max(in_w, (fw - 1) * dw + 1)
    out_c = in_c * mult
    out_h, out_w = _out_size(in_h, fh, sh, dh, padding), _out_size(in_w, fw, sw, dw, padding)
    w_shape = (1, fh, fw, out_c)
    act = int(rng.choice([NONE, NONE, RELU, RELU6]))
    options = dict(padding=padding, stride_w=sw, stride_h=sh, dilation_w_factor=dw,
                   dilation_h_factor=dh, depth_multiplier=mult, fused_activation_function=act)
    x_shape, o_shape = (batches, in_h, in_w, in_c), (batches, out_h, out_w, out_c)
    if io == "FLOAT32":
        inputs = [TensorDef(x_shape, io), TensorDef(w_shape, io, data=rng.standard_normal(w_shape).astype(np.float32)),
                  TensorDef((out_c,), io, data=rng.standard_normal(out_c).astype(np.float32))]
        return name, single_op_model("DEPTHWISE_CONV_2D", inputs, [TensorDef(o_shape, io)], **options), \
            [_data(rng, x_shape, io)]
    fscales, fq = _filter_quant(rng, out_c, rng.random() < 0.7, 3)
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "INT8" else _log_uniform(rng, 1e-5, 1e-3)
    out_scale = _output_scale(rng, in_scale, fscales, fh * fw, io, rng.random() < 0.2)
    if kind == "int4":
        wdef = TensorDef(w_shape, "INT4", data=_pack_int4(rng.integers(-8, 8, w_shape)), quant=fq)
    else:
        wdef = TensorDef(w_shape, "INT8", data=_data(rng, w_shape, "INT8"), quant=fq)
    inputs = [TensorDef(x_shape, io, quant=(in_scale, _io_zero_point(rng, io))), wdef]
    if io == "INT16":
        inputs.append(_bias(rng, out_c, "INT64", in_scale, fscales, 1 << 20))
    elif rng.random() < 0.8:
        inputs.append(_bias(rng, out_c, "INT32", in_scale, fscales, 20000))
    model = single_op_model("DEPTHWISE_CONV_2D", inputs,
                            [TensorDef(o_shape, io, quant=(out_scale, _io_zero_point(rng, io)))], **options)
    return name, model, [_data(rng, x_shape, io)]


# -------------------------------------------------------------------- FULLY_CONNECTED
FC_KINDS = ("int8", "int8_per_channel", "int8_per_channel_zp", "int8_3d", "int4", "int16_s64",
            "int16_nobias", "int16_nobias_q32", "int16_s32", "int16_per_channel", "float32")


def fully_connected_case(rng, index: int) -> Case:
    kind = FC_KINDS[index % len(FC_KINDS)]
    name = f"fully_connected_{index:03d}_{kind}"
    io = "INT16" if kind.startswith("int16") else ("FLOAT32" if kind == "float32" else "INT8")
    depth, units, batches = int(rng.integers(1, 48)), int(rng.integers(1, 20)), int(rng.integers(1, 4))
    three_d = kind == "int8_3d"
    x_shape = (1, batches, depth) if three_d else (batches, depth)
    o_shape = (1, batches, units) if three_d else (batches, units)
    w_shape = (units, depth)
    options = dict(fused_activation_function=int(rng.choice([NONE, NONE, RELU, RELU6])),
                   keep_num_dims=three_d)
    if io == "FLOAT32":
        inputs = [TensorDef(x_shape, io), TensorDef(w_shape, io, data=rng.standard_normal(w_shape).astype(np.float32)),
                  TensorDef((units,), io, data=rng.standard_normal(units).astype(np.float32))]
        return name, single_op_model("FULLY_CONNECTED", inputs, [TensorDef(o_shape, io)], **options), \
            [_data(rng, x_shape, io)]
    per_channel = "per_channel" in kind
    fscales, fq = _filter_quant(rng, units, per_channel, 0)
    if kind == "int8_per_channel_zp":
        # per-channel weights with a non-zero zero point: ESP-NN offsets the weights by it
        fq = (fq[0], rng.integers(-20, 21, units).astype(np.int64), 0)
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "INT8" else _log_uniform(rng, 1e-5, 1e-3)
    out_scale = _output_scale(rng, in_scale, fscales, depth, io, rng.random() < 0.2)
    if kind == "int4":
        wdef = TensorDef(w_shape, "INT4", data=_pack_int4(rng.integers(-8, 8, w_shape)), quant=fq)
    else:
        wdef = TensorDef(w_shape, "INT8", data=_data(rng, w_shape, "INT8"), quant=fq)
    inputs = [TensorDef(x_shape, io, quant=(in_scale, _io_zero_point(rng, io))), wdef]
    if kind in ("int16_s64", "int16_per_channel"):
        inputs.append(_bias(rng, units, "INT64", in_scale, fscales, 1 << 22))
    elif kind == "int16_s32":
        inputs.append(_bias(rng, units, "INT32", in_scale, fscales, 30000))
    elif kind == "int16_nobias_q32":
        options["quantized_bias_type"] = 2           # int32 bias quantisation, no bias
    elif io == "INT8" and rng.random() < 0.8:
        inputs.append(_bias(rng, units, "INT32", in_scale, fscales, 20000))
    model = single_op_model("FULLY_CONNECTED", inputs,
                            [TensorDef(o_shape, io, quant=(out_scale, _io_zero_point(rng, io)))], **options)
    return name, model, [_data(rng, x_shape, io)]


# ---------------------------------------------------------------------------- SOFTMAX
SOFTMAX_KINDS = ("int8", "int8_rank3", "int8_rank3_long_rows", "int8_long", "int8_int16",
                 "int16", "float32", "int8_rank4")


def softmax_case(rng, index: int) -> Case:
    kind = SOFTMAX_KINDS[index % len(SOFTMAX_KINDS)]
    name = f"softmax_{index:03d}_{kind}"
    rows, depth = int(rng.integers(1, 5)), int(rng.integers(2, 40))
    shape = (rows, depth)
    if kind == "int8_rank3":
        shape = (1, depth + int(rng.integers(0, 5)), depth)     # dims[1] >= the row
    elif kind == "int8_rank3_long_rows":
        shape = (1, max(1, depth // 4), depth)                  # rows longer than dims[1]
    elif kind == "int8_rank4":
        shape = (1, 1, 1, depth)
    elif kind == "int8_long":
        shape = (int(rng.integers(1, 3)), int(rng.integers(520, 1100)))
    beta = float(np.float32(rng.choice([1.0, 0.5, 2.0])))
    if kind == "float32":
        model = single_op_model("SOFTMAX", [TensorDef(shape, "FLOAT32")], [TensorDef(shape, "FLOAT32")],
                                beta=beta)
        return name, model, [_data(rng, shape, "FLOAT32") * 3]
    in_type = "INT16" if kind == "int16" else "INT8"
    out_type = "INT16" if kind in ("int8_int16", "int16") else "INT8"
    in_q = (_log_uniform(rng, 0.01, 0.5), int(rng.integers(-128, 128))) if in_type == "INT8" \
        else (_log_uniform(rng, 1e-4, 1e-2), 0)
    out_q = {"INT8": (1.0 / 256, -128), "INT16": (1.0 / 65536, -32768)}[out_type]
    if in_type == "INT16":
        out_q = (1.0 / 32768, 0)
    model = single_op_model("SOFTMAX", [TensorDef(shape, in_type, quant=in_q)],
                            [TensorDef(shape, out_type, quant=out_q)], beta=beta)
    x = _data(rng, shape, in_type)
    if kind == "int8_long":
        x = np.full(shape, int(rng.integers(-20, 20)), np.int8)       # 520+ values at the maximum
        x.reshape(-1)[:: int(rng.integers(3, 9))] -= 3
    return name, model, [x]


# ---------------------------------------------------------------------------- POOLING
def _pooling_channels_case(rng, index: int) -> Case:
    """int8 pooling with channels a multiple of 4 (the function set's routine) or not
    (ESP-NN's plain C)."""
    op = "AVERAGE_POOL_2D" if index % 2 == 0 else "MAX_POOL_2D"
    c = 4 * int(rng.integers(1, 6)) if (index // 2) % 2 == 0 else int(rng.choice([1, 3, 5, 6, 7, 9]))
    name = f"pooling_{index:03d}_{op.split('_')[0].lower()}_int8_c{c}"
    in_h, in_w = int(rng.integers(2, 12)), int(rng.integers(2, 12))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = int(rng.integers(0, 2))
    if padding == VALID:
        in_h, in_w = max(in_h, fh), max(in_w, fw)
    else:
        fh, fw = min(fh, in_h + 1), min(fw, in_w + 1)
    out_h, out_w = _out_size(in_h, fh, sh, 1, padding), _out_size(in_w, fw, sw, 1, padding)
    options = dict(padding=padding, stride_w=sw, stride_h=sh, filter_width=fw, filter_height=fh,
                   fused_activation_function=int(rng.choice([NONE, RELU, RELU6])))
    q = (_log_uniform(rng, 1e-3, 0.1), _io_zero_point(rng, "INT8"))
    model = single_op_model(op, [TensorDef((1, in_h, in_w, c), "INT8", quant=q)],
                            [TensorDef((1, out_h, out_w, c), "INT8", quant=q)], **options)
    return name, model, [_data(rng, (1, in_h, in_w, c), "INT8")]


def pooling_esp_case(rng, index: int) -> Case:
    return _pooling_channels_case(rng, index) if index % 3 != 2 else pooling_case(rng, index)


# ------------------------------------------------------------------------ ADD and MUL
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
    "pooling": pooling_esp_case,
    "add": add_case,
    "mul": mul_case,
}


def generate(op: str, count: int, seed: int) -> List[Case]:
    """``count`` seeded cases of ``op`` (a key of :data:`BUILDERS`)."""
    if op not in BUILDERS:
        raise ValueError(f"no ESP-NN cases for {op!r}; known: {', '.join(BUILDERS)}")
    rng = np.random.default_rng(seed)
    return [BUILDERS[op](rng, index) for index in range(count)]
