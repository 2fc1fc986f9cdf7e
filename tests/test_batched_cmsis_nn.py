"""Batched evaluation on the +cmsis-nn targets (micro_runtime.batched): every sample of a
block equals a single-sample invoke of MicroInterpreter on the same target, bit for bit,
with the CMSIS-NN kernel variants running once per block where they declare it
(kernels/cmsis_nn/*.py ``sample_rows``).

* the zoo models (minus the *_lut_metadata ones, which Cortex-M targets refuse) on
  DSP (M4, M7, M33), no-DSP (M0) and MVE (M55) cores, every operator on blocks;
* the stateful zoo models (SVDF, LSTM) as independent streams and as one stream;
* seeded single-op models of every CMSIS-NN variant (the generators of the CMSIS-NN
  kernel tests, tests/cmsis_nn_op_cases.py) on random targets and block sizes;
* declarations that must say no: shapes for which CMSIS-NN would take another path, or
  compute otherwise, in a block than for one sample.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import event, given, reject, settings, strategies as st

from micro_runtime import MicroRuntimeError
from micro_runtime.batched import Evaluator
from tests.cmsis_nn_group1_cases import _pack_int4
from tests.cmsis_nn_op_cases import BUILDERS
from tests.conftest import EXAMPLES
from tests.helpers import TensorDef, model_bytes, single_op_model
from tests.test_batched import ZOO, assert_same, per_sample, random_samples
from tests.strategies import arrays
from tests.test_op_svdf import quant_params, svdf_case, svdf_model
from tests.test_op_unidirectional_sequence_lstm import (TANH, Spec, integer_quantization,
                                                        lstm_case, lstm_model)

#: a DSP core (the CLI's default target), a core without DSP, an MVE core
TARGETS = ["cortex-m4+cmsis-nn", "cortex-m0+cmsis-nn", "cortex-m55+cmsis-nn"]
#: DSP cores of the same CMSIS-NN code paths as the M4: the zoo only
MORE_TARGETS = ["cortex-m7+cmsis-nn", "cortex-m33+cmsis-nn"]
CORTEX_M_ZOO = [name for name in ZOO if not name.endswith("_lut_metadata")]


def _seed(*parts) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def _check(model, target, batch, count, seed, stream=False):
    ev = Evaluator(model, target=target, batch=batch, stream=stream)
    inputs = random_samples(np.random.default_rng(seed), ev.input_specs, count)
    assert_same(ev.run(inputs), per_sample(model, inputs, target=target, stream=stream),
                f"{target} {ev.describe()}")
    return ev


# ------------------------------------------------------------------ zoo models
@pytest.mark.parametrize("target", TARGETS + MORE_TARGETS)
@pytest.mark.parametrize("name", CORTEX_M_ZOO)
def test_zoo_models_run_on_blocks(name, target):
    """Outputs equal per-sample invokes (a partial last block included) and no operator
    of a zoo model runs sample by sample."""
    ev = _check(model_bytes(name), target, batch=3, count=7, seed=_seed(name, target))
    assert ev.sequential_reason is None, ev.sequential_reason
    per_sample_ops = [p for p in ev.describe() if p["mode"] not in ("block", "once")]
    assert not per_sample_ops, per_sample_ops


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", ["keyword_scrambled_8bit", "trained_lstm_int8"])
def test_zoo_stateful_models(name, stream, target):
    """SVDF (activation state) and LSTM (state tensors CMSIS-NN neither reads nor
    writes) models: independent streams run on blocks, one state row per sample;
    ``stream`` runs one sequence, state carried from sample to sample."""
    ev = _check(model_bytes(name), target, batch=4, count=9, seed=_seed(name, stream, target),
                stream=stream)
    if stream:
        assert ev.sequential_reason and "stream" in ev.sequential_reason
    else:
        assert ev.sequential_reason is None
        stateful = {"SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"}
        modes = {p["mode"] for p in ev.describe() if p["op"] in stateful}
        assert modes == {"block"}, ev.describe()


# ------------------------------------------------------- single-op CMSIS-NN models
@pytest.mark.parametrize("op", sorted(BUILDERS))
@settings(max_examples=EXAMPLES * 2)
@given(index=st.integers(0, 47),
       seed=st.integers(0, 2 ** 32 - 1), target=st.sampled_from(TARGETS),
       batch=st.integers(2, 5), count=st.integers(1, 9))
def test_cmsis_nn_single_op_models(op, index, seed, target, batch, count):
    """Every CMSIS-NN variant's test models (their extreme cases too: int16 dot products
    past 512 columns, int4 weights, grouped and 1xN convolutions, conv-1x1 fully
    connected layers, saturating softmax rows, CMSIS-NN's max / min pointer walk ...)
    on full-range random samples: a block equals per-sample invokes, whether the
    operator runs on the block or sample by sample."""
    _, model, _ = BUILDERS[op](np.random.default_rng(seed), index)
    try:
        ev = Evaluator(model, target=target, batch=batch)
        inputs = random_samples(np.random.default_rng(seed + 1), ev.input_specs, count)
        reference = per_sample(model, inputs, target=target)
    except MicroRuntimeError:
        reject()      # a model the CMSIS-NN build refuses (checked by its own tests)
    event(f"{op}: {ev.describe()[0]['mode']}")
    assert_same(ev.run(inputs), reference, f"{op} {index} {target} {ev.describe()}")


@st.composite
def _one_row_svdf(draw):
    """An SVDF of batch 1 (the kind that runs on blocks): the reference tests' builder."""
    kind = draw(st.sampled_from(["float32", "int8_state16", "int8_state8"]))
    input_size, units = draw(st.integers(1, 24)), draw(st.integers(1, 8))
    rank, memory = draw(st.integers(1, 3)), draw(st.integers(1, 8))
    q, bias_range = (draw(quant_params(kind, input_size, memory, rank)) if kind != "float32"
                     else (None, 0))
    model, _ = svdf_model(kind, 1, input_size, units, rank, memory, draw=draw,
                          activation=draw(st.integers(0, 5)), q=q, bias_range=bias_range)
    return model, None, kind


@st.composite
def _one_row_lstm(draw):
    """A batch-major LSTM of batch 1 (the kind that runs on blocks): the reference
    tests' builder."""
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    n_input, n_state = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    q = draw(integer_quantization(kind, n_input, n_state)) if kind != "float32" else None
    spec = Spec(kind, 1, draw(st.integers(1, 6)), n_input, n_state, False,
                draw(st.just(TANH) | st.integers(0, 5)),
                0.0 if draw(st.booleans()) else float(np.float32(draw(st.floats(0.05, 20.0)))),
                kind == "int8" and draw(st.booleans()), q)
    return lstm_model(spec, lambda shape, dtype, lo=None, hi=None: arrays(draw, shape, dtype, lo, hi)), \
        None, kind


@pytest.mark.parametrize("op", ["SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"])
@settings(max_examples=EXAMPLES * 2)
@given(data=st.data())
def test_stateful_models(op, data):
    """SVDF and LSTM models of every type path (the reference kernels' test builders:
    batch 1 to 4, batch-major and time-major, or batch 1 batch-major, which runs on
    blocks) on +cmsis-nn targets: CMSIS-NN's state handling (SVDF's state without its
    zero point, the LSTM's zero start state) per block row; independent streams, and
    sometimes one stream."""
    one_row = data.draw(st.booleans())
    strategy = {"SVDF": (svdf_case, _one_row_svdf),
                "UNIDIRECTIONAL_SEQUENCE_LSTM": (lstm_case, _one_row_lstm)}[op][one_row]
    model, _, kind = data.draw(strategy())
    target = data.draw(st.sampled_from(TARGETS))
    batch = data.draw(st.integers(2, 6))
    count = data.draw(st.integers(1, 11))
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    try:
        ev = _check(model, target, batch, count, seed)
    except MicroRuntimeError:
        reject()      # e.g. non-constant LSTM weights, which TFLM's CMSIS-NN build refuses
    event(f"{op} {kind} {ev.plan[0].mode}")
    if one_row:
        assert ev.plan[0].mode == "block", ev.describe()
    if data.draw(st.booleans()):
        _check(model, target, batch, count, seed, stream=True)


# ---------------------------------------------- declarations that must say no
_Q8 = (0.05, 3)


def _fully_connected(x_shape, out_shape, depth, units, weight_zero_point, per_channel=False):
    w = np.arange(units * depth, dtype=np.int64).reshape(units, depth) % 23 - 11
    if per_channel:
        wq = (np.full(units, 0.02, np.float32), np.zeros(units, np.int64), 0)
    else:
        wq = (0.02, weight_zero_point)
    return single_op_model(
        "FULLY_CONNECTED",
        [TensorDef(x_shape, "INT8", quant=_Q8),
         TensorDef((units, depth), "INT8", quant=wq, data=w.astype(np.int8))],
        [TensorDef(out_shape, "INT8", quant=(0.4, -2))],
        fused_activation_function=0, keep_num_dims=len(out_shape) > 2)


def _depthwise_int4(channels):
    w = (np.arange(9 * channels) % 15 - 7).reshape(1, 3, 3, channels)
    return single_op_model(
        "DEPTHWISE_CONV_2D",
        [TensorDef((1, 5, 5, channels), "INT8", quant=_Q8),
         TensorDef((1, 3, 3, channels), "INT4", data=_pack_int4(w),
                   quant=(np.full(channels, 0.1, np.float32), np.zeros(channels, np.int64), 3)),
         TensorDef((channels,), "INT32", data=np.arange(channels, dtype=np.int32) * 50,
                   quant=(np.full(channels, 0.005, np.float32), np.zeros(channels, np.int64), 0))],
        [TensorDef((1, 5, 5, channels), "INT8", quant=(0.3, 1))],
        # SAME: border windows visit fewer taps, where the generic kernel's nibble walk
        # reads other weights than the fast kernel (odd channel counts)
        padding=0, stride_w=1, stride_h=1, depth_multiplier=1, dilation_w_factor=1,
        dilation_h_factor=1, fused_activation_function=0)


def _pad_int8(shape):
    pads = np.ones((len(shape), 2), np.int32)
    if shape[0] == 1:
        pads[0] = 0
    out = tuple(int(d + p.sum()) for d, p in zip(shape, pads))
    return single_op_model("PAD", [TensorDef(shape, "INT8", quant=_Q8),
                                   TensorDef((len(shape), 2), "INT32", data=pads)],
                           [TensorDef(out, "INT8", quant=_Q8)])


def _transpose_int8(shape, perm):
    out = tuple(shape[p] for p in perm)
    return single_op_model("TRANSPOSE", [TensorDef(shape, "INT8", quant=_Q8),
                                         TensorDef((len(perm),), "INT32",
                                                   data=np.asarray(perm, np.int32))],
                           [TensorDef(out, "INT8", quant=_Q8)])


def _maximum_int8(shape1, shape2, constant_second=True):
    second = TensorDef(shape2, "INT8", quant=_Q8,
                       data=(np.arange(int(np.prod(shape2))) % 7 - 3).astype(np.int8).reshape(shape2)
                       if constant_second else None)
    out = tuple(np.broadcast_shapes(shape1, shape2))
    return single_op_model("MAXIMUM", [TensorDef(shape1, "INT8", quant=_Q8), second],
                           [TensorDef(out, "INT8", quant=_Q8)])


def _transpose_conv_int8(in_shape, filter_hw, out_c, stride_hw):
    in_c = in_shape[3]
    (fh, fw), (sh, sw) = filter_hw, stride_hw
    out_shape = (in_shape[0], (in_shape[1] - 1) * sh + fh, (in_shape[2] - 1) * sw + fw, out_c)
    w = (np.arange(out_c * fh * fw * in_c) % 13 - 6).astype(np.int8).reshape(out_c, fh, fw, in_c)
    return single_op_model(
        "TRANSPOSE_CONV",
        [TensorDef((4,), "INT32", data=np.asarray(out_shape, np.int32)),
         TensorDef(w.shape, "INT8", data=w, quant=(0.05, 0)),
         TensorDef(in_shape, "INT8", quant=_Q8),
         TensorDef((out_c,), "INT32", data=np.arange(out_c, dtype=np.int32) * 40 - 30,
                   quant=(0.0025, 0))],
        [TensorDef(out_shape, "INT8", quant=(0.5, -1))],
        padding=1, stride_h=sh, stride_w=sw, fused_activation_function=0)


def _batch_matmul_int8(lhs_shape, rhs_shape):
    rhs = (np.arange(int(np.prod(rhs_shape))) % 11 - 5).astype(np.int8).reshape(rhs_shape)
    ext = max(len(lhs_shape), len(rhs_shape))
    a = (1,) * (ext - len(lhs_shape)) + tuple(lhs_shape)
    b = (1,) * (ext - len(rhs_shape)) + tuple(rhs_shape)
    out = tuple(np.broadcast_shapes(a[:-2], b[:-2])) + (a[-2], b[-1])
    return single_op_model("BATCH_MATMUL", [TensorDef(lhs_shape, "INT8", quant=_Q8),
                                            TensorDef(rhs_shape, "INT8", quant=(0.04, -2), data=rhs)],
                           [TensorDef(out, "INT8", quant=(0.3, 4))],
                           adj_x=False, adj_y=False, asymmetric_quantize_inputs=False)


DECLARATIONS = [
    # (what, model, mode of its operator in a block on every target)
    ("fc: unit batch axis, rank 2 both ways", _fully_connected((1, 8), (1, 4), 8, 4, 3), "block"),
    ("fc: rank-2 output becomes 3-D: TFLM's conv 1x1 path (weight zero point ignored, "
     "per-tensor scratch index check)",
     _fully_connected((2, 8), (2, 4), 8, 4, 3), "per-sample"),
    ("fc: rank-2 output becomes 3-D, depth not a multiple of 4: no conv 1x1",
     _fully_connected((2, 6), (2, 4), 6, 4, 3), "block"),
    ("fc: conv 1x1 per-channel in both",
     _fully_connected((1, 2, 8), (1, 2, 4), 8, 4, 0, per_channel=True), "block"),
    ("depthwise int4, even channels", _depthwise_int4(4), "block"),
    ("depthwise int4, odd channels: the block takes the generic kernel's nibble walk",
     _depthwise_int4(3), "per-sample"),
    ("pad int8 3-D gets a sample axis: 4-D", _pad_int8((2, 3, 4)), "block"),
    ("pad int8 4-D gets a sample axis: 5-D, beyond arm_pad_s8", _pad_int8((2, 2, 3, 4)),
     "per-sample"),
    ("pad int8 4-D, unit batch axis", _pad_int8((1, 2, 3, 4)), "block"),
    ("transpose int8 2-D [1, 0] becomes 3-D [0, 2, 1]", _transpose_int8((3, 4), (1, 0)), "block"),
    ("transpose int8 2-D identity: arm_transpose_s8 transposes it anyway",
     _transpose_int8((3, 4), (0, 1)), "per-sample"),
    ("transpose int8 (1, 3, 4, 2) identity: MVE swaps the last two axes of every sample",
     _transpose_int8((1, 3, 4, 2), (0, 1, 2, 3)), "block"),
    ("transpose int8 3-D identity gets a sample axis: [0, 1, 2, 3], which MVE swaps",
     _transpose_int8((2, 3, 4), (0, 1, 2)), "per-sample"),
    ("transpose int8 3-D [0, 2, 1] gets a sample axis: [0, 1, 3, 2] on every core",
     _transpose_int8((2, 3, 4), (0, 2, 1)), "block"),
    ("transpose int8 4-D gets a sample axis: 5-D", _transpose_int8((2, 3, 4, 2), (0, 2, 1, 3)),
     "per-sample"),
    ("transpose conv int8 ring fitting its buffer, every output row written",
     _transpose_conv_int8((1, 3, 3, 2), (3, 3), 2, (2, 2)), "block"),
    ("transpose conv int8 ring wider than its buffer (stride_w > filter_w, stride_h)",
     _transpose_conv_int8((1, 3, 3, 2), (2, 2), 2, (1, 3)), "per-sample"),
    ("transpose conv int8 reverse convolution (> 16 channels)",
     _transpose_conv_int8((1, 3, 3, 20), (3, 3), 2, (2, 2)), "block"),
    ("batch matmul int8 unit batch axis", _batch_matmul_int8((1, 2, 3, 4), (4, 5)), "block"),
    ("batch matmul int8 3-D lhs without a unit batch axis", _batch_matmul_int8((2, 3, 4), (4, 5)),
     "per-sample"),
    ("batch matmul int8 rank-2 lhs (1, 4): its row, not a batch", _batch_matmul_int8((1, 4), (4, 5)),
     "per-sample"),
    ("maximum int8, same shapes", _maximum_int8((1, 3, 4, 5), (1, 3, 4, 5), False), "block"),
    ("maximum int8, per-channel constant", _maximum_int8((1, 3, 4, 5), (5,)), "block"),
    ("maximum int8, one value per sample against a constant (3, 3): in a block the walk "
     "sees one value per row against wider rows", _maximum_int8((1, 1, 1), (3, 3)), "per-sample"),
    ("maximum int8, one value per sample against a constant (1, 1, 1, 3)",
     _maximum_int8((1, 1, 1, 1), (1, 1, 1, 3)), "block"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("what,model,mode", DECLARATIONS, ids=[d[0][:40] for d in DECLARATIONS])
def test_declarations(what, model, mode, target):
    """The operator runs on blocks exactly where the CMSIS-NN path is the same for a
    block as for one sample, and the block's outputs equal per-sample invokes."""
    ev = _check(model, target, batch=4, count=6, seed=_seed(what, target))
    assert ev.describe()[0]["mode"] == mode, (what, ev.describe())


@pytest.mark.parametrize("target", TARGETS)
def test_conv_1x1_fully_connected_per_tensor_runs_per_sample(target):
    """A per-tensor conv-1x1 fully connected layer checks that its scratch buffer's index
    is at least 4 (TFLM's debug check): the index differs in the block model (operators
    that run sample by sample request no scratch there), so it runs sample by sample.
    (Alone in a model its index is 0: TFLM aborts at invoke, so nothing is run here.)"""
    ev = Evaluator(_fully_connected((1, 2, 8), (1, 2, 4), 8, 4, 0), target=target, batch=4)
    assert ev.describe()[0]["mode"] == "per-sample"
