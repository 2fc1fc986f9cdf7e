"""CIRCULAR_BUFFER (TFLM's custom streaming op) against TFLM: the shifted buffer and the
invoke status (kTfLiteAbort = 15 between periods) over many invokes, cycles_max from the
options or guessed from the output shape, reset(), a streaming graph behind it."""
import flatbuffers.flexbuffers as flex
import numpy as np
import pytest
from hypothesis import given, strategies as st

from kernels import circular_buffer
from micro_runtime import Interpreter, MicroInterpreter
from micro_runtime.errors import KernelError
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import TensorDef, single_op_model
from tests.oracle import Oracle

pytestmark = pytest.mark.oracle


def streaming_model(slots, h, w, cycles_max=None, tail: bool = False) -> bytes:
    """CIRCULAR_BUFFER into a variable buffer tensor; with ``tail`` an ADD follows (it
    runs only when the buffer op does not abort)."""
    mb = ModelBuilder()
    g = mb.subgraph()
    x = g.add_tensor("x", (1, 1, h, w), "INT8", quantization=(0.1, 3))
    buf = g.add_tensor("buffer", (1, slots, h, w), "INT8", quantization=(0.1, 3), is_variable=True)
    options = flex.Dumps({"cycles_max": cycles_max}) if cycles_max is not None else None
    g.add_operator("CIRCULAR_BUFFER", [x], [buf], custom_options=options)
    out = buf
    if tail:
        out = g.add_tensor("y", (1, slots, h, w), "INT8", quantization=(0.2, -1))
        g.add_operator("ADD", [buf, buf], [out])
    g.inputs, g.outputs = [x], [out]
    return mb.build()


def run_both(oracle, model, runs, reset_every=0):
    theirs = oracle.run(model, runs=[list(r) for r in runs])
    assert theirs.ok, theirs.error
    it = Interpreter(model, arena_size=1 << 20)
    statuses, outputs = [], []
    for k, run in enumerate(runs):
        it.set_input(run[0], 0)
        statuses.append(it.invoke())
        outputs.append(it.get_output(0))
    return statuses, outputs, theirs


@given(st.data())
def test_circular_buffer_matches_tflm(oracle, data):
    draw = data.draw
    slots, h, w = draw(st.integers(1, 8)), draw(st.integers(1, 3)), draw(st.integers(1, 8))
    cycles = draw(st.sampled_from([1, 2, 3, 5]))
    tail = draw(st.booleans())
    model = streaming_model(slots, h, w, cycles, tail)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    runs = [[rng.integers(-128, 128, size=(1, 1, h, w)).astype(np.int8)]
            for _ in range(draw(st.integers(1, 9)))]
    statuses, outputs, theirs = run_both(oracle, model, runs)
    assert statuses == theirs.statuses
    assert statuses == [0 if (k + 1) % cycles == 0 else 15 for k in range(len(runs))]
    for k, (ours, ref) in enumerate(zip(outputs, theirs.invokes)):
        if tail and statuses[k] == 15 and all(s == 15 for s in statuses[:k + 1]):
            continue            # the ADD has not run yet: its output is arena leftovers
        assert ours.tobytes() == ref[0].tobytes(), f"invoke {k}"


@pytest.mark.parametrize("slots,expected", [(5, 1), (13, 1), (25, 1), (4, 2), (6, 2)])
def test_cycles_max_guessed_from_the_output_as_tflm(oracle, slots, expected):
    model = streaming_model(slots, 1, 2)     # no options: TFLM guesses the period
    runs = [[np.full((1, 1, 1, 2), k, np.int8)] for k in range(4)]
    statuses, _, theirs = run_both(oracle, model, runs)
    assert statuses == theirs.statuses == [0 if (k + 1) % expected == 0 else 15 for k in range(4)]


def test_guess_counter_is_shared_by_the_process_as_tflm():
    """TFLM counts guesses in a function-static variable: the 5th [.., 2, 96] buffer of
    the process runs every invoke. A fresh package process and a fresh counter agree."""
    fresh = Oracle()
    try:
        circular_buffer.reset_guess_count()
        model = streaming_model(3, 2, 96)
        runs = [[np.zeros((1, 1, 2, 96), np.int8)] for _ in range(2)]
        for k in range(6):
            theirs = fresh.run(model, runs=runs)
            it = Interpreter(model, arena_size=1 << 20)
            ours = []
            for run in runs:
                it.set_input(run[0], 0)
                ours.append(it.invoke())
            assert ours == theirs.statuses, f"model {k + 1}"
            assert ours == ([15, 0] if k != 4 else [0, 0])
    finally:
        fresh.close()
        circular_buffer.reset_guess_count()


def test_reset_restarts_the_period_and_clears_the_buffer(oracle):
    model = streaming_model(3, 1, 2, cycles_max=2)
    it = MicroInterpreter(model, arena_size=1 << 16, target="host64")
    it.allocate_tensors()
    it.set_input(np.full((1, 1, 1, 2), 9, np.int8), 0)
    assert it.invoke() == 15
    it.reset()
    assert np.array(it.output(0)).tolist() == [[[[3, 3]], [[3, 3]], [[3, 3]]]]   # zero point
    assert it.invoke() == 15 and it.invoke() == 0


@pytest.mark.parametrize("in_shape,out_shape,dtype,message", [
    ((1, 1, 1, 4), (1, 3, 1, 5), "INT8", "dimension check"),
    ((1, 2, 1, 4), (1, 3, 1, 4), "INT8", "dimension check"),
    ((1, 1, 1, 4), (1, 3, 1, 4), "INT16", "only int8"),
])
def test_prepare_errors_match_tflm(oracle, in_shape, out_shape, dtype, message):
    model = single_op_model("CIRCULAR_BUFFER", [TensorDef(in_shape, dtype)],
                            [TensorDef(out_shape, dtype, is_variable=True)],
                            custom_options=flex.Dumps({"cycles_max": 1}))
    assert not oracle.run(model, [np.zeros(in_shape, np.int8 if dtype == "INT8" else np.int16)]).ok
    with pytest.raises(KernelError, match=message):
        MicroInterpreter(model, target="host64", error_reporter=lambda m: None).allocate_tensors()
