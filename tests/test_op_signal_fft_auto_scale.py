"""SignalFftAutoScale (TFLM signal custom op) against TFLM: scale bits from the running
int16 max-abs (including TFLM's -32768 behaviour) and the scaled frame."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


def auto_scale_model(n, out_n=None):
    return single_op_model("SignalFftAutoScale", [TensorDef((n,), "INT16")],
                           [TensorDef((out_n or n,), "INT16"), TensorDef((), "INT32")],
                           custom_options=options())


def _frame(rng, n, kind):
    if kind == "full":
        return int_array(rng, (n,), np.int16)
    if kind == "small":
        bound = int(rng.integers(0, 15))
        return rng.integers(-(1 << bound), (1 << bound), size=n).astype(np.int16)
    if kind == "zeros":
        return np.zeros(n, np.int16)
    # -32768 somewhere, then negative values rising, then anything
    x = rng.integers(-(1 << int(rng.integers(1, 15))), 1 << int(rng.integers(1, 15)), size=n).astype(np.int16)
    at = int(rng.integers(0, n))
    x[at] = -32768
    tail = np.sort(rng.integers(-32767, 0, size=n - at - 1))[: int(rng.integers(0, n - at))]
    x[at + 1:at + 1 + tail.size] = tail
    return x


@given(st.data())
def test_fft_auto_scale_matches_tflm(oracle, data):
    draw = data.draw
    n = draw(st.integers(1, 80))
    rng = rng_of(draw)
    kinds = [draw(st.sampled_from(["full", "small", "zeros", "min_then_rising"])) for _ in range(3)]
    runs = [[_frame(rng, n, k)] for k in kinds]
    compare_invokes(oracle, auto_scale_model(n), runs, context=f"auto scale {n} {kinds}")


def test_fft_auto_scale_edge_frames(oracle):
    frames = [[-32768, -5, 3, -2], [-32768, -5, -4, -10], [5, -32768], [-32768, -32768, -1],
              [0, 0, 0, 0], [1, -1, 0, 2], [-32767, 100, 0, 0], [-32768, 7, -9, 0]]
    runs = [[np.array((f + [0, 0, 0, 0])[:4], np.int16)] for f in frames]
    compare_invokes(oracle, auto_scale_model(4), runs, context="auto scale edges")
