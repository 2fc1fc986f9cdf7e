"""SignalDelay (TFLM signal custom op) against TFLM: per-row delay line across invokes,
delays shorter and longer than a frame, reset()."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


@given(st.data(), st.booleans())
def test_delay_matches_tflm(oracle, data, reset_between):
    draw = data.draw
    outer = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    frame = draw(st.integers(1, 32))
    delay = draw(st.integers(0, 80))
    rng = rng_of(draw)
    shape = tuple(outer) + (frame,)
    model = single_op_model("SignalDelay", [TensorDef(shape, "INT16")], [TensorDef(shape, "INT16")],
                            custom_options=options(delay_length=delay))
    runs = [[int_array(rng, shape, np.int16)] for _ in range(4)]
    compare_invokes(oracle, model, runs, reset_between=reset_between,
                    context=f"delay {shape} by {delay}")
