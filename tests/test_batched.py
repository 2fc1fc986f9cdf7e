"""Batched evaluation (micro_runtime.evaluate): every sample's outputs equal separate
invokes of the single-sample interpreter bit for bit -- on the zoo models, on stateful
models (independent streams from the reset state, and one stream with ``stream=True``),
on control flow and resource variables, and on random graphs mixing operators that run
on sample blocks with operators that must run sample by sample."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from hypothesis import event, given, settings, strategies as st

from kernels.base import Kernel
from micro_runtime import (InputError, MicroInterpreter, OpResolver, default_op_resolver, load_model)
from micro_runtime import evaluate as _evaluate
from micro_runtime.api import count_resource_variables
from micro_runtime.batched import Evaluator as _Evaluator
from micro_runtime.tools.model_writer import ModelBuilder
from tests.conftest import EXAMPLES
from tests.control_flow_helpers import if_model, while_model
from tests.helpers import DATA, model_bytes
from tests.test_op_resource_variables import accumulator_model
from tests.test_op_svdf import svdf_case
from tests.test_op_unidirectional_sequence_lstm import lstm_case

ZOO = sorted(os.path.basename(p)[:-7] for p in glob.glob(os.path.join(DATA, "*.tflite")))
#: zoo models whose single invoke takes milliseconds: fewer samples per example
LARGE = {"vww_96_int8", "person_detect", "pretrainedResnet_quant", "kws_ref_model"}


#: the target of these tests' reference runs (per_sample): TFLM's reference kernels
TARGET = "host64"


def Evaluator(*args, target=TARGET, **kwargs):
    return _Evaluator(*args, target=target, **kwargs)


def evaluate(*args, target=TARGET, **kwargs):
    return _evaluate(*args, target=target, **kwargs)


def random_samples(rng, specs, count):
    """``count`` samples per input: full-range integers with extra edge values, floats."""
    out = []
    for spec in specs:
        shape = (count,) + tuple(spec.shape)
        if spec.dtype.kind == "f":
            x = rng.standard_normal(shape).astype(spec.dtype) * 4
        elif spec.dtype == np.bool_:
            x = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            info = np.iinfo(spec.dtype)
            x = rng.integers(info.min, info.max, shape, endpoint=True).astype(spec.dtype)
            edges = np.array([info.min, info.max, 0, -1 if info.min < 0 else 1], dtype=spec.dtype)
            mask = rng.random(shape) < 0.05
            x[mask] = rng.choice(edges, int(mask.sum()))
        out.append(x)
    return out


def per_sample(model, inputs, op_resolver=None, stream=False, target="host64"):
    """The reference: one interpreter, reset() then invoke() per sample (no reset with
    ``stream``), outputs copied after each invoke."""
    it = MicroInterpreter(model, op_resolver, arena_size=1 << 22, target=target,
                          num_resource_variables=count_resource_variables(load_model(model)),
                          error_reporter=lambda m: None)
    it.allocate_tensors()
    count = inputs[0].shape[0]
    outs = [np.empty((count,) + it.output(k).shape, it.output(k).dtype) for k in range(it.outputs_size)]
    for i in range(count):
        if not stream:
            it.reset()
        for k, x in enumerate(inputs):
            it.set_input(np.array(x[i, ...]), k)
        it.invoke()
        for k, o in enumerate(outs):
            o[i] = it.output(k)
    return outs


def assert_same(batched, reference, context=""):
    assert len(batched) == len(reference), context
    for k, (a, b) in enumerate(zip(batched, reference)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{context} output {k}: {a.shape} vs {b.shape}"
        if a.tobytes() != b.tobytes():
            rows = [i for i in range(a.shape[0]) if a[i].tobytes() != b[i].tobytes()]
            raise AssertionError(f"{context} output {k}: samples {rows[:10]} differ "
                                 f"({len(rows)} of {a.shape[0]})")


def check(model, inputs, batch, op_resolver=None, stream=False, context=""):
    ev = Evaluator(model, batch=batch, op_resolver=op_resolver, stream=stream)
    assert_same(ev.run(inputs), per_sample(model, inputs, op_resolver, stream), context)
    return ev


# ------------------------------------------------------------------ zoo models
@pytest.mark.parametrize("name", ZOO)
@settings(max_examples=max(2, EXAMPLES // 8))
@given(data=st.data())
def test_zoo_models_batched_equal_per_sample_invokes(name, data):
    model = model_bytes(name)
    batch = data.draw(st.integers(2, 9), label="batch")
    count = data.draw(st.integers(1, 12 if name in LARGE else 40), label="samples")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    ev = Evaluator(model, batch=batch)
    inputs = random_samples(rng, ev.input_specs, count)
    assert_same(ev.run(inputs), per_sample(model, inputs), name)
    # every zoo operator runs on blocks, or once per block when it reads constants only
    # (DECODE of compressed weights): the speed of batched evaluation rests on it
    assert ev.sequential_reason is None
    assert all(p.mode in ("block", "once") for p in ev.plan), ev.describe()


@pytest.mark.parametrize("name", ["keyword_scrambled_8bit", "trained_lstm_int8"])
def test_zoo_stateful_stream_is_one_sequence(name):
    model = model_bytes(name)
    ev = Evaluator(model, batch=4, stream=True)
    assert ev.sequential_reason and "stream" in ev.sequential_reason
    inputs = random_samples(np.random.default_rng(3), ev.input_specs, 7)
    stream = ev.run(inputs)
    assert_same(stream, per_sample(model, inputs, stream=True), name)
    if name == "trained_lstm_int8":
        # the state carried along changes the later samples (the keyword model's
        # two-class softmax saturates on random inputs)
        independent = evaluate(model, inputs, batch=4)
        assert any(a[1:].tobytes() != b[1:].tobytes() for a, b in zip(stream, independent))


# ------------------------------------------------------------- stateful models
@pytest.mark.parametrize("op", ["SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"])
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_stateful_models(op, data):
    """SVDF and LSTM models of every type path, batch-major and time-major, batch 1 to
    4 (the block takes batch-1 batch-major ones; the others run sample by sample);
    independent streams, and sometimes one stream."""
    model, _, kind = data.draw(svdf_case() if op == "SVDF" else lstm_case())
    batch = data.draw(st.integers(2, 6))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    ev = Evaluator(model, batch=batch)
    event(f"{op} {kind} {ev.plan[0].mode}")
    inputs = random_samples(rng, ev.input_specs, data.draw(st.integers(1, 13)))
    assert_same(ev.run(inputs), per_sample(model, inputs), kind)
    if data.draw(st.booleans()):
        assert_same(evaluate(model, inputs, batch=batch, stream=True),
                    per_sample(model, inputs, stream=True), kind + " stream")


def _svdf_with_state_reader(kind: str, seed: int) -> bytes:
    """A batch-1 int8 SVDF model whose state tensor a MAXIMUM(state, state) after the
    SVDF also reads (a second model output: the state as the SVDF left it)."""
    from tests.test_op_svdf import svdf_model
    rng = np.random.default_rng(seed)
    q = (0.03, -20, 0.01, 0.02 if kind == "int8_state16" else 0.3,
         0 if kind == "int8_state16" else 11, 0.002 if kind == "int8_state16" else 0.02, 0.05, 3)
    model, _ = svdf_model(kind, 1, 10, 4, 2, 5, rng=rng, activation=1, q=q)
    mb = ModelBuilder.from_model(load_model(model))
    g = mb.subgraphs[0]
    state = g.operators[0].inputs[4]
    spec = g.tensors[state]
    copy = g.add_tensor("state_copy", spec.shape, spec.type, quantization=spec.quantization)
    g.add_operator("MAXIMUM", [state, state], [copy])
    g.outputs = list(g.outputs) + [copy]
    return mb.build()


@pytest.mark.parametrize("kind", ["int8_state8", "int8_state16"])
def test_svdf_state_read_by_another_operator(kind):
    """An SVDF whose state another operator also touches does not assume the reset value
    at its first invoke after a reset (it checks); on blocks, both outputs (the SVDF's
    and the state it leaves) equal per-sample invokes."""
    model = _svdf_with_state_reader(kind, 5)
    ev = Evaluator(model, batch=3)
    svdf = ev._block.subgraphs[0].nodes[0].user_data
    assert svdf.state_private is False
    assert [p.mode for p in ev.plan] == ["block", "block"]
    inputs = random_samples(np.random.default_rng(6), ev.input_specs, 8)
    assert_same(ev.run(inputs), per_sample(model, inputs), kind)


@pytest.mark.parametrize("kind", ["int8_state8", "int8_state16"])
def test_svdf_state_after_a_block_equals_per_sample_state(kind):
    """The first invoke after a reset takes the state as its reset value without a look
    when the SVDF alone touches it: the state it leaves in the block (each sample's row)
    equals the state a reset() + invoke() leaves in the single-sample interpreter."""
    from tests.test_op_svdf import svdf_model
    rng = np.random.default_rng(9)
    q = (0.03, -20, 0.01, 0.02 if kind == "int8_state16" else 0.3,
         0 if kind == "int8_state16" else 11, 0.002 if kind == "int8_state16" else 0.02, 0.05, 3)
    model, _ = svdf_model(kind, 1, 10, 4, 2, 5, rng=rng, activation=1, q=q)
    ev = Evaluator(model, batch=4)
    node = ev._block.subgraphs[0].nodes[0]
    assert node.user_data.state_private is True
    inputs = random_samples(np.random.default_rng(10), ev.input_specs, 4)
    outputs = ev.run(inputs)
    block_state = np.array(node.input_arrays[4]).reshape(4, -1)
    single = MicroInterpreter(model, arena_size=1 << 20, target=TARGET)
    single.allocate_tensors()
    snode = single.subgraphs[0].nodes[0]
    for i in range(4):
        single.reset()
        single.set_input(inputs[0][i], 0)
        single.invoke()
        assert np.array(snode.input_arrays[4]).reshape(-1).tobytes() == block_state[i].tobytes()
        assert single.output(0).tobytes() == outputs[0][i].tobytes()


def test_resource_variables_run_whole_model_per_sample():
    model = accumulator_model((2, 3))
    ev = Evaluator(model, batch=4)
    assert ev.sequential_reason and "resource variables" in ev.sequential_reason
    inputs = random_samples(np.random.default_rng(0), ev.input_specs, 6)
    assert_same(ev.run(inputs), per_sample(model, inputs))
    assert_same(evaluate(model, inputs, stream=True), per_sample(model, inputs, stream=True))


@pytest.mark.parametrize("kind", ["if", "while"])
def test_control_flow_runs_sample_by_sample(kind):
    rng = np.random.default_rng(5)
    if kind == "if":
        model = if_model(shape=(1, 3), pre_op="ADD")
        ev = Evaluator(model, batch=3)
        inputs = random_samples(rng, ev.input_specs, 8)
    else:
        model = while_model(k=3)
        ev = Evaluator(model, batch=3)
        inputs = random_samples(rng, ev.input_specs, 8)
        inputs[0] = rng.integers(0, 5, (8,)).astype(np.int32)
    modes = {p.op: p.mode for p in ev.plan}
    assert modes[kind.upper()] == "per-sample"
    assert_same(ev.run(inputs), per_sample(model, inputs), kind)


# ---------------------------------------------------------------- random graphs
class _Negate(Kernel):
    """A custom op that declares nothing about sample blocks: runs sample by sample."""

    custom_name = "TestNegate"

    def prepare(self, ctx, node):
        pass

    def invoke(self, ctx, node):
        np.negative(node.input_arrays[0], out=node.output_arrays[0])


def _resolver() -> OpResolver:
    resolver = default_op_resolver()
    resolver.add(_Negate())
    return resolver


START_SHAPES = [(1, 4, 4, 3), (1, 12), (6,), (2, 5), (1, 2, 6), (1,), (3, 1, 4)]


@st.composite
def random_graphs(draw):
    """(model bytes, input shapes): a random DAG of float32 operators over tensors with
    a unit batch axis, without one, and scalars; some operators run on blocks, some
    (mixing the batch axis, custom ops, ...) must run sample by sample."""
    b = ModelBuilder()
    g = b.subgraph()
    pool = []      # (tensor index, shape)

    def tensor(shape, data=None, dtype="FLOAT32"):
        return g.add_tensor(f"t{len(g.tensors)}", shape, dtype, data=data)

    inputs = []
    for k in range(draw(st.integers(1, 2))):
        shape = draw(st.sampled_from(START_SHAPES))
        t = tensor(shape)
        inputs.append(t)
        pool.append((t, shape))
    kinds = ["RELU", "TANH", "ADD", "MUL", "RESHAPE", "SOFTMAX", "CONCATENATION", "PAD",
             "TRANSPOSE", "MEAN", "SUM", "STRIDED_SLICE", "FULLY_CONNECTED", "CONV_2D",
             "AVERAGE_POOL_2D", "GATHER", "TestNegate", "SQUEEZE", "EXPAND_DIMS"]
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(kinds))
        a, shape = draw(st.sampled_from(pool))
        rank = len(shape)
        out_shape, ins, opts = None, None, {}
        if kind in ("RELU", "TANH", "TestNegate"):
            out_shape, ins = shape, [a]
        elif kind in ("ADD", "MUL"):
            partners = [(t, s) for t, s in pool if _broadcasts(s, shape)]
            choice = draw(st.sampled_from(["const", "pool"])) if partners else "const"
            if choice == "pool":
                c, cs = draw(st.sampled_from(partners))
            else:
                cs = tuple(draw(st.sampled_from([shape, shape[-1:], (), tuple(1 for _ in shape[:-1]) + shape[-1:]])))
                c = tensor(cs, data=np.linspace(-1.5, 1.5, int(np.prod(cs))).astype(np.float32).reshape(cs))
            out_shape = tuple(np.broadcast_shapes(shape, cs))
            ins, opts = [a, c], {"fused_activation_function": 0}
        elif kind == "RESHAPE":
            n = int(np.prod(shape))
            out_shape = draw(st.sampled_from(_factorings(n)))
            ins = [a, tensor((len(out_shape),), data=np.asarray(out_shape, np.int32), dtype="INT32")]
        elif kind == "SOFTMAX" and rank >= 1:
            out_shape, ins, opts = shape, [a], {"beta": 1.0}
        elif kind == "CONCATENATION" and rank >= 1:
            axis = draw(st.integers(-rank, rank - 1))
            same = [(t, s) for t, s in pool if len(s) == rank and all(
                x == y for i, (x, y) in enumerate(zip(s, shape)) if i != axis % rank)]
            c, cs = draw(st.sampled_from(same))
            out_shape = tuple(d + (cs[i] if i == axis % rank else 0) for i, d in enumerate(shape))
            ins, opts = [a, c], {"axis": axis, "fused_activation_function": 0}
        elif kind == "PAD" and 1 <= rank <= 4:
            pads = np.asarray([[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in shape], np.int32)
            out_shape = tuple(int(d + p.sum()) for d, p in zip(shape, pads))
            ins = [a, tensor((rank, 2), data=pads, dtype="INT32")]
        elif kind == "TRANSPOSE" and rank >= 1:
            perm = draw(st.permutations(range(rank)))
            out_shape = tuple(shape[p] for p in perm)
            ins = [a, tensor((rank,), data=np.asarray(perm, np.int32), dtype="INT32")]
        elif kind in ("MEAN", "SUM") and rank >= 1:
            axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
            keep = draw(st.booleans())
            out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else \
                tuple(d for i, d in enumerate(shape) if i not in axes)
            ins, opts = [a, tensor((len(axes),), data=np.asarray(axes, np.int32), dtype="INT32")], \
                {"keep_dims": keep}
        elif kind == "STRIDED_SLICE" and 1 <= rank <= 4:
            begin = [draw(st.integers(0, d - 1)) for d in shape]
            end = [draw(st.integers(bb + 1, d)) for bb, d in zip(begin, shape)]
            out_shape = tuple(e - bb for bb, e in zip(begin, end))
            ins = [a] + [tensor((rank,), data=np.asarray(v, np.int32), dtype="INT32")
                         for v in (begin, end, [1] * rank)]
            opts = {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0}
        elif kind == "FULLY_CONNECTED" and rank >= 1:
            depth, units = shape[-1], draw(st.integers(1, 4))
            w = tensor((units, depth), data=np.linspace(-1, 1, units * depth).astype(np.float32).reshape(units, depth))
            bias = tensor((units,), data=np.linspace(-0.5, 0.5, units).astype(np.float32))
            out_shape = (int(np.prod(shape[:-1])), units)
            ins, opts = [a, w, bias], {"fused_activation_function": 0, "keep_num_dims": False}
        elif kind == "CONV_2D" and rank == 4:
            cout = draw(st.integers(1, 3))
            k = (cout, 2, 2, shape[3])
            w = tensor(k, data=np.linspace(-1, 1, int(np.prod(k))).astype(np.float32).reshape(k))
            out_shape = (shape[0], shape[1] - 1, shape[2] - 1, cout)
            if min(out_shape[1:3]) < 1:
                continue
            ins = [a, w, tensor((cout,), data=np.zeros(cout, np.float32))]
            opts = {"padding": 1, "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1,
                    "dilation_h_factor": 1, "fused_activation_function": 0}
        elif kind == "AVERAGE_POOL_2D" and rank == 4:
            out_shape = (shape[0], shape[1] // 2, shape[2] // 2, shape[3])
            if min(out_shape[1:3]) < 1:
                continue
            ins = [a]
            opts = {"padding": 1, "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2,
                    "fused_activation_function": 0}
        elif kind == "GATHER" and rank >= 1:
            axis = draw(st.integers(0, rank - 1))
            idx = np.asarray(draw(st.lists(st.integers(0, shape[axis] - 1), min_size=1, max_size=3)), np.int32)
            out_shape = shape[:axis] + idx.shape + shape[axis + 1:]
            ins, opts = [a, tensor(idx.shape, data=idx, dtype="INT32")], {"axis": axis, "batch_dims": 0}
        elif kind == "SQUEEZE" and 1 in shape:
            out_shape = tuple(d for d in shape if d != 1)
            ins, opts = [a], {"squeeze_dims": ()}
        elif kind == "EXPAND_DIMS" and rank < 4:
            axis = draw(st.integers(0, rank))
            out_shape = shape[:axis] + (1,) + shape[axis:]
            ins = [a, tensor((1,), data=np.asarray([axis], np.int32), dtype="INT32")]
        else:
            continue
        out = tensor(out_shape)
        g.add_operator(kind, ins, [out], **opts)
        pool.append((out, tuple(out_shape)))
    produced = [t for t, _ in pool if t not in inputs]
    if not produced:
        out = tensor(pool[0][1])
        g.add_operator("RELU", [pool[0][0]], [out])
        produced = [out]
    g.inputs = inputs
    g.outputs = list(dict.fromkeys([produced[-1]] + draw(st.lists(st.sampled_from(produced), max_size=2))))
    return b.build()


def _broadcasts(s1, s2) -> bool:
    try:
        np.broadcast_shapes(s1, s2)
        return True
    except ValueError:
        return False


def _factorings(n: int):
    """A few shapes with ``n`` elements, with and without a unit batch axis."""
    shapes = {(n,), (1, n)}
    for d in range(2, n):
        if n % d == 0:
            shapes.add((d, n // d))
            shapes.add((1, d, n // d))
    return sorted(shapes)[:8]


@settings(max_examples=EXAMPLES * 3)
@given(model=random_graphs(), batch=st.integers(2, 7), count=st.integers(1, 11),
       seed=st.integers(0, 2 ** 32 - 1))
def test_random_graphs_batched_equal_per_sample_invokes(model, batch, count, seed):
    resolver = _resolver()
    ev = Evaluator(model, batch=batch, op_resolver=resolver)
    for p in ev.plan:
        event(f"{p.op} {p.mode}")
    inputs = random_samples(np.random.default_rng(seed), ev.input_specs, count)
    assert_same(ev.run(inputs), per_sample(model, inputs, resolver), str(ev.describe()))


# ---------------------------------------------------------------- the mechanism
def _chain(op_a, shape_a, op_b=None, const=None, **opts):
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", shape_a, "FLOAT32")
    ins = [x]
    if const is not None:
        ins.append(g.add_tensor("c", const.shape, "INT32", data=const))
    y_shape = opts.pop("out_shape")
    y = g.add_tensor("y", y_shape, "FLOAT32")
    g.add_operator(op_a, ins, [y], **opts)
    g.inputs, g.outputs = [x], [y]
    return b.build()


def test_ops_mixing_the_batch_axis_run_per_sample():
    """A MEAN over the unit batch axis, a TRANSPOSE moving it, a custom op: per-sample;
    a MEAN over the other axes: on blocks."""
    mean0 = _chain("MEAN", (1, 6), const=np.array([0], np.int32), out_shape=(6,), keep_dims=False)
    mean1 = _chain("MEAN", (1, 6), const=np.array([1], np.int32), out_shape=(1,), keep_dims=False)
    perm = _chain("TRANSPOSE", (1, 2, 3), const=np.array([1, 0, 2], np.int32), out_shape=(2, 1, 3))
    rng = np.random.default_rng(0)
    for model, mode in ((mean0, "per-sample"), (mean1, "block"), (perm, "per-sample")):
        ev = check(model, random_samples(rng, Evaluator(model, batch=2).input_specs, 5), 3)
        assert ev.plan[0].mode == mode, ev.describe()


def test_constant_subgraph_runs_once_per_block():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "FLOAT32")
    c1 = g.add_tensor("c1", (1, 4), "FLOAT32", data=np.arange(4, dtype=np.float32).reshape(1, 4))
    c2 = g.add_tensor("c2", (1, 4), "FLOAT32")
    y = g.add_tensor("y", (1, 4), "FLOAT32")
    g.add_operator("RELU", [c1], [c2])
    g.add_operator("ADD", [x, c2], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y, c2]
    model = b.build()
    ev = check(model, random_samples(np.random.default_rng(1), [Evaluator(model).input_specs[0]], 9), 4)
    assert [p.mode for p in ev.plan] == ["once", "block"]


def test_inputs_are_checked():
    model = model_bytes("hello_world_int8")
    with pytest.raises(InputError, match="dtype"):
        evaluate(model, np.zeros((3, 1), np.float32))
    with pytest.raises(InputError, match="shape"):
        evaluate(model, np.zeros((3, 2), np.int8))
    with pytest.raises(InputError, match="inputs"):
        evaluate(model, [np.zeros((3, 1), np.int8)] * 2)
    with pytest.raises(InputError, match="numpy array"):
        evaluate(model, [[1, 2]])
    with pytest.raises(InputError, match="batch"):
        evaluate(model, np.zeros((3, 1), np.int8), batch=0)
    add = model_bytes("simple_add_model")
    with pytest.raises(InputError, match="samples"):
        evaluate(add, [np.zeros((3, 128, 128, 1), np.int8), np.zeros((2, 128, 128, 1), np.int8)])


def test_unit_batch_axis_may_be_left_out_and_empty_input():
    model = model_bytes("hello_world_int8")
    x = np.arange(-128, 128, dtype=np.int8)
    with_axis = evaluate(model, x.reshape(256, 1, 1), batch=16)
    without = evaluate(model, x.reshape(256, 1), batch=16)
    assert_same(with_axis, without)
    assert with_axis[0].shape == (256, 1, 1)
    empty = evaluate(model, np.zeros((0, 1), np.int8))
    assert empty[0].shape == (0, 1, 1)


def test_progress_and_partial_last_block():
    model = model_bytes("micro_speech_quantized")
    ev = Evaluator(model, batch=8)
    calls = []
    inputs = random_samples(np.random.default_rng(2), ev.input_specs, 21)
    out = ev.run(inputs, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(8, 21), (16, 21), (21, 21)]
    assert_same(out, per_sample(model, inputs))


def test_mcu32_target():
    model = model_bytes("kws_ref_model")
    ev = Evaluator(model, batch=3, target="mcu32")
    inputs = random_samples(np.random.default_rng(4), ev.input_specs, 4)
    assert_same(ev.run(inputs), per_sample(model, inputs, target="mcu32"))


class _RefusesBlocks(Kernel):
    """Declares sample rows but refuses the block shapes in prepare: the evaluator must
    fall back to running it sample by sample."""

    custom_name = "TestRefusesBlocks"

    def sample_rows(self, block):
        return True

    def prepare(self, ctx, node):
        if ctx.block_samples:
            raise ctx.error("no blocks here")

    def invoke(self, ctx, node):
        np.multiply(node.input_arrays[0], 2, out=node.output_arrays[0])


def test_kernel_refusing_block_shapes_runs_per_sample():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 5), "FLOAT32")
    y = g.add_tensor("y", (1, 5), "FLOAT32")
    z = g.add_tensor("z", (1, 5), "FLOAT32")
    g.add_operator("TestRefusesBlocks", [x], [y])
    g.add_operator("RELU", [y], [z])
    g.inputs, g.outputs = [x], [z]
    model = b.build()
    resolver = default_op_resolver().add(_RefusesBlocks())
    ev = check(model, random_samples(np.random.default_rng(0), Evaluator(model, op_resolver=resolver).input_specs, 7),
               3, op_resolver=resolver)
    assert ev.plan[0].mode == "per-sample" and "refused" in ev.plan[0].reason
    assert ev.plan[1].mode == "block"


def test_per_sample_operator_reads_a_once_per_block_input():
    """A custom op (run sample by sample) adding a tensor computed from constants once
    per block: the single-sample kernel must see that tensor too."""
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "FLOAT32")
    c = g.add_tensor("c", (1, 4), "FLOAT32", data=np.array([[1, -2, 3, -4]], np.float32))
    rc = g.add_tensor("rc", (1, 4), "FLOAT32")
    nx = g.add_tensor("nx", (1, 4), "FLOAT32")
    y = g.add_tensor("y", (1, 4), "FLOAT32")
    z = g.add_tensor("z", (1, 4), "FLOAT32")
    g.add_operator("RELU", [c], [rc])
    g.add_operator("TestNegate", [x], [nx])
    g.add_operator("TestAddPerSample", [nx, rc], [y])
    g.add_operator("TANH", [y], [z])
    g.inputs, g.outputs = [x], [z]
    model = b.build()

    class _Add(Kernel):
        custom_name = "TestAddPerSample"

        def prepare(self, ctx, node):
            pass

        def invoke(self, ctx, node):
            np.add(node.input_arrays[0], node.input_arrays[1], out=node.output_arrays[0])

    resolver = _resolver().add(_Add())
    ev = check(model, random_samples(np.random.default_rng(3), Evaluator(model, op_resolver=resolver).input_specs, 6),
               4, op_resolver=resolver)
    assert [p.mode for p in ev.plan] == ["once", "per-sample", "per-sample", "block"]


@pytest.mark.parametrize("cycles", [1, 2, 3])
@pytest.mark.parametrize("stream", [False, True])
def test_operator_ending_runs_early(cycles, stream):
    """CIRCULAR_BUFFER ends a run early (kTfLiteAbort) between its periods: the ADD after
    it must then not run for that sample; the evaluation falls back to whole samples."""
    from tests.test_op_circular_buffer import streaming_model
    model = streaming_model(3, 1, 4, cycles_max=cycles, tail=True)
    ev = Evaluator(model, batch=4, stream=stream)
    inputs = random_samples(np.random.default_rng(cycles), ev.input_specs, 9)
    assert_same(ev.run(inputs), per_sample(model, inputs, stream=stream), f"cycles {cycles}")
    if cycles > 1 and not stream:
        assert ev.sequential_reason and "early" in ev.sequential_reason


@pytest.mark.parametrize("name", ["trained_lstm_int8", "micro_speech_quantized", "kws_ref_model"])
@pytest.mark.parametrize("stream", [False, True])
def test_cmsis_nn_target_batched_equal_per_sample_invokes(name, stream):
    """On a +cmsis-nn target the CMSIS-NN kernels run (LSTM arithmetic differs from the
    reference); a variant that does not declare sample blocks itself runs sample by sample."""
    model = model_bytes(name)
    target = "cortex-m4+cmsis-nn"
    ev = Evaluator(model, batch=3, target=target, stream=stream)
    inputs = random_samples(np.random.default_rng(7), ev.input_specs, 5)
    assert_same(ev.run(inputs), per_sample(model, inputs, target=target, stream=stream), name)
