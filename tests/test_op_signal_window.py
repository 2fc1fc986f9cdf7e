"""SignalWindow (TFLM signal custom op) against TFLM: int16 frames times an int16 window,
shifted and saturated; several invokes, allocation report."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, mcu32_runs, options, rng_of

pytestmark = pytest.mark.oracle


def window_model(outer, size, shift, weights):
    shape = tuple(outer) + (size,)
    return single_op_model("SignalWindow", [TensorDef(shape, "INT16"),
                                            TensorDef((size,), "INT16", data=weights)],
                           [TensorDef(shape, "INT16")], custom_options=options(shift=shift))


@given(st.data())
def test_window_matches_tflm(oracle, data):
    draw = data.draw
    outer = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    size = draw(st.integers(1, 96))
    shift = draw(st.integers(0, 24))
    rng = rng_of(draw)
    weights = int_array(rng, (size,), np.int16)
    model = window_model(outer, size, shift, weights)
    runs = [[int_array(rng, tuple(outer) + (size,), np.int16)] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"window {outer}x{size} shift {shift}")


def test_window_micro_speech_shape(oracle):
    rng = np.random.default_rng(3)
    weights = rng.integers(0, 4096, 480).astype(np.int16)
    model = window_model([1], 480, 12, weights)
    runs = [[int_array(rng, (1, 480), np.int16)] for _ in range(3)]
    compare_invokes(oracle, model, runs, context="window 480")
    mcu32_runs(model, runs)
