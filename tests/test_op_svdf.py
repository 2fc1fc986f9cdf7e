"""SVDF against TFLM: float32 and int8 (int16 or int8 time weights + activation state),
several invokes with the state carried over, reset, and the errors TFLM also gives."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.stateful_helpers import compare_runs_with_tflm
from tests.strategies import arrays, scales

pytestmark = pytest.mark.oracle

OP = "SVDF"


def svdf_model(kind, batch, input_size, units, rank, memory, draw=None, rng=None,
               activation=0, has_bias=True, q=None, bias_range=20000):
    """A one-SVDF model; weights from ``draw`` (hypothesis) or ``rng``."""
    filters = units * rank
    gen = (lambda shape, dtype, lo=None, hi=None: arrays(draw, shape, dtype, lo, hi)) if draw else \
        (lambda shape, dtype, lo=None, hi=None: _rng_array(rng, shape, dtype, lo, hi))
    if kind == "float32":
        wf = gen((filters, input_size), "float32", -1.0, 1.0)
        wt = gen((filters, memory), "float32", -1.0, 1.0)
        bias = TensorDef((units,), "FLOAT32", data=gen((units,), "float32", -1.0, 1.0)) if has_bias else None
        model = single_op_model(OP, [TensorDef((batch, input_size), "FLOAT32"),
                                     TensorDef((filters, input_size), "FLOAT32", data=wf),
                                     TensorDef((filters, memory), "FLOAT32", data=wt), bias,
                                     TensorDef((batch, memory * filters), "FLOAT32", is_variable=True)],
                                [TensorDef((batch, units), "FLOAT32")],
                                rank=rank, fused_activation_function=activation)
        return model, (lambda: gen((batch, input_size), "float32", -3.0, 3.0))
    state = "int16" if kind == "int8_state16" else "int8"
    s_in, zp_in, s_wf, s_state, zp_state, s_wt, s_out, zp_out = q
    wf = gen((filters, input_size), "int8")
    wt = gen((filters, memory), state)
    bias_scale = float(np.float32(s_state) * np.float32(s_wt))
    bias = gen((units,), "int32", -bias_range, bias_range)
    model = single_op_model(OP, [TensorDef((batch, input_size), "INT8", quant=(s_in, zp_in)),
                                 TensorDef((filters, input_size), "INT8", data=wf, quant=(s_wf, 0)),
                                 TensorDef((filters, memory), state.upper(), data=wt, quant=(s_wt, 0)),
                                 TensorDef((units,), "INT32", data=bias, quant=(bias_scale, 0)),
                                 TensorDef((batch, memory * filters), state.upper(),
                                           quant=(s_state, zp_state), is_variable=True)],
                            [TensorDef((batch, units), "INT8", quant=(s_out, zp_out))],
                            rank=rank, fused_activation_function=activation)
    return model, (lambda: gen((batch, input_size), "int8"))


def _rng_array(rng, shape, dtype, lo=None, hi=None):
    if dtype == "float32":
        return rng.uniform(lo, hi, size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def _f32(x):
    return float(np.float32(x))


@st.composite
def quant_params(draw, kind, input_size, memory, rank):
    """Scales that keep the state and the output mostly inside their ranges: each one
    is derived from the typical size of what it quantizes, times a drawn factor."""
    spread = st.floats(-3.0, 2.0)
    s_in, s_wf = draw(scales(1e-3, 0.5)), draw(scales(1e-3, 0.05))
    typical_dot = 100.0 * 74.0 * np.sqrt(input_size)
    if kind == "int8_state16":
        state_max, wt_typical, zp_state = 32767, 19000.0, 0
        s_wt = draw(scales(1e-5, 5e-3))
    else:
        state_max, wt_typical, zp_state = 127, 74.0, draw(st.integers(-128, 127))
        s_wt = draw(scales(1e-3, 0.05))
    target_state = state_max / 4 * 2.0 ** draw(spread)
    s_state = _f32(s_in * s_wf * typical_dot / target_state)
    typical_acc = wt_typical * min(target_state, state_max) * np.sqrt(memory * rank)
    s_out = _f32(s_state * s_wt * typical_acc / (64 * 2.0 ** draw(spread)))
    return (s_in, draw(st.integers(-128, 127)), s_wf, s_state, zp_state, s_wt, s_out,
            draw(st.integers(-128, 127))), int(min(typical_acc, 2 ** 30))


@st.composite
def svdf_case(draw):
    kind = draw(st.sampled_from(["float32", "int8_state16", "int8_state8"]))
    event(kind)
    batch = draw(st.integers(1, 4))
    input_size = draw(st.integers(1, 24))
    units = draw(st.integers(1, 8))
    rank = draw(st.integers(1, 3))
    memory = draw(st.integers(1, 8))
    activation = draw(st.integers(0, 5))   # NONE .. SIGN_BIT (ignored by the int8 kernel)
    q, bias_range = (draw(quant_params(kind, input_size, memory, rank)) if kind != "float32"
                     else (None, 0))
    model, gen = svdf_model(kind, batch, input_size, units, rank, memory, draw=draw,
                            activation=activation, q=q, bias_range=bias_range)
    invokes = draw(st.integers(1, 4))
    return model, [[gen()] for _ in range(invokes)], kind


@given(svdf_case())
def test_svdf_matches_tflm(oracle, case):
    """Every invoke's output (state carried across invokes) and the allocation report."""
    model, runs, kind = case
    compare_runs_with_tflm(oracle, model, runs, context=f"{OP} {kind}")


@given(svdf_case())
def test_svdf_reset_between_invokes(oracle, case):
    """interpreter.reset() zeroes the state (int8 state: its zero point), as TFLM's."""
    model, runs, kind = case
    compare_runs_with_tflm(oracle, model, runs + runs[:1], reset_between=True,
                           context=f"{OP} {kind} reset")


@pytest.mark.parametrize("kind", ["float32", "int8_state16", "int8_state8"])
def test_svdf_long_sequence_then_reset(oracle, kind):
    """Twelve invokes fill and roll the memory; after reset() the first output repeats."""
    rng = np.random.default_rng(7)
    q = (0.03, -20, 0.01, 0.02 if kind == "int8_state16" else 0.3, 0 if kind == "int8_state16" else 11,
         0.002 if kind == "int8_state16" else 0.02, 0.05, 3)
    model, gen = svdf_model(kind, 2, 10, 4, 2, 5, rng=rng, activation=1, q=q)
    runs = [[gen()] for _ in range(12)]
    ours = compare_runs_with_tflm(oracle, model, runs, context=f"{OP} {kind} long")
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64")
    it.allocate_tensors()
    for run in runs[:5]:
        it.set_input(run[0], 0)
        it.invoke()
    it.reset()
    it.set_input(runs[0][0], 0)
    it.invoke()
    assert np.array_equal(it.output(0), ours[0][0])


def test_svdf_keyword_model_shapes(oracle):
    """The keyword_scrambled_8bit layer shapes: int8 state / time weights, rank 1."""
    rng = np.random.default_rng(3)
    q = (0.05920833, -128, 0.00917121, 0.8073114, -50, 0.01493873, 0.23618338, -128)
    model, gen = svdf_model("int8_state8", 1, 96, 64, 1, 8, rng=rng, activation=1, q=q)
    compare_runs_with_tflm(oracle, model, [[gen()] for _ in range(6)], context=f"{OP} keyword")


def _error_model(change):
    rng = np.random.default_rng(0)
    q = (0.05, 0, 0.01, 0.02, 0, 0.001, 0.1, 0)
    filters, units, rank, memory, batch, inp = 6, 3, 2, 4, 1, 5
    wf = rng.integers(-128, 128, (filters, inp)).astype(np.int8)
    wt = rng.integers(-1000, 1000, (filters, memory)).astype(np.int16)
    ins = [TensorDef((batch, inp), "INT8", quant=(q[0], 0)),
           TensorDef((filters, inp), "INT8", data=wf, quant=(q[2], 0)),
           TensorDef((filters, memory), "INT16", data=wt, quant=(q[5], 0)),
           TensorDef((units,), "INT32", data=np.zeros(units, np.int32),
                     quant=(float(np.float32(q[3]) * np.float32(q[5])), 0)),
           TensorDef((batch, memory * filters), "INT16", quant=(q[3], 0), is_variable=True)]
    out = TensorDef((batch, units), "INT8", quant=(q[6], 0))
    opts = dict(rank=rank, fused_activation_function=0)
    change(ins, out, opts)
    return single_op_model(OP, ins, [out], **opts)


ERRORS = {
    "rank does not divide filters": lambda ins, out, o: o.update(rank=4),
    "state not variable": lambda ins, out, o: ins.__setitem__(
        4, TensorDef(ins[4].shape, "INT16", quant=(0.02, 0), data=np.zeros(ins[4].shape, np.int16))),
    "wrong output units": lambda ins, out, o: setattr(out, "shape", (1, 2)),
    "int16 output": lambda ins, out, o: setattr(out, "dtype", "INT16"),
    "bias scale mismatch": lambda ins, out, o: setattr(ins[3], "quant", (0.5, 0)),
    "state size": lambda ins, out, o: setattr(ins[4], "shape", (1, 20)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_svdf_rejects_what_tflm_rejects(oracle, name):
    model = _error_model(ERRORS[name])
    theirs = oracle.run(model, [np.zeros((1, 5), np.int8)])
    assert not theirs.ok and not theirs.crashed and theirs.stage == "allocate", theirs
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError):
        it.allocate_tensors()


def test_svdf_without_bias_is_refused():
    """TFLM dereferences a missing SVDF bias (it crashes); we refuse the model."""
    model, _ = svdf_model("float32", 1, 4, 2, 1, 3, rng=np.random.default_rng(1), has_bias=False)
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError, match="bias"):
        it.allocate_tensors()


def test_svdf_time_weights_and_state_types_must_match():
    """int16 time weights with an int8 state make TFLM's kernel write int16 values over an
    int8 buffer (out of bounds); we refuse the model."""
    def change(ins, out, opts):
        ins[4] = TensorDef(ins[4].shape, "INT8", quant=(0.02, 0), is_variable=True)
    it = MicroInterpreter(_error_model(change), arena_size=1 << 20, target="host64",
                          error_reporter=lambda m: None)
    with pytest.raises(KernelError, match="must match"):
        it.allocate_tensors()


def test_svdf_valid_error_model_runs(oracle):
    """The unmodified error model is valid (so each error test changes one thing)."""
    model = _error_model(lambda ins, out, o: None)
    compare_with_tflm(oracle, model, [np.arange(5, dtype=np.int8).reshape(1, 5)], context=OP)


def test_keyword_model_svdf_layers_and_states(oracle):
    """keyword_scrambled_8bit end to end (6 SVDF layers): every SVDF output and activation
    state equals TFLM's after three invokes."""
    from tests.stateful_helpers import compare_zoo_tensors_with_tflm
    compare_zoo_tensors_with_tflm(oracle, "keyword_scrambled_8bit",
                                  [4, 5, 12, 13, 20, 21, 28, 29, 36, 37, 41, 42, 46, 47, 51])
