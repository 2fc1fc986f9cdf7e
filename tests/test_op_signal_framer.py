"""SignalFramer (TFLM signal custom op) against TFLM: frames across invokes, with and
without prefill, frame sizes below, at and above the step, several outer rows, reset()."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_valid_invokes, int_array, mcu32_runs, options, rng_of

pytestmark = pytest.mark.oracle


def framer_model(outer, frames, frame_size, frame_step, prefill, output_frames=None):
    inner = frames * frame_step
    return single_op_model(
        "SignalFramer", [TensorDef(tuple(outer) + (inner,), "INT16")],
        [TensorDef(tuple(outer) + (output_frames or frames, frame_size), "INT16"),
         TensorDef((), "BOOL")],
        custom_options=options(frame_size=frame_size, frame_step=frame_step, prefill=prefill))


@given(st.data(), st.booleans())
def test_framer_matches_tflm(oracle, data, reset_between):
    draw = data.draw
    outer = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    step = draw(st.integers(1, 16))
    size = draw(st.integers(1, 48))
    prefill = draw(st.booleans()) and size >= step
    frames = draw(st.integers(1, 4))
    rng = rng_of(draw)
    model = framer_model(outer, frames, size, step, prefill)
    shape = tuple(outer) + (frames * step,)
    runs = [[int_array(rng, shape, np.int16)] for _ in range(draw(st.integers(1, 6)))]
    flags = compare_valid_invokes(oracle, model, runs, reset_between,
                                  f"framer {shape} size {size} step {step} prefill {prefill}")
    if prefill and not reset_between:
        assert all(flags)       # a prefilled framer has a whole frame from the first step
    mcu32_runs(model, runs)


def test_framer_frames_are_the_sliding_windows():
    """Frames of 4 every 2 samples over 0, 1, 2, ...: windows [0..3], [2..5], ..."""
    model = framer_model((), 2, 4, 2, prefill=False)
    it = MicroInterpreter(model, arena_size=1 << 16, target="host64")
    it.allocate_tensors()
    outs = []
    for k in range(3):
        it.set_input(np.arange(4 * k, 4 * k + 4, dtype=np.int16), 0)
        it.invoke()
        outs.append((bool(it.output(1)), np.array(it.output(0))))
    assert outs[0][0] is False
    assert outs[1][0] and outs[1][1].tolist() == [[2, 3, 4, 5], [4, 5, 6, 7]]
    assert outs[2][1].tolist() == [[6, 7, 8, 9], [8, 9, 10, 11]]


@pytest.mark.parametrize("kwargs,message", [
    (dict(frame_size=4, frame_step=0, prefill=False), "positive"),
    (dict(frame_size=2, frame_step=4, prefill=True), "prefill"),
])
def test_framer_refuses_what_tflm_cannot_run(kwargs, message):
    model = single_op_model("SignalFramer", [TensorDef((8,), "INT16")],
                            [TensorDef((2, 4), "INT16"), TensorDef((), "BOOL")],
                            custom_options=options(**kwargs))
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError, match=message):
        it.allocate_tensors()


@pytest.mark.parametrize("inner,output,message", [
    (6, (1, 4), "innermost_dim % params->frame_step"),
    (8, (1, 4), "fewer than"),
])
def test_framer_prepare_errors_match_tflm(oracle, inner, output, message):
    model = single_op_model("SignalFramer", [TensorDef((inner,), "INT16")],
                            [TensorDef(output, "INT16"), TensorDef((), "BOOL")],
                            custom_options=options(frame_size=4, frame_step=4, prefill=False))
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError, match=message):
        it.allocate_tensors()
    if "frame_step" in message:
        assert not oracle.run(model, [np.zeros(inner, np.int16)]).ok
