"""Quantization scales swept against TFLM, with exhaustive inputs (issue 17).

A multiplier computed in float32 where TFLM computes in double (or the reverse) moves an
output by one step only on the few inputs near a rounding boundary, which random inputs
and a handful of scales rarely reach (issue 17's FULLY_CONNECTED went unseen). Here every
kernel that derives a multiplier from tensor scales (or checks them) runs under many
random scale sets (log-uniform, zero points random), each run seeing every input value
its element-wise integer path can receive:

* unary int8 / uint8 ops: all 256 inputs; unary int16 ops: all 65536 inputs (RELU,
  RELU6, LEAKY_RELU, HARD_SWISH, ELU, ABS, RSQRT (its valid inputs: at or above the
  zero point), LOGISTIC, TANH, SOFTMAX int8 / int16 / int8->int16, LOG_SOFTMAX);
* QUANTIZE: int8->int8 / uint8 / int16 / int32, uint8->int8, int16->int8 / int16 /
  int32 (all inputs), int32->int8 / int16 (65536 random values and the extremes),
  float32->int8 / int16 (signed zeros, infinities, nan, the float32 extremes and 65536
  magnitudes log-uniform over the whole range); DEQUANTIZE int8 / uint8 / int16 and
  EMBEDDING_LOOKUP int8->float32 (dequantized rows): every input;
* binary int8 ops (ADD, SUB, MUL, SQUARED_DIFFERENCE, DIV, PRELU (input x alpha), the
  six comparisons with differently quantized operands, ADD_N with a third random
  operand): all 65536 input pairs (which also covers ADD's int8 pair table completely);
  binary int16 ops (ADD, SUB, MUL, SQUARED_DIFFERENCE, PRELU int16 x int8): 65536
  random pairs; ADD / SUB / MUL (int8 and int16) and DIV int8 again with a drawn fused
  activation (its bounds quantized in the output scale);
* CUMSUM int8 (every value starts a row), MEAN / SUM int8 and int16 (random, several
  axes, keep_dims both ways), AVERAGE_POOL_2D / MAX_POOL_2D int8 and int16 (no
  requantisation: TFLM's scale check and the fused activation in the output scale);
* FULLY_CONNECTED int8 / int16 / per-channel, CONV_2D, DEPTHWISE_CONV_2D (int8
  per-channel, int16) and TRANSPOSE_CONV (int8 per-channel / per-tensor, int16) with
  random inputs (bias and weights random);
* BATCH_MATMUL int8 at depth 1 over all 65536 value pairs, int16 random;
* SVDF int8 (int8 and int16 state) over 8 invokes (state carried over);
* UNIDIRECTIONAL_SEQUENCE_LSTM, fully integer (int8 and int16 activations, int16 cell
  state) over 3 invokes: every gate weight scale, the hidden and the cell-state scale
  drawn (the cell scale a power of two or not; with extreme scales also negative or
  huge: TFLM takes CheckedLog2 of it and ignores whether it was a power of two).

Scale sets per op: MICRO_RUNTIME_SCALE_SETS (default 4) and, for the extreme scales of
:class:`ExtremeDraw`, MICRO_RUNTIME_EXTREME_SCALE_SETS (default 2);
benchmarks/scale_sweep.py runs many more per op and prints the figures.
"""
from __future__ import annotations

import os
from typing import Callable, Dict, List, Tuple

import numpy as np
import pytest

from micro_runtime import MicroRuntimeError
from tests.helpers import TensorDef, run_ours, single_op_model

pytestmark = pytest.mark.oracle

SCALE_SETS = int(os.environ.get("MICRO_RUNTIME_SCALE_SETS", "4"))

ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(1, 65536)
PAIRS_INT8 = (np.repeat(ALL_INT8.ravel(), 256).reshape(1, -1), np.tile(ALL_INT8.ravel(), 256).reshape(1, -1))


class Draw:
    """Random scales and zero points (float32 values, as a model stores them)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def scale(self, lo: float, hi: float) -> float:
        return float(np.float32(np.exp(self.rng.uniform(np.log(lo), np.log(hi)))))

    def io_scale(self, io: str) -> float:
        return self.scale(1e-3, 0.5) if io in ("INT8", "UINT8") else self.scale(1e-5, 1e-2)

    def zp(self, io: str) -> int:
        if io == "UINT8":
            return int(self.rng.integers(0, 256))
        return int(self.rng.integers(-128, 128)) if io == "INT8" else 0


class ExtremeDraw(Draw):
    """Scales over the whole float32 range a model can store: log-uniform from 1e-45
    (the smallest denormal) to 1e30, one in four a fixed extreme (the smallest denormal,
    the smallest normal, 1e-30, 1e30, 3.4e38); zero points as :class:`Draw`."""

    EXTREMES = (1.4e-45, 1.1754944e-38, 1e-30, 1e30, 3.4e38)

    def scale(self, lo: float, hi: float) -> float:
        if self.rng.integers(4) == 0:
            return float(np.float32(self.EXTREMES[int(self.rng.integers(len(self.EXTREMES)))]))
        return float(np.float32(np.exp(self.rng.uniform(np.log(1.4e-45), np.log(1e30)))))

    def io_scale(self, io: str) -> float:
        return self.scale(0.0, 0.0)


def every_value(io: str, d: Draw) -> np.ndarray:
    """One row holding every value of an 8- or 16-bit type (65536 random int32 values,
    the extremes included; float32: signed zeros, infinities, nan, the largest and
    smallest values and 65536 magnitudes log-uniform over the whole float32 range)."""
    if io == "INT8":
        return ALL_INT8
    if io == "UINT8":
        return np.arange(256, dtype=np.uint8).reshape(1, 256)
    if io == "INT16":
        return ALL_INT16
    if io == "INT32":
        x = d.rng.integers(-(1 << 31), 1 << 31, 65536, dtype=np.int64)
        x[:6] = [-(1 << 31), (1 << 31) - 1, 0, -1, 1, 1 << 30]
        return x.astype(np.int32).reshape(1, -1)
    mags = np.exp(d.rng.uniform(np.log(1.4e-45), np.log(3.4e38), 65536)).astype(np.float32)
    x = mags * np.where(d.rng.integers(2, size=65536) == 0, -1, 1).astype(np.float32)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4028235e38, -3.4028235e38, 1.4e-45]
    return x.reshape(1, -1)


def unary(op: str, io: str = "INT8", out_q=None, out_io: str = None, inputs=None, **options):
    """``op`` on every input value (:func:`every_value`; ``inputs(d, zero_point)``
    instead when given); ``out_io``: the output type when it is not the input's;
    ``out_q``: a fixed output quantization (None: drawn; "none": unquantized)."""
    def make(d: Draw):
        oio = out_io or io
        qin = (d.io_scale(io), d.zp(io)) if io != "FLOAT32" else None
        x = inputs(d, qin[1] if qin else 0) if inputs else every_value(io, d)
        qout = None if out_q == "none" else out_q or (d.io_scale(oio), d.zp(oio))
        opts = {k: (v(d) if callable(v) else v) for k, v in options.items()}
        return single_op_model(op, [TensorDef(x.shape, io, qin)], [TensorDef(x.shape, oio, qout)], **opts), [[x]]
    return make


def binary(op: str, io: str = "INT8", out_io: str = None, same_q: bool = False, extra: int = 0,
           activation: bool = False):
    """int8: all 65536 input pairs; int16: 65536 random pairs. ``out_io``: an unquantized
    output of that type (comparisons: BOOL); ``same_q``: the inputs share one
    quantization (ADD_N); ``extra``: more random inputs of that quantization;
    ``activation``: a drawn fused activation (none, RELU, RELU_N1_TO_1, RELU6)."""
    def make(d: Draw):
        if io == "INT8":
            x1, x2 = PAIRS_INT8
        else:
            x1 = d.rng.integers(-32768, 32768, (1, 65536)).astype(np.int16)
            x2 = d.rng.integers(-32768, 32768, (1, 65536)).astype(np.int16)
        info = np.iinfo(x1.dtype)
        xs = [x1, x2] + [d.rng.integers(info.min, info.max + 1, x1.shape).astype(x1.dtype)
                         for _ in range(extra)]
        q = [(d.io_scale(io), d.zp(io)) for _ in range(3)]
        if same_q:
            q[1] = q[0]
        ins = [TensorDef(x.shape, io, q[0] if same_q and k else q[min(k, 1)]) for k, x in enumerate(xs)]
        out = TensorDef(x1.shape, out_io, None) if out_io else TensorDef(x1.shape, io, q[2])
        opts = dict(fused_activation_function=int(d.rng.integers(4))) if activation else {}
        return single_op_model(op, ins, [out], **opts), [xs]
    return make


def fully_connected(io: str = "INT8", per_channel: bool = False):
    def make(d: Draw):
        depth, units, batches = 64, 16, 64
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x = d.rng.integers(info.min, info.max + 1, (batches, depth)).astype(info.dtype)
        w = d.rng.integers(-127, 128, (units, depth)).astype(np.int8)
        s_in = d.io_scale(io)
        s_w = [d.scale(1e-3, 0.1) for _ in range(units)] if per_channel else d.scale(1e-3, 0.1)
        bias_scale = np.float64(s_in) * np.asarray(s_w, np.float64)
        bias = d.rng.integers(-20000, 20000, units).astype(np.int32)
        wq = (s_w, [0] * units, 0) if per_channel else (s_w, 0)
        bq = (list(bias_scale), [0] * units) if per_channel else ([float(bias_scale)], [0])
        model = single_op_model("FULLY_CONNECTED", [
            TensorDef((batches, depth), io, quant=(s_in, d.zp(io))),
            TensorDef((units, depth), "INT8", data=w, quant=wq),
            TensorDef((units,), "INT32", data=bias, quant=bq)],
            [TensorDef((batches, units), io, quant=(d.scale(1e-2, 2.0), d.zp(io)))])
        return model, [[x]]
    return make


def convolution(op: str, io: str = "INT8", per_channel: bool = True):
    def make(d: Draw):
        channels = 8
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x = d.rng.integers(info.min, info.max + 1, (1, 8, 8, channels)).astype(info.dtype)
        s_in = d.io_scale(io)
        n = channels if per_channel else 1
        s_w = [d.scale(1e-3, 0.1) for _ in range(n)]
        if op in ("CONV_2D", "TRANSPOSE_CONV"):
            w = d.rng.integers(-127, 128, (channels, 3, 3, channels)).astype(np.int8)
            qdim, opts = 0, dict(padding=0, stride_w=1, stride_h=1)
        else:
            w = d.rng.integers(-127, 128, (1, 3, 3, channels)).astype(np.int8)
            qdim, opts = 3, dict(padding=0, stride_w=1, stride_h=1, depth_multiplier=1)
        bias_scale = np.broadcast_to(np.float64(s_in) * np.asarray(s_w, np.float64), (channels,))
        bias_type = "INT32" if io == "INT8" else "INT64"
        bias = d.rng.integers(-20000, 20000, channels).astype(np.int32 if io == "INT8" else np.int64)
        inputs = [TensorDef(x.shape, io, quant=(s_in, d.zp(io))),
                  TensorDef(w.shape, "INT8", data=w, quant=(s_w, [0] * n, qdim)),
                  TensorDef((channels,), bias_type, data=bias, quant=(list(bias_scale), [0] * channels))]
        if op == "TRANSPOSE_CONV":     # output shape, weights, input, bias
            inputs = [TensorDef((4,), "INT32", data=np.array([1, 8, 8, channels], np.int32)),
                      inputs[1], inputs[0], inputs[2]]
        model = single_op_model(op, inputs, [TensorDef((1, 8, 8, channels), io,
                                                        quant=(d.scale(1e-2, 2.0), d.zp(io)))], **opts)
        return model, [[x]]
    return make


def svdf(state: str):
    def make(d: Draw):
        from tests.test_op_svdf import svdf_model
        kind = "int8_state16" if state == "int16" else "int8"
        q = (d.scale(1e-3, 0.5), d.zp("INT8"), d.scale(1e-3, 0.1),
             d.scale(1e-4, 0.1) if state == "int16" else d.scale(1e-3, 0.5), 0,
             d.scale(1e-4, 0.1), d.scale(1e-2, 1.0), d.zp("INT8"))
        model, gen = svdf_model(kind, 4, 32, 8, 2, 6, rng=d.rng, q=q)
        return model, [[gen()] for _ in range(8)]
    return make


def batch_matmul(io: str = "INT8"):
    def make(d: Draw):
        if io == "INT8":
            # depth 1: every pair of int8 values meets once (all 65536 accumulators)
            a = np.arange(-128, 128, dtype=np.int8).reshape(1, 256, 1)
            b = np.arange(-128, 128, dtype=np.int8).reshape(1, 1, 256)
            qa, qb = (d.io_scale(io), d.zp(io)), (d.io_scale(io), d.zp(io))
            out_shape = (1, 256, 256)
        else:
            a = d.rng.integers(-32768, 32768, (1, 64, 8)).astype(np.int16)
            b = d.rng.integers(-32768, 32768, (1, 8, 64)).astype(np.int16)
            qa, qb = (d.io_scale(io), 0), (d.io_scale(io), 0)
            out_shape = (1, 64, 64)
        qo = (d.scale(1e-4, 1.0) if io == "INT8" else d.scale(1e-3, 10.0), d.zp(io))
        model = single_op_model("BATCH_MATMUL", [TensorDef(a.shape, io, qa), TensorDef(b.shape, io, qb)],
                                [TensorDef(out_shape, io, qo)], adj_x=False, adj_y=False)
        return model, [[a, b]]
    return make


def cumsum():
    def make(d: Draw):
        # every int8 value starts a row; the sums run along the rows (random rest)
        x = d.rng.integers(-128, 128, (256, 8)).astype(np.int8)
        x[:, 0] = ALL_INT8.ravel()
        q = (d.io_scale("INT8"), d.zp("INT8"))
        model = single_op_model("CUMSUM", [TensorDef(x.shape, "INT8", q),
                                           TensorDef((), "INT32", data=np.array(1, np.int32))],
                                [TensorDef(x.shape, "INT8", (d.io_scale("INT8"), d.zp("INT8")))],
                                exclusive=bool(d.rng.integers(2)), reverse=bool(d.rng.integers(2)))
        return model, [[x]]
    return make


def prelu(io: str = "INT8"):
    def make(d: Draw):
        if io == "INT8":
            x, alpha = PAIRS_INT8          # every input against every alpha
        else:
            x = d.rng.integers(-32768, 32768, (1, 65536)).astype(np.int16)
            alpha = d.rng.integers(-128, 128, (1, 65536)).astype(np.int8)
        model = single_op_model("PRELU", [TensorDef(x.shape, io, (d.io_scale(io), d.zp(io))),
                                          TensorDef(alpha.shape, "INT8", (d.io_scale("INT8"), d.zp("INT8")))],
                                [TensorDef(x.shape, io, (d.io_scale(io), d.zp(io)))])
        return model, [[x, alpha]]
    return make


def reduce(op: str, io: str = "INT8"):
    def make(d: Draw):
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x = d.rng.integers(info.min, info.max + 1, (4, 512, 6)).astype(info.dtype)
        axes = [[1], [2], [1, 2], [0, 2]][int(d.rng.integers(4))]
        keep = bool(d.rng.integers(2))
        out_shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape) if keep or k not in axes)
        model = single_op_model(op, [TensorDef(x.shape, io, (d.io_scale(io), d.zp(io))),
                                     TensorDef((len(axes),), "INT32", data=np.array(axes, np.int32))],
                                [TensorDef(out_shape, io, (d.io_scale(io), d.zp(io)))], keep_dims=keep)
        return model, [[x]]
    return make


def pooling(op: str, io: str = "INT8"):
    """No requantisation: TFLM requires the scales to differ by at most 1e-6 and clamps
    the fused activation in the output's quantization."""
    def make(d: Draw):
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x = d.rng.integers(info.min, info.max + 1, (1, 16, 16, 8)).astype(info.dtype)
        s_in, zp = d.io_scale(io), d.zp(io)
        k = int(d.rng.integers(8))     # the output's scale: its own, a near one, the input's
        s_out = d.io_scale(io) if k == 0 else float(np.float32(s_in * (1 + 1e-6))) if k < 3 else s_in
        model = single_op_model(op, [TensorDef(x.shape, io, (s_in, zp))],
                                [TensorDef((1, 8, 8, 8), io, (s_out, zp))],
                                padding=0, stride_w=2, stride_h=2, filter_width=3, filter_height=3,
                                fused_activation_function=int(d.rng.integers(4)))
        return model, [[x]]
    return make


def embedding_lookup():
    def make(d: Draw):
        table = ALL_INT8.reshape(256, 1)
        model = single_op_model("EMBEDDING_LOOKUP", [
            TensorDef((256,), "INT32"), TensorDef(table.shape, "INT8", data=table, quant=(d.io_scale("INT8"), 0))],
            [TensorDef(table.shape, "FLOAT32")])
        return model, [[np.arange(256, dtype=np.int32)]]
    return make


def _cell_scale(d: Draw) -> float:
    """An LSTM cell-state scale: a power of two (what converters write), or any drawn
    scale; with :class:`ExtremeDraw` also negative ones and the extremes (TFLM takes
    CheckedLog2 of it and ignores whether it was a power of two)."""
    kind = int(d.rng.integers(4 if isinstance(d, ExtremeDraw) else 2))
    if kind == 0:
        return 2.0 ** -int(d.rng.integers(8, 16))
    if kind == 3:
        return -d.scale(2.0 ** -15, 2.0 ** -8)
    return d.scale(2.0 ** -15, 2.0 ** -8)


def lstm(kind: str):
    """A fully integer LSTM (int8 or int16 activations, int16 cell state): every gate
    scale, the hidden and the cell state scales drawn; three invokes (states carried)."""
    def make(d: Draw):
        from tests.test_op_unidirectional_sequence_lstm import Spec, lstm_model, rng_gen
        io = "INT8" if kind == "int8" else "INT16"
        n_input, n_state = 8, 8
        s_in = d.io_scale(io)
        s_h = d.scale(2.0 ** -8, 2.0 ** -5) if io == "INT8" else d.scale(2.0 ** -15, 2.0 ** -12)
        q = dict(s_in=s_in, zp_in=d.zp(io), s_h=s_h, zp_h=d.zp(io),
                 s_w_in=[d.scale(1e-4, 1e-1) for _ in range(4)], s_w_rec=[d.scale(1e-4, 1e-1) for _ in range(4)],
                 bias_range=[int(d.rng.integers(1, 1 << 15)) for _ in range(4)], s_cell=_cell_scale(d))
        spec = Spec(kind, 2, 4, n_input, n_state, time_major=bool(d.rng.integers(2)),
                    activation=4, cell_clip=0.0 if d.rng.integers(2) else float(np.float32(d.rng.uniform(0.1, 8))), q=q)
        gen = rng_gen(d.rng)
        model = lstm_model(spec, gen)
        return model, [[gen(spec.input_shape, kind)] for _ in range(3)]
    return make


def _rsqrt_inputs(io: str):
    """RSQRT's valid inputs (TFLM fails below the zero point): every one of them."""
    def inputs(d: Draw, zp: int) -> np.ndarray:
        if io == "INT8":
            return np.arange(zp, 128, dtype=np.int8).reshape(1, -1)
        return np.arange(0, 32768, dtype=np.int16).reshape(1, -1)
    return inputs


def _alpha(d: Draw) -> float:
    return float(np.float32(d.rng.uniform(0.01, 2.0)))


def _beta(d: Draw) -> float:
    return float(np.float32(d.rng.uniform(0.1, 2.0)))


CASES: Dict[str, Callable] = {
    "ADD int8 (all pairs)": binary("ADD"), "SUB int8 (all pairs)": binary("SUB"),
    "MUL int8 (all pairs)": binary("MUL"), "DIV int8 (all pairs)": binary("DIV"),
    "SQUARED_DIFFERENCE int8 (all pairs)": binary("SQUARED_DIFFERENCE"),
    "ADD int16": binary("ADD", "INT16"), "SUB int16": binary("SUB", "INT16"), "MUL int16": binary("MUL", "INT16"),
    "RELU int8": unary("RELU"), "RELU6 int8": unary("RELU6"),
    "LEAKY_RELU int8": unary("LEAKY_RELU", alpha=_alpha), "LEAKY_RELU int16": unary("LEAKY_RELU", "INT16", alpha=_alpha),
    "HARD_SWISH int8": unary("HARD_SWISH"), "ELU int8": unary("ELU"), "ABS int8": unary("ABS"),
    "QUANTIZE int8": unary("QUANTIZE"), "QUANTIZE int16": unary("QUANTIZE", "INT16"),
    "LOGISTIC int8": unary("LOGISTIC", out_q=(1 / 256, -128)), "TANH int8": unary("TANH", out_q=(1 / 128, 0)),
    "LOGISTIC int16": unary("LOGISTIC", "INT16", out_q=(1 / 32768, 0)),
    "TANH int16": unary("TANH", "INT16", out_q=(1 / 32768, 0)),
    "SOFTMAX int8": unary("SOFTMAX", out_q=(1 / 256, -128), beta=_beta),
    "FULLY_CONNECTED int8": fully_connected(), "FULLY_CONNECTED int8 per-channel": fully_connected(per_channel=True),
    "FULLY_CONNECTED int16": fully_connected("INT16"),
    "CONV_2D int8 per-channel": convolution("CONV_2D"), "CONV_2D int8 per-tensor": convolution("CONV_2D", per_channel=False),
    "CONV_2D int16": convolution("CONV_2D", "INT16"), "DEPTHWISE_CONV_2D int8": convolution("DEPTHWISE_CONV_2D"),
    "BATCH_MATMUL int8 (all pairs)": batch_matmul(), "BATCH_MATMUL int16": batch_matmul("INT16"),
    "SVDF int8 state": svdf("int8"), "SVDF int16 state": svdf("int16"),
    # element-wise
    "SQUARED_DIFFERENCE int16": binary("SQUARED_DIFFERENCE", "INT16"),
    **{f"{op} int8 + activation (all pairs)": binary(op, activation=True) for op in ("ADD", "SUB", "MUL", "DIV")},
    **{f"{op} int16 + activation": binary(op, "INT16", activation=True) for op in ("ADD", "SUB", "MUL")},
    "ADD_N int8 (all pairs)": binary("ADD_N", same_q=True, extra=1),
    **{f"{op} int8 (all pairs)": binary(op, out_io="BOOL")
       for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")},
    "PRELU int8 (all pairs)": prelu(), "PRELU int16": prelu("INT16"),
    "RELU int16": unary("RELU", "INT16"), "RELU6 int16": unary("RELU6", "INT16"),
    "ABS int16": unary("ABS", "INT16"),
    "RSQRT int8": unary("RSQRT", inputs=_rsqrt_inputs("INT8")),
    "RSQRT int16": unary("RSQRT", "INT16", inputs=_rsqrt_inputs("INT16")),
    "CUMSUM int8": cumsum(),
    # (re)quantization and dequantization
    **{f"QUANTIZE {a.lower()}->{b.lower()}": unary("QUANTIZE", a, out_io=b)
       for a, b in (("INT8", "UINT8"), ("INT8", "INT16"), ("INT8", "INT32"), ("UINT8", "INT8"),
                    ("INT16", "INT8"), ("INT16", "INT32"), ("INT32", "INT8"), ("INT32", "INT16"),
                    ("FLOAT32", "INT8"), ("FLOAT32", "INT16"))},
    **{f"DEQUANTIZE {a.lower()}": unary("DEQUANTIZE", a, out_io="FLOAT32", out_q="none")
       for a in ("INT8", "INT16", "UINT8")},
    "EMBEDDING_LOOKUP int8->float32": embedding_lookup(),
    # softmax family
    "SOFTMAX int16": unary("SOFTMAX", "INT16", out_q=(1 / 32768, 0), beta=_beta),
    "SOFTMAX int8->int16": unary("SOFTMAX", out_io="INT16", out_q=(1 / 65536, -32768), beta=_beta),
    "LOG_SOFTMAX int8": unary("LOG_SOFTMAX", out_q=(16 / 256, 127)),
    # reductions and pooling
    **{f"{op} {io.lower()}": reduce(op, io) for op in ("MEAN", "SUM") for io in ("INT8", "INT16")},
    **{f"{op} {io.lower()}": pooling(op, io) for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D")
       for io in ("INT8", "INT16")},
    # convolutions and recurrent layers
    "DEPTHWISE_CONV_2D int16": convolution("DEPTHWISE_CONV_2D", "INT16"),
    "TRANSPOSE_CONV int8 per-channel": convolution("TRANSPOSE_CONV"),
    "TRANSPOSE_CONV int8 per-tensor": convolution("TRANSPOSE_CONV", per_channel=False),
    "TRANSPOSE_CONV int16": convolution("TRANSPOSE_CONV", "INT16"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM int8": lstm("int8"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM int16": lstm("int16"),
}


def sweep(oracle, name: str, sets: int, seed0: int = 0, draw=Draw) -> Tuple[int, int, int, List[str]]:
    """(scale sets compared, both rejected, output values compared, differences);
    ``draw``: :class:`Draw` (usual scales) or :class:`ExtremeDraw`. "Rejected" also counts
    the sets on which TFLM computes with memory it never initialised (a pooling
    activation bound its prepare failed to set) and ours refuses saying so."""
    compared = rejected = values = 0
    problems: List[str] = []
    for k in range(sets):
        seed = seed0 * 100003 + k * 7919 + sum(map(ord, name))
        with np.errstate(over="ignore"):   # float32 scales of extreme products: inf, as stored
            model, runs = CASES[name](draw(seed))
        theirs = oracle.run(model, runs[0], runs=runs)
        try:
            ours, _, _ = run_ours(model, None, runs=runs, recording=False)
            our_error = None
        except MicroRuntimeError as e:      # compared with TFLM's acceptance below
            ours, our_error = None, e
        except Exception as e:  # noqa: BLE001 - a raw error is a difference of its own
            ours, our_error = None, e
            if len(problems) < 3:
                problems.append(f"seed {seed}: raw {type(e).__name__}: {e}")
        if not theirs.ok or our_error is not None:
            undefined = isinstance(our_error, MicroRuntimeError) and "uninitialised" in str(our_error)
            if theirs.ok != (our_error is None) and not undefined and len(problems) < 3:
                problems.append(f"seed {seed}: TFLM ok={theirs.ok} ({theirs.error}), ours {our_error!r}")
            rejected += 1
            continue
        compared += 1
        for a, b in zip(ours, theirs.invokes[-1]):
            values += np.asarray(a).size
            same = np.asarray(a).dtype == np.asarray(b).dtype and np.asarray(a).tobytes() == np.asarray(b).tobytes()
            if not same and len(problems) < 3:
                diff = np.nonzero(np.asarray(a).ravel() != np.asarray(b).ravel())[0]
                problems.append(f"seed {seed}: {diff.size} values differ, first {diff[0]}: "
                                f"ours {np.asarray(a).ravel()[diff[0]]}, TFLM {np.asarray(b).ravel()[diff[0]]}")
    return compared, rejected, values, problems


@pytest.mark.parametrize("name", sorted(CASES))
def test_scale_sweep_matches_tflm(oracle, name):
    compared, rejected, values, problems = sweep(oracle, name, SCALE_SETS)
    assert not problems, f"{name}: " + "; ".join(problems)
    assert compared >= SCALE_SETS // 2, f"{name}: only {compared} of {SCALE_SETS} scale sets ran"


EXTREME_SETS = int(os.environ.get("MICRO_RUNTIME_EXTREME_SCALE_SETS", "2"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_extreme_scales_match_tflm_or_both_refuse(oracle, name):
    """Scales from 1e-45 (denormal) to 3.4e38 (:class:`ExtremeDraw`): multipliers far
    below 2^-31 (flushed to zero by QuantizeMultiplier), far above 2^31 (left shifts of
    32 and more, as the CPU evaluates them), infinite ones: outputs identical to TFLM's,
    or both refuse. benchmarks/scale_sweep.py --extremes runs many sets per op."""
    compared, rejected, values, problems = sweep(oracle, name, EXTREME_SETS, draw=ExtremeDraw)
    assert not problems, f"{name}: " + "; ".join(problems)
