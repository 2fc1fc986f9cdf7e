"""SignalOverlapAdd (TFLM signal custom op) against TFLM: int16 (saturating) and float32
overlap-add with the buffer carried across invokes, and reset()."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle

TYPES = {"INT16": (7, np.int16), "FLOAT32": (0, np.float32)}


def overlap_add_model(type_name, outer, n_frames, frame_size, step):
    code, _ = TYPES[type_name]
    return single_op_model("SignalOverlapAdd", [TensorDef(tuple(outer) + (n_frames, frame_size), type_name)],
                           [TensorDef(tuple(outer) + (n_frames * step,), type_name)],
                           custom_options=options(T=code, frame_step=step))


@given(st.data(), st.booleans())
def test_overlap_add_matches_tflm(oracle, data, reset_between):
    draw = data.draw
    type_name = draw(st.sampled_from(sorted(TYPES)))
    outer = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    n_frames = draw(st.integers(1, 4))
    frame_size = draw(st.integers(1, 48))
    step = draw(st.integers(1, frame_size))
    rng = rng_of(draw)
    shape = tuple(outer) + (n_frames, frame_size)
    if type_name == "INT16":
        runs = [[int_array(rng, shape, np.int16)] for _ in range(3)]
    else:
        runs = [[rng.standard_normal(shape).astype(np.float32)] for _ in range(3)]
    compare_invokes(oracle, overlap_add_model(type_name, outer, n_frames, frame_size, step), runs,
                    reset_between=reset_between, context=f"overlap add {type_name} {shape} step {step}")
