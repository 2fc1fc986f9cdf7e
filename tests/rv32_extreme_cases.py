"""Single-op models at extreme quantization scales, small enough for the QEMU-run RV32
builds (tests/record_rv32_extremes.py records them; tests/test_rv32_extremes.py checks the
target profiles against the records).

Scales come from tests/test_scale_sweep.py's :class:`ExtremeDraw` (1e-45 .. 3.4e38) or,
for one case in three, :class:`SpecialDraw`, which also gives what a model can carry but
no converter writes: nan, +-inf, zero and negative scales. The models are the sweep's
shapes cut down to a few hundred values each: unary int8 ops see all 256 inputs, unary
int16 ops 256 values spread over the int16 range, binary ops 256 random pairs.

``generate(op, count, seed)`` yields (name, model bytes, [input arrays]).
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Tuple

import numpy as np

from tests.helpers import TensorDef, single_op_model
from tests.test_scale_sweep import Draw, ExtremeDraw, unary


class SpecialDraw(ExtremeDraw):
    """:class:`ExtremeDraw`, but one scale in three is nan, +inf, -inf, 0, or a negative
    one (-1e-3, -1.0, -3.4e38, the negated smallest denormal)."""

    SPECIALS = (float("nan"), float("inf"), float("-inf"), 0.0, -1e-3, -1.0, -3.4e38, -1.4e-45)

    def scale(self, lo: float, hi: float) -> float:
        if self.rng.integers(3) == 0:
            return float(np.float32(self.SPECIALS[int(self.rng.integers(len(self.SPECIALS)))]))
        return super().scale(lo, hi)


SPREAD_INT16 = np.concatenate([np.arange(-128, 128) * 256, [32767, -32768 + 1]])[:256] \
    .astype(np.int16).reshape(1, 256)


def unary16(op: str, out_q=None, **options):
    def make(d: Draw):
        x = SPREAD_INT16
        qin = (d.io_scale("INT16"), 0)
        qout = out_q or (d.io_scale("INT16"), 0)
        opts = {k: (v(d) if callable(v) else v) for k, v in options.items()}
        return single_op_model(op, [TensorDef(x.shape, "INT16", qin)],
                               [TensorDef(x.shape, "INT16", qout)], **opts), [x]
    return make


def quantize_float():
    def make(d: Draw):
        x = np.concatenate([np.linspace(-300.0, 300.0, 250), [0.0, 1e-30, -1e-30, 3e38, -3e38, 0.5]]) \
            .astype(np.float32).reshape(1, 256)
        return single_op_model("QUANTIZE", [TensorDef(x.shape, "FLOAT32")],
                               [TensorDef(x.shape, "INT8", (d.io_scale("INT8"), d.zp("INT8")))]), [x]
    return make


def binary(op: str, io: str = "INT8"):
    def make(d: Draw):
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x1 = d.rng.integers(info.min, info.max + 1, (1, 256)).astype(info.dtype)
        x2 = d.rng.integers(info.min, info.max + 1, (1, 256)).astype(info.dtype)
        zp = (lambda: d.zp(io)) if io == "INT8" else (lambda: 0)
        q = [(d.io_scale(io), zp()) for _ in range(3)]
        return single_op_model(op, [TensorDef(x1.shape, io, q[0]), TensorDef(x2.shape, io, q[1])],
                               [TensorDef(x1.shape, io, q[2])]), [x1, x2]
    return make


def fully_connected(io: str = "INT8", per_channel: bool = False):
    def make(d: Draw):
        depth, units, batches = 16, 8, 8
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x = d.rng.integers(info.min, info.max + 1, (batches, depth)).astype(info.dtype)
        w = d.rng.integers(-127, 128, (units, depth)).astype(np.int8)
        s_in = d.io_scale(io)
        s_w = [d.scale(1e-3, 0.1) for _ in range(units)] if per_channel else d.scale(1e-3, 0.1)
        with np.errstate(all="ignore"):
            bias_scale = np.float64(s_in) * np.asarray(s_w, np.float64)
        bias_type = "INT32" if io == "INT8" else "INT64"
        bias = d.rng.integers(-20000, 20000, units).astype(np.int32 if io == "INT8" else np.int64)
        wq = (s_w, [0] * units, 0) if per_channel else (s_w, 0)
        bq = (list(bias_scale), [0] * units) if per_channel else ([float(bias_scale)], [0])
        zp = d.zp(io) if io == "INT8" else 0
        model = single_op_model("FULLY_CONNECTED", [
            TensorDef((batches, depth), io, quant=(s_in, zp)),
            TensorDef((units, depth), "INT8", data=w, quant=wq),
            TensorDef((units,), bias_type, data=bias, quant=bq)],
            [TensorDef((batches, units), io, quant=(d.scale(1e-2, 2.0), d.zp(io) if io == "INT8" else 0))])
        return model, [x]
    return make


def convolution(op: str, io: str = "INT8", per_channel: bool = True):
    def make(d: Draw):
        channels = 4
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        x = d.rng.integers(info.min, info.max + 1, (1, 6, 6, channels)).astype(info.dtype)
        s_in = d.io_scale(io)
        n = channels if per_channel else 1
        s_w = [d.scale(1e-3, 0.1) for _ in range(n)]
        if op == "CONV_2D":
            w = d.rng.integers(-127, 128, (channels, 3, 3, channels)).astype(np.int8)
            qdim, opts = 0, dict(padding=0, stride_w=1, stride_h=1)
        else:
            w = d.rng.integers(-127, 128, (1, 3, 3, channels)).astype(np.int8)
            qdim, opts = 3, dict(padding=0, stride_w=1, stride_h=1, depth_multiplier=1)
        with np.errstate(all="ignore"):
            bias_scale = np.broadcast_to(np.float64(s_in) * np.asarray(s_w, np.float64), (channels,))
        bias_type = "INT32" if io == "INT8" else "INT64"
        bias = d.rng.integers(-20000, 20000, channels).astype(np.int32 if io == "INT8" else np.int64)
        zp_in = d.zp(io) if io == "INT8" else 0
        zp_out = d.zp(io) if io == "INT8" else 0
        model = single_op_model(op, [
            TensorDef(x.shape, io, quant=(s_in, zp_in)),
            TensorDef(w.shape, "INT8", data=w, quant=(s_w, [0] * n, qdim)),
            TensorDef((channels,), bias_type, data=bias, quant=(list(bias_scale), [0] * channels))],
            [TensorDef((1, 6, 6, channels), io, quant=(d.scale(1e-2, 2.0), zp_out))], **opts)
        return model, [x]
    return make


def batch_matmul(io: str = "INT8"):
    def make(d: Draw):
        info = np.iinfo(np.int8 if io == "INT8" else np.int16)
        a = d.rng.integers(info.min, info.max + 1, (1, 16, 4)).astype(info.dtype)
        b = d.rng.integers(info.min, info.max + 1, (1, 4, 16)).astype(info.dtype)
        zp = (lambda: d.zp(io)) if io == "INT8" else (lambda: 0)
        qa, qb = (d.io_scale(io), zp()), (d.io_scale(io), zp())
        qo = (d.scale(1e-4, 1.0), zp())
        model = single_op_model("BATCH_MATMUL", [TensorDef(a.shape, io, qa), TensorDef(b.shape, io, qb)],
                                [TensorDef((1, 16, 16), io, qo)], adj_x=False, adj_y=False)
        return model, [a, b]
    return make


def svdf(state: str):
    def make(d: Draw):
        from tests.test_op_svdf import svdf_model
        kind = "int8_state16" if state == "int16" else "int8"
        q = (d.scale(1e-3, 0.5), d.zp("INT8"), d.scale(1e-3, 0.1),
             d.scale(1e-4, 0.1) if state == "int16" else d.scale(1e-3, 0.5), 0,
             d.scale(1e-4, 0.1), d.scale(1e-2, 1.0), d.zp("INT8"))
        with np.errstate(all="ignore"):
            model, gen = svdf_model(kind, 2, 16, 4, 2, 4, rng=d.rng, q=q)
        return model, [gen()]
    return make


def _alpha(d: Draw) -> float:
    return float(np.float32(d.rng.uniform(0.01, 2.0)))


def _beta(d: Draw) -> float:
    return float(np.float32(d.rng.uniform(0.1, 2.0)))


def _first_run(make):
    """The sweep's unary builders return (model, [[inputs]]): one run's inputs."""
    def wrapped(d: Draw):
        model, runs = make(d)
        return model, list(runs[0])
    return wrapped


#: op name -> builder (a :class:`Draw` -> (model bytes, input arrays))
CASES: Dict[str, Callable] = {
    "add_int8": binary("ADD"), "sub_int8": binary("SUB"), "mul_int8": binary("MUL"),
    "squared_difference_int8": binary("SQUARED_DIFFERENCE"),
    "div_int8": binary("DIV"),
    "add_int16": binary("ADD", "INT16"), "mul_int16": binary("MUL", "INT16"),
    "relu6_int8": _first_run(unary("RELU6")),
    "leaky_relu_int8": _first_run(unary("LEAKY_RELU", alpha=_alpha)),
    "leaky_relu_int16": unary16("LEAKY_RELU", alpha=_alpha),
    "hard_swish_int8": _first_run(unary("HARD_SWISH")),
    "elu_int8": _first_run(unary("ELU")), "abs_int8": _first_run(unary("ABS")),
    "quantize_int8": _first_run(unary("QUANTIZE")), "quantize_int16": unary16("QUANTIZE"),
    "quantize_float": quantize_float(),
    "logistic_int8": _first_run(unary("LOGISTIC", out_q=(1 / 256, -128))),
    "tanh_int8": _first_run(unary("TANH", out_q=(1 / 128, 0))),
    "logistic_int16": unary16("LOGISTIC", out_q=(1 / 32768, 0)),
    "tanh_int16": unary16("TANH", out_q=(1 / 32768, 0)),
    "softmax_int8": _first_run(unary("SOFTMAX", out_q=(1 / 256, -128), beta=_beta)),
    "fully_connected_int8": fully_connected(),
    "fully_connected_int8_per_channel": fully_connected(per_channel=True),
    "fully_connected_int16": fully_connected("INT16"),
    "conv_2d_int8_per_channel": convolution("CONV_2D"),
    "conv_2d_int8_per_tensor": convolution("CONV_2D", per_channel=False),
    "conv_2d_int16": convolution("CONV_2D", "INT16"),
    "depthwise_conv_2d_int8": convolution("DEPTHWISE_CONV_2D"),
    "batch_matmul_int8": batch_matmul(), "batch_matmul_int16": batch_matmul("INT16"),
    "svdf_int8": svdf("int8"), "svdf_int16_state": svdf("int16"),
}


def generate(op: str, count: int, seed: int) -> Iterator[Tuple[str, bytes, List[np.ndarray]]]:
    """``count`` cases of ``op`` (a key of :data:`CASES`): every third with
    :class:`SpecialDraw`, the others with :class:`ExtremeDraw`; names ``<op>_<k>``."""
    for k in range(count):
        s = seed * 1000003 + k * 7919 + sum(map(ord, op))
        draw = SpecialDraw(s) if k % 3 == 2 else ExtremeDraw(s)
        model, inputs = CASES[op](draw)
        yield f"{op}_{k:02d}", model, inputs
