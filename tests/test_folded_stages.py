"""The folded output stages of kernels/internal/folded_stages.py (used by the int8 LSTM's
fast path) against the plain transcription of TFLM's MultiplyByQuantizedMultiplier in
tests/test_edge_requant.py (written independently of the code under test), on every
accumulator of contiguous ranges placed around the rounding boundaries -- not only random
values -- and the LSTM's fast path against its plain path (and TFLM, via the oracle tests of
tests/test_op_unidirectional_sequence_lstm.py, which run the fast path whenever it applies).

Case counts (2026-11-23): ProductRequant ~1.1 million products (multipliers 0, 2^30,
2^30 + 1, 2^31 - 1 and four others, right shifts 0..30, with and without an output offset
and clamp); FoldedFcStage ~3.5 million accumulators (each row sweeps the 65,536
accumulators x1 + 256 x2 + bias of its two int8 inputs, centred on a boundary); the LSTM's
offset tables on all 65,536 int16 sums plus the saturating ends."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kernels.internal.folded_stages import (FoldedFcStage, OutputTable, ProductRequant,
                                           SaturatingTableFc)
from micro_runtime.batched import Evaluator
from tests.strategies import arrays
from tests.test_batched import per_sample, random_samples
from tests.test_op_svdf import quant_params, svdf_model
from tests.test_edge_requant import boundary_accumulators, ref_mbqm, ref_wrap32
from tests.test_op_unidirectional_sequence_lstm import (TANH, Spec, input_generator,
                                                        integer_quantization, lstm_model,
                                                        trained_lstm_like)

MULTIPLIERS = (0, 1 << 30, (1 << 30) + 1, (1 << 31) - 1, 1276881787, 2146304392, 1239940808,
               (1 << 30) + (1 << 29))


def _ref_vec(xs, m, s, zp, lo, hi):
    return np.array([min(max(ref_mbqm(int(v), m, s) + zp, lo), hi) for v in xs], dtype=np.int64)


@pytest.mark.parametrize("m", MULTIPLIERS)
def test_product_requant_at_boundaries(m):
    """int16 x int16 products (|x| <= 2^30) at the boundaries of every right shift, with
    the LSTM's clamps (int16 without offset, int8 with an offset) and none."""
    bound = 1 << 30
    count = 0
    for shift in range(0, -31, -1):
        xs = [x for x in boundary_accumulators(m, shift, -bound, bound)]
        xs += list(range(-300, 301))
        xs = np.array(sorted(set(xs)), dtype=np.int64)
        for zp, lo, hi in ((0, -32768, 32767), (-37, -128, 127), (5, -(1 << 31), (1 << 31) - 1)):
            stage = ProductRequant(m, shift, zp, lo, hi, bound)
            assert stage.available
            got = np.asarray(stage(xs.astype(np.int32)), dtype=np.int64)
            want = _ref_vec(xs, m, shift, zp, lo, hi)
            bad = np.nonzero(got != want)[0]
            assert not len(bad), (f"m={m} shift={shift} zp={zp} ({np.dtype(stage.dtype).name}): "
                                  f"x={xs[bad[0]]} gives {got[bad[0]]}, TFLM {want[bad[0]]}")
            count += len(xs)
    assert count > 20000


def test_product_requant_declines_what_it_cannot_do():
    assert not ProductRequant(1 << 30, 1, 0, -128, 127, 1 << 30).available      # left shift
    assert not ProductRequant((1 << 30) - 1, -3, 0, -128, 127, 1 << 30).available  # not QuantizeMultiplier's
    assert ProductRequant(1 << 30, -14, 0, -32768, 32767, 1 << 30).dtype == np.int32
    assert ProductRequant(2146304392, -23, 0, -128, 127, 1 << 30).dtype == np.int64


def _sweep_stage(rows, seed):
    """A stage of ``rows`` rows, depth 2, weights (1, 256) per row: its two int8 inputs
    give every accumulator x1 + 256 x2 + offset terms + bias in a contiguous range of
    65,536; each row's bias centres that range on one of its rounding boundaries."""
    rng = np.random.default_rng(seed)
    ms = [int(MULTIPLIERS[i % len(MULTIPLIERS)]) for i in range(rows)]
    ms = [m if m else (1 << 30) for m in ms]
    low = 4 * seed - 2      # one common offset serves rows whose shifts are close (-2, -1:
    #                         left shifts, accumulators far from wrapping)
    shifts = [-int(rng.integers(low, low + 3)) for _ in range(rows)]
    offset = int(rng.integers(-128, 128))
    weights = np.array([[1, 256]] * rows, dtype=np.int64)
    biases = []
    for m, s in zip(ms, shifts):
        targets = [a for a in boundary_accumulators(m, s, -(1 << 19), 1 << 19) if abs(a) < (1 << 19)]
        centre = int(targets[int(rng.integers(0, len(targets)))])
        biases.append(centre - 257 * offset)
    return weights, offset, np.array(biases, dtype=np.int64), np.array(ms), np.array(shifts)


@pytest.mark.parametrize("seed", range(4))
def test_folded_fc_stage_sweeps_boundaries(seed):
    rows = 48
    weights, offset, bias, ms, shifts = _sweep_stage(rows, seed)
    x1, x2 = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    x1, x2 = x1.reshape(-1), x2.reshape(-1)
    x_aug = np.stack([x1, x2, np.ones_like(x1)]).astype(np.float64)
    for zp, lo, hi in ((0, -32768, 32767), (-3, -128, 127)):
        stage = FoldedFcStage(weights, offset, (-128, 127), bias, ms, shifts, zp, lo, hi,
                              min_offset=32768 if seed == 1 else 1)
        assert stage.available
        got = stage(x_aug, np.empty((rows, x_aug.shape[1]))).astype(np.int64) - stage.offset
        for i in range(rows):
            acc = (x1 + offset) + 256 * (x2 + offset) + int(bias[i])
            want = _ref_vec(acc, int(ms[i]), int(shifts[i]), zp, lo, hi)
            bad = np.nonzero(got[i] != want)[0]
            assert not len(bad), (f"row {i} m={ms[i]} shift={shifts[i]}: acc={acc[bad[0]]} "
                                  f"gives {got[i][bad[0]]}, TFLM {want[bad[0]]}")


@pytest.mark.parametrize("m", [v for v in MULTIPLIERS if v])
def test_folded_fc_stage_rows_last_sweeps(m):
    """rows_last (samples first) in both its forms -- float32 products (no bias) and the
    float64 product with a bias column -- on all 65,536 accumulators (x1 + o) + 256 (x2 + o)
    of two int8 inputs, for right shifts 0..14 and left shifts 1..2: against the
    vectorised routine of quantization.py (itself pinned to the TFLM transcription in
    tests/test_edge_requant.py) everywhere and against the transcription at the
    boundary accumulators in range."""
    from kernels.internal.quantization import multiply_by_quantized_multiplier
    x1, x2 = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    x = np.stack([x1.reshape(-1), x2.reshape(-1)], axis=1).astype(np.int8)
    rng = np.random.default_rng(m % 1000)
    for shift in range(2, -15, -1):
        offset = int(rng.integers(-128, 128))
        weights = np.array([[1, 256], [1, 256]])
        for bias in (None, np.array([12345, 12345])):
            stage = FoldedFcStage(weights, offset, (-128, 127), bias, [m, m], [shift, shift],
                                  -7, -32768, 32767)
            assert stage.available
            assert (stage.f32 is not None) == (bias is None)
            got = stage.rows_last(x).astype(np.int64) - stage.offset
            acc = (x[:, 0].astype(np.int64) + offset) + 256 * (x[:, 1].astype(np.int64) + offset)
            acc += 0 if bias is None else int(bias[0])
            want = np.clip(multiply_by_quantized_multiplier(acc, m, shift) - 7, -32768, 32767)
            assert np.array_equal(got[:, 0], want) and np.array_equal(got[:, 1], want)
            edges = [a for a in boundary_accumulators(m, shift, int(acc.min()), int(acc.max()))]
            order = np.argsort(acc)
            pos = np.searchsorted(acc[order], edges)
            for a, i in zip(edges, pos):
                if i < len(order) and acc[order[i]] == a:
                    assert got[order[i], 0] == min(max(ref_mbqm(a, m, shift) - 7, -32768), 32767)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 16), st.integers(1, 24), st.booleans())
def test_folded_fc_stage_random_layers(seed, depth, rows, with_bias):
    """Random int8 weights, biases and multipliers, every input extreme and random ones."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(-127, 128, (rows, depth))
    offset = int(rng.integers(-128, 128))
    bias = rng.integers(-(1 << 17), 1 << 17, rows) if with_bias else None
    ms = rng.integers(1 << 30, 1 << 31, rows)
    low = int(rng.integers(-4, 18))       # negative: left shifts (no wrap at these sizes)
    shifts = -rng.integers(low, low + 3, rows)
    stage = FoldedFcStage(weights, offset, (-128, 127), bias, ms, shifts, 0, -32768, 32767)
    assert stage.available
    xs = rng.integers(-128, 128, (depth, 300))
    xs[:, 0], xs[:, 1] = -128, 127
    xs[:, 2] = np.where(weights[0] > 0, 127, -128)
    xs[:, 3] = np.where(weights[0] > 0, -128, 127)
    x_aug = np.vstack([xs, np.ones((1, xs.shape[1]))]).astype(np.float64)
    got = stage(x_aug, np.empty((rows, xs.shape[1]))).astype(np.int64) - stage.offset
    acc = weights @ (xs + offset) + (0 if bias is None else bias[:, None])
    for i in range(rows):
        want = _ref_vec(acc[i], int(ms[i]), int(shifts[i]), 0, -32768, 32767)
        assert np.array_equal(got[i], want), f"row {i}"


def test_folded_fc_stage_declines_wrapping_or_inexact_layers():
    w = np.full((1, 4), 127)
    big_bias = np.array([(1 << 31) - 100])
    assert not FoldedFcStage(w, 0, (-128, 127), big_bias, [1 << 30], [0], 0, -1, 1).available
    # accumulators near 2^22: the positive offset pushes the sums past 2^53 units of 2^-31
    assert not FoldedFcStage(w, 0, (-128, 127), np.array([1 << 22]), [(1 << 31) - 1], [0], 0,
                             -1, 1).available
    # shifts 0 and 20 with large accumulators: one common offset cannot fit int32
    # a left shift that would wrap the accumulator (TFLM wraps it)
    assert not FoldedFcStage(w, 0, (-128, 127), None, [1 << 30], [23], 0, -1, 1).available
    w2 = np.full((2, 40), 127)
    assert not FoldedFcStage(w2, 0, (-128, 127), None, [(1 << 31) - 1] * 2, [0, -20], 0,
                             -1, 1).available


# ------------------------------------------------------------------ the LSTM fast path
def _lstm_interpreter(model):
    from micro_runtime import MicroInterpreter
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64")
    it.allocate_tensors()
    return it


def test_lstm_offset_tables_read_every_int16_sum():
    """The fast path's gate tables, indexed by an offset sum with mode="clip", give f(v)
    for every int16 v and the saturated values beyond both ends."""
    from kernels.unidirectional_sequence_lstm import _FastInt8Plan
    model = trained_lstm_like(np.random.default_rng(0))[0]
    it = _lstm_interpreter(model)
    node = it.subgraphs[0].nodes[0]
    data = node.user_data
    plan = data.fast
    assert isinstance(plan, _FastInt8Plan)
    plan.ready(data)
    v = np.arange(-32768, 32768)
    beyond = np.array([-10 ** 6, -40000, -32769, 32768, 40000, 70000])
    for table, original in zip(plan.tables, (data.sigmoid_table, data.cell_gate_table)):
        index = (np.concatenate([v, beyond]) + plan.sum_offset).astype(np.int32)
        got = np.take(table, index, mode="clip")
        want = original[np.clip(np.concatenate([v, beyond]), -32768, 32767).astype(np.int16).view(np.uint16)]
        assert np.array_equal(got, want)


@st.composite
def int8_lstm_case(draw):
    """The op tests' int8 LSTMs (tests/test_op_unidirectional_sequence_lstm.py), with the
    biases kept within what the fast path takes (larger ones take the plain path)."""
    batch, steps = draw(st.integers(1, 5)), draw(st.integers(1, 8))
    n_input, n_state = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    activation = draw(st.just(TANH) | st.integers(0, 5))
    cell_clip = 0.0 if draw(st.booleans()) else float(np.float32(draw(st.floats(0.05, 20.0))))
    q = draw(integer_quantization("int8", n_input, n_state))
    cap = draw(st.sampled_from([1 << 8, 1 << 14, 1 << 17]))
    q["bias_range"] = [min(b, cap) for b in q["bias_range"]]
    spec = Spec("int8", batch, steps, n_input, n_state, draw(st.booleans()), activation,
                cell_clip, 0, q)
    gen = lambda shape, dtype, lo=None, hi=None: arrays(draw, shape, dtype, lo, hi)  # noqa: E731
    model = lstm_model(spec, gen)
    make_input = input_generator(spec, gen)
    return model, [make_input() for _ in range(draw(st.integers(1, 3)))]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_lstm_fast_path_equals_plain_path(data):
    """The int8 LSTM's fast path and its plain path (the one the oracle tests pinned to
    TFLM before the fast path existed) give the same outputs and states, over several
    invokes (states carried over), on random int8 LSTMs (time- and batch-major, every
    cell-gate activation, with and without cell clip) with full-range and extreme inputs."""
    model, runs = data.draw(int8_lstm_case())
    fast, plain = _lstm_interpreter(model), _lstm_interpreter(model)
    node = plain.subgraphs[0].nodes[0]
    assert node.user_data.fast is not None
    node.user_data.fast = None
    rng = np.random.default_rng(data.draw(st.integers(0, 1 << 30)))
    shape = fast.input(0).shape
    extra = [rng.integers(-128, 128, shape).astype(np.int8), np.full(shape, -128, np.int8),
             np.full(shape, 127, np.int8)]
    for x in runs + extra:
        for it in (fast, plain):
            it.set_input(x, 0)
            it.invoke()
        assert np.array_equal(fast.output(0), plain.output(0))
        for state in (18, 19):          # hidden and cell state tensors
            tensor = fast.model.main.operators[0].inputs[state]
            assert np.array_equal(fast.tensor(tensor), plain.tensor(tensor))


# ------------------------------------------------------------------ the SVDF table path
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_svdf_uniform_state_table_path_equals_per_sample_invokes(data):
    """Batched evaluation of int8-state rank-1 SVDFs (the table path: folded feature FC,
    per-filter output tables built by the plain integer path) equals one invoke per
    sample of the single-sample interpreter (plain path), on full-range inputs with
    extremes; zero points, scales, memory sizes and biases as the op tests draw them."""
    input_size = data.draw(st.integers(1, 24))
    units, memory = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    q, bias_range = data.draw(quant_params("int8_state8", input_size, memory, 1))
    model, _ = svdf_model("int8_state8", 1, input_size, units, 1, memory, draw=data.draw,
                          activation=data.draw(st.integers(0, 5)), q=q, bias_range=bias_range)
    ev = Evaluator(model, target="host64", batch=data.draw(st.integers(2, 40)))
    node = ev._block.subgraphs[0].nodes[0]
    assert node.user_data.fast is not None
    rng = np.random.default_rng(data.draw(st.integers(0, 1 << 30)))
    inputs = random_samples(rng, ev.input_specs, data.draw(st.integers(1, 90)))
    for got, want in zip(ev.run(inputs), per_sample(model, inputs)):
        assert np.array_equal(got, want)


# ------------------------------------------------------------------ SaturatingTableFc
@pytest.mark.parametrize("m", [v for v in MULTIPLIERS if v])
def test_saturating_table_fc_sweeps(m):
    """The table FC (both product forms) on all 65,536 accumulators (x1 + o) + w2 (x2 + o)
    + bias of two int8 inputs, with biases that put the range across the int32 wrap (both
    ends), on the output stage's saturation points and at zero; shifts -12..0 (left
    shifts are declined), int8 clamps
    (ReLU-like too): against the TFLM transcription (wrap, then
    MultiplyByQuantizedMultiplier) at the boundary accumulators and the wraps, and
    against the vectorised routine everywhere."""
    from kernels.internal.quantization import multiply_by_quantized_multiplier, wrap_int32
    x1, x2 = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    x = np.stack([x1.reshape(-1), x2.reshape(-1)], axis=1).astype(np.int8)
    rng = np.random.default_rng(m % 997)
    checked = 0
    for shift in range(2, -13, -1):
        for w2 in (256, 3):              # float64 products (sums past 2^24? no: both forms)
            offset = int(rng.integers(-128, 128))
            zp, lo, hi = int(rng.integers(-128, 128)), -128, 127
            if rng.random() < 0.3:
                lo = max(zp, -128)           # a ReLU-like clamp
            weights = np.array([[1, w2]] * 3)
            centre = [0, (1 << 31) - 1000, -(1 << 31) + 1000]
            bias = np.array([c - (1 + w2) * offset for c in centre])
            fc = SaturatingTableFc(weights, offset, (-128, 127), bias, m, shift, zp, lo, hi)
            if shift > 0:                 # acc << shift wraps: not monotone, declined
                assert not fc.available
                continue
            if not fc.available:          # the table would be too large for this shift
                assert shift <= -9
                continue
            out = np.empty((x.shape[0], 3), np.int8)
            fc(x, out)
            for row in range(3):
                acc = wrap_int32((x[:, 0].astype(np.int64) + offset)
                                 + w2 * (x[:, 1].astype(np.int64) + offset) + int(bias[row]))
                want = np.clip(multiply_by_quantized_multiplier(acc, m, shift) + zp, lo, hi)
                assert np.array_equal(out[:, row].astype(np.int64), want), (m, shift, w2, row)
                marks = set(boundary_accumulators(m, shift, int(acc.min()), int(acc.max())))
                marks |= {int(acc.min()), int(acc.max())}
                hits = np.nonzero(np.isin(acc, list(marks)))[0]
                for i in hits[:400]:
                    total = ref_wrap32(int(x[i, 0]) + offset + w2 * (int(x[i, 1]) + offset) + int(bias[row]))
                    assert out[i, row] == min(max(ref_mbqm(total, m, shift) + zp, lo), hi)
                checked += len(acc)
    assert checked > 1_000_000


@pytest.mark.parametrize("m", [v for v in MULTIPLIERS if v])
def test_output_table_at_boundaries(m):
    """OutputTable (SVDF's two output stages in single invokes): every boundary accumulator
    of right shifts 0..14 over the whole int32 range, the int32 extremes and random ones,
    with an int8 clamp and a zero point + int8 wrap applied after it (the state's
    conversion), against the TFLM transcription; left shifts are declined."""
    rng = np.random.default_rng(m % 991)
    assert not OutputTable(m, 1, -128, 127).available
    for shift in range(0, -15, -1):
        zp = int(rng.integers(-128, 128))
        table = OutputTable(m, shift, -128, 127, post=lambda v: (v + zp + 128) % 256 - 128)
        if not table.available:
            assert shift <= -9
            continue
        accs = boundary_accumulators(m, shift) + [-(1 << 31), (1 << 31) - 1]
        accs = np.array(accs + list(rng.integers(-(1 << 31), 1 << 31, 2000)), dtype=np.int64)
        out = np.empty(accs.shape, np.int8)
        table.read(accs.copy(), out)
        for a, got in zip(accs, out):
            want = min(max(ref_mbqm(int(a), m, shift), -128), 127)
            assert int(got) == (want + zp + 128) % 256 - 128, (m, shift, int(a))
