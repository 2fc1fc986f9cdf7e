"""UNIDIRECTIONAL_SEQUENCE_LSTM against TFLM: float32, int8 activations / int16 cell
(8x8->16) and int16 activations (16x8->16), time-major and batch-major, cell clip, the
builtin activation of the cell gate, several invokes with the states carried over,
reset, and the model variants TFLM refuses."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.stateful_helpers import compare_runs_with_tflm
from tests.strategies import arrays, scales

pytestmark = pytest.mark.oracle

OP = "UNIDIRECTIONAL_SEQUENCE_LSTM"
TANH = 4


def _f32(x):
    return float(np.float32(x))


class Spec:
    """Everything that defines one test LSTM."""

    def __init__(self, kind, batch, steps, n_input, n_state, time_major, activation=TANH,
                 cell_clip=0.0, intermediates=0, q=None):
        self.kind, self.batch, self.steps = kind, batch, steps
        self.n_input, self.n_state, self.time_major = n_input, n_state, time_major
        self.activation, self.cell_clip, self.intermediates, self.q = (
            activation, cell_clip, intermediates, q)

    @property
    def input_shape(self):
        return ((self.steps, self.batch, self.n_input) if self.time_major
                else (self.batch, self.steps, self.n_input))

    @property
    def output_shape(self):
        return ((self.steps, self.batch, self.n_state) if self.time_major
                else (self.batch, self.steps, self.n_state))


def lstm_model(spec: Spec, gen, change=None):
    """The model of ``spec``; ``gen(shape, dtype, lo, hi)`` makes the constant data;
    ``change(inputs, output, options)`` may edit the definitions (error tests)."""
    S, I = spec.n_state, spec.n_input
    ins = [None] * 24
    if spec.kind == "float32":
        ins[0] = TensorDef(spec.input_shape, "FLOAT32")
        for i in range(1, 5):
            ins[i] = TensorDef((S, I), "FLOAT32", data=gen((S, I), "float32", -1.0, 1.0))
        for i in range(5, 9):
            ins[i] = TensorDef((S, S), "FLOAT32", data=gen((S, S), "float32", -1.0, 1.0))
        for i in range(12, 16):
            ins[i] = TensorDef((S,), "FLOAT32", data=gen((S,), "float32", -1.0, 1.0))
        ins[18] = TensorDef((spec.batch, S), "FLOAT32", is_variable=True)
        ins[19] = TensorDef((spec.batch, S), "FLOAT32", is_variable=True)
        out = TensorDef(spec.output_shape, "FLOAT32")
    else:
        q = spec.q
        act = "INT8" if spec.kind == "int8" else "INT16"
        bias_type = "int32" if spec.kind == "int8" else "int64"
        ins[0] = TensorDef(spec.input_shape, act, quant=(q["s_in"], q["zp_in"]))
        for g, i in enumerate(range(1, 5)):
            ins[i] = TensorDef((S, I), "INT8", data=gen((S, I), "int8"), quant=(q["s_w_in"][g], 0))
        for g, i in enumerate(range(5, 9)):
            ins[i] = TensorDef((S, S), "INT8", data=gen((S, S), "int8"), quant=(q["s_w_rec"][g], 0))
        for g, i in enumerate(range(12, 16)):
            b = q["bias_range"][g]
            ins[i] = TensorDef((S,), bias_type.upper(),
                               data=gen((S,), "int32", -b, b).astype(bias_type),
                               quant=(_f32(q["s_in"] * q["s_w_in"][g]), 0))
        ins[18] = TensorDef((spec.batch, S), act, quant=(q["s_h"], q["zp_h"]), is_variable=True)
        ins[19] = TensorDef((spec.batch, S), "INT16", quant=(q["s_cell"], 0), is_variable=True)
        out = TensorDef(spec.output_shape, act, quant=(q["s_h"], q["zp_h"]))
    options = dict(fused_activation_function=spec.activation, cell_clip=spec.cell_clip,
                   proj_clip=0.0, time_major=spec.time_major)
    inter = []
    if spec.intermediates:
        # what the TFLite converter attaches (TFLM's kernel does not read them)
        inter = [TensorDef((0,), "FLOAT32") for _ in range(4)]
        inter.append(TensorDef((0,), "INT8", quant=(spec.q["s_h"], 0) if spec.q else None))
    if change is not None:
        change(ins, out, options)
    return single_op_model(OP, ins, [out], intermediates=inter, **options)


def input_generator(spec: Spec, gen):
    if spec.kind == "float32":
        return lambda: gen(spec.input_shape, "float32", -3.0, 3.0)
    return lambda: gen(spec.input_shape, spec.kind)


def rng_gen(rng):
    def gen(shape, dtype, lo=None, hi=None):
        if dtype == "float32":
            return rng.uniform(lo, hi, size=shape).astype(np.float32)
        info = np.iinfo(dtype)
        lo = info.min if lo is None else lo
        hi = info.max if hi is None else hi
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    return gen


@st.composite
def integer_quantization(draw, kind, n_input, n_state):
    """Scales that put the gate pre-activations (Q3.12) mostly inside [-8, 8): each
    weight scale is derived from the typical size of its FC sum, times a drawn factor."""
    spread = st.floats(-3.0, 1.0)
    if kind == "int8":
        s_in, zp_in = draw(scales(2e-3, 0.2)), draw(st.integers(-128, 127))
        x_typical = 100.0
        s_h = _f32(2.0 ** draw(st.floats(-8.0, -5.0)))
        zp_h = draw(st.integers(-128, 127))
        h_typical = min(0.5 / s_h, 100.0)
    else:
        s_in, zp_in = draw(scales(1e-4, 1e-2)), 0
        x_typical = 19000.0
        s_h = _f32(2.0 ** draw(st.floats(-15.0, -12.0)))
        zp_h = 0
        h_typical = min(0.5 / s_h, 19000.0)
    s_w_in = [_f32(3.0 * 2.0 ** draw(spread) / (s_in * 74.0 * x_typical * np.sqrt(n_input)))
              for _ in range(4)]
    s_w_rec = [_f32(3.0 * 2.0 ** draw(spread) / (s_h * 74.0 * h_typical * np.sqrt(n_state)))
               for _ in range(4)]
    bias_range = [int(min(2.0 / (s_in * w), 2 ** 30)) for w in s_w_in]
    if draw(st.booleans()):
        s_cell = 2.0 ** -draw(st.integers(8, 15))
    else:
        s_cell = draw(scales(2.0 ** -15, 2.0 ** -8))
    return dict(s_in=s_in, zp_in=zp_in, s_h=s_h, zp_h=zp_h, s_w_in=s_w_in, s_w_rec=s_w_rec,
                bias_range=bias_range, s_cell=s_cell)


@st.composite
def lstm_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    time_major = draw(st.booleans())
    event(f"{kind} {'time-major' if time_major else 'batch-major'}")
    batch, steps = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    n_input, n_state = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    activation = draw(st.just(TANH) | st.integers(0, 5))
    if draw(st.booleans()):
        cell_clip = 0.0
    else:
        cell_clip = _f32(draw(st.floats(0.05, 20.0)))
    q = draw(integer_quantization(kind, n_input, n_state)) if kind != "float32" else None
    intermediates = kind == "int8" and draw(st.booleans())
    spec = Spec(kind, batch, steps, n_input, n_state, time_major, activation, cell_clip,
                intermediates, q)
    gen = lambda shape, dtype, lo=None, hi=None: arrays(draw, shape, dtype, lo, hi)
    model = lstm_model(spec, gen)
    make_input = input_generator(spec, gen)
    runs = [[make_input()] for _ in range(draw(st.integers(1, 3)))]
    return model, runs, kind


@given(lstm_case())
def test_lstm_matches_tflm(oracle, case):
    """Every invoke's output (states carried across invokes) and the allocation report."""
    model, runs, kind = case
    compare_runs_with_tflm(oracle, model, runs, context=f"{OP} {kind}")


@given(lstm_case())
def test_lstm_reset_between_invokes(oracle, case):
    """interpreter.reset() zeroes the cell state and sets the int8 hidden state to its
    zero point, as TFLM's."""
    model, runs, kind = case
    compare_runs_with_tflm(oracle, model, runs + runs[:1], reset_between=True,
                           context=f"{OP} {kind} reset")


def trained_lstm_like(rng):
    """The layer of tests/data/trained_lstm_int8.tflite (28 steps of 28 inputs, 20 cells,
    cell clip 10, int8 hidden scale 0.0078, cell scale 2^-12, converter intermediates)."""
    q = dict(s_in=0.00392157, zp_in=-128, s_h=0.00781679, zp_h=0,
             s_w_in=[0.01177761, 0.00936705, 0.00740102, 0.00898651],
             s_w_rec=[0.00822722, 0.00494504, 0.00578341, 0.00928544],
             bias_range=[20000] * 4, s_cell=2.0 ** -12)
    spec = Spec("int8", 1, 28, 28, 20, False, TANH, 10.0, 1, q)
    gen = rng_gen(rng)
    return lstm_model(spec, gen), input_generator(spec, gen)


def test_lstm_trained_model_layer(oracle):
    model, make_input = trained_lstm_like(np.random.default_rng(5))
    compare_runs_with_tflm(oracle, model, [[make_input()] for _ in range(3)],
                           context=f"{OP} trained-like")


@pytest.mark.parametrize("kind", ["float32", "int8", "int16"])
@pytest.mark.parametrize("time_major", [False, True])
def test_lstm_long_run_then_reset(oracle, kind, time_major):
    """Eight invokes of a 3-batch LSTM, then reset(): the first output repeats."""
    rng = np.random.default_rng(11)
    q = None
    if kind != "float32":
        s_in = 0.02 if kind == "int8" else 2e-4
        q = dict(s_in=s_in, zp_in=7 if kind == "int8" else 0,
                 s_h=2.0 ** -7 if kind == "int8" else 2.0 ** -14, zp_h=-9 if kind == "int8" else 0,
                 s_w_in=[_f32(3.0 / (s_in * 74 * (100 if kind == "int8" else 19000) * 3))] * 4,
                 s_w_rec=[0.004 if kind == "int8" else 1.5e-5] * 4,
                 bias_range=[3000] * 4, s_cell=2.0 ** -11)
    spec = Spec(kind, 3, 4, 9, 7, time_major, TANH, 2.5, 0, q)
    gen = rng_gen(rng)
    model = lstm_model(spec, gen)
    make_input = input_generator(spec, gen)
    runs = [[make_input()] for _ in range(8)]
    ours = compare_runs_with_tflm(oracle, model, runs, context=f"{OP} {kind} long")
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64")
    it.allocate_tensors()
    for run in runs[:3]:
        it.set_input(run[0], 0)
        it.invoke()
    it.reset()
    it.set_input(runs[0][0], 0)
    it.invoke()
    assert np.array_equal(it.output(0), ours[0][0])


# ------------------------------------------------------------------ errors
def _base_spec():
    q = dict(s_in=0.02, zp_in=0, s_h=2.0 ** -7, zp_h=0, s_w_in=[0.002] * 4, s_w_rec=[0.004] * 4,
             bias_range=[1000] * 4, s_cell=2.0 ** -11)
    return Spec("int8", 2, 3, 4, 5, False, TANH, 0.0, 0, q)


def _set(index, tensor_def):
    return lambda ins, out, opts: ins.__setitem__(index, tensor_def)


ERRORS = {
    "projection weights": _set(16, TensorDef((5, 5), "INT8", data=np.ones((5, 5), np.int8),
                                             quant=(0.01, 0))),
    "peephole weights": _set(10, TensorDef((5,), "INT16", data=np.ones(5, np.int16),
                                           quant=(0.01, 0))),
    "layer norm": _set(21, TensorDef((5,), "INT16", data=np.ones(5, np.int16), quant=(0.01, 0))),
    "no input gate (CIFG)": _set(1, None),
    "int8 cell state": _set(19, TensorDef((2, 5), "INT8", quant=(2.0 ** -11, 0), is_variable=True)),
    "hidden state not variable": _set(18, TensorDef((2, 5), "INT8", quant=(2.0 ** -7, 0),
                                                    data=np.zeros((2, 5), np.int8))),
    "hidden state type": _set(18, TensorDef((2, 5), "INT16", quant=(2.0 ** -7, 0), is_variable=True)),
    "recurrent weights shape": _set(7, TensorDef((5, 4), "INT8", data=np.ones((5, 4), np.int8),
                                                 quant=(0.004, 0))),
    "bias shape": _set(13, TensorDef((4,), "INT32", data=np.ones(4, np.int32), quant=(1e-4, 0))),
    "output units": lambda ins, out, opts: setattr(out, "shape", (2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_lstm_rejects_what_tflm_rejects(oracle, name):
    spec = _base_spec()
    model = lstm_model(spec, rng_gen(np.random.default_rng(2)), ERRORS[name])
    theirs = oracle.run(model, [np.zeros(spec.input_shape, np.int8)])
    assert not theirs.ok and not theirs.crashed and theirs.stage == "allocate", theirs
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError):
        it.allocate_tensors()


def test_lstm_per_channel_weights_refused():
    """TFLM allocates per-channel multipliers for per-channel LSTM weights but then runs
    with per-tensor parameters it never computed; we refuse such models."""
    def change(ins, out, opts):
        w = ins[3]
        ins[3] = TensorDef(w.shape, "INT8", data=w.data, quant=([0.002] * 5, [0] * 5, 0))
    model = lstm_model(_base_spec(), rng_gen(np.random.default_rng(2)), change)
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError, match="per-channel"):
        it.allocate_tensors()


def test_lstm_valid_base_model_runs(oracle):
    """The unmodified error-test model is valid (each error test changes one thing)."""
    spec = _base_spec()
    model = lstm_model(spec, rng_gen(np.random.default_rng(2)))
    x = np.random.default_rng(3).integers(-128, 128, spec.input_shape).astype(np.int8)
    compare_with_tflm(oracle, model, [x], context=OP)


def test_trained_lstm_model_layer_and_states(oracle):
    """trained_lstm_int8 end to end: the LSTM output sequence and both states equal
    TFLM's after three invokes."""
    from tests.stateful_helpers import compare_zoo_tensors_with_tflm
    compare_zoo_tensors_with_tflm(oracle, "trained_lstm_int8", [16, 17, 23, 25])
