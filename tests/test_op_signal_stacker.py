"""SignalStacker (TFLM signal custom op) against TFLM: stacking left / right context
frames every ``stacker_step`` frames across invokes, the first frame's padding, reset()."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_valid_invokes, int_array, mcu32_runs, options, rng_of

pytestmark = pytest.mark.oracle


def stacker_model(channels, left, right, step, output=None, inp=None):
    return single_op_model(
        "SignalStacker", [TensorDef((inp or channels,), "INT16")],
        [TensorDef((output or channels * (left + right + 1),), "INT16"), TensorDef((), "BOOL")],
        custom_options=options(num_channels=channels, stacker_left_context=left,
                               stacker_right_context=right, stacker_step=step))


@given(st.data(), st.booleans())
def test_stacker_matches_tflm(oracle, data, reset_between):
    draw = data.draw
    channels = draw(st.integers(1, 24))
    left, right = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    step = draw(st.integers(0, left + right + 1))
    extra = draw(st.integers(0, 3))
    rng = rng_of(draw)
    model = stacker_model(channels, left, right, step, inp=channels + extra,
                          output=channels * (left + right + 1) + extra)
    runs = [[int_array(rng, (channels + extra,), np.int16)] for _ in range(draw(st.integers(1, 8)))]
    compare_valid_invokes(oracle, model, runs, reset_between,
                          f"stacker {channels} ch, context {left}/{right}, step {step}",
                          data_elements=channels * (left + right + 1))
    mcu32_runs(model, runs)


def test_stacker_pads_with_the_first_frame():
    """left 2, right 1: the first output (after 2 frames) is f0 f0 f0 f1."""
    model = stacker_model(2, 2, 1, 1)
    it = MicroInterpreter(model, arena_size=1 << 16, target="host64")
    it.allocate_tensors()
    it.set_input(np.array([1, 2], np.int16), 0)
    it.invoke()
    assert not bool(it.output(1))
    it.set_input(np.array([3, 4], np.int16), 0)
    it.invoke()
    assert bool(it.output(1))
    assert np.array(it.output(0)).tolist() == [1, 2, 1, 2, 1, 2, 3, 4]


@pytest.mark.parametrize("kwargs,message", [
    (dict(channels=2, left=0, right=0, step=3), "stacker_step"),
    (dict(channels=4, left=1, right=0, step=1, inp=3), "input holds"),
    (dict(channels=4, left=1, right=0, step=1, output=7), "output holds"),
])
def test_stacker_refuses_what_tflm_cannot_run(kwargs, message):
    it = MicroInterpreter(stacker_model(kwargs["channels"], kwargs["left"], kwargs["right"],
                                        kwargs["step"], kwargs.get("output"), kwargs.get("inp")),
                          target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError, match=message):
        it.allocate_tensors()


def test_stacker_rejects_wrong_types(oracle):
    model = single_op_model("SignalStacker", [TensorDef((4,), "INT8")],
                            [TensorDef((4,), "INT16"), TensorDef((), "BOOL")],
                            custom_options=options(num_channels=4, stacker_left_context=0,
                                                   stacker_right_context=0, stacker_step=1))
    assert not oracle.run(model, [np.zeros(4, np.int8)]).ok
    with pytest.raises(KernelError, match="INT16"):
        MicroInterpreter(model, target="host64", error_reporter=lambda m: None).allocate_tensors()
