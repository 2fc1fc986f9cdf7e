"""SignalFilterBank (TFLM signal custom op) against TFLM: uint32 spectrum into uint64 mel
channels with int16 weights/unweights (negative weights wrap modulo 2^64 as in TFLM)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


def filter_bank_model(rng, num_channels, spectrum, n_weights, negative_weights):
    widths = rng.integers(0, 9, size=num_channels + 1)
    widths = np.minimum(widths, spectrum)
    freq = np.array([rng.integers(0, spectrum - w + 1) for w in widths])
    total = int(widths.sum())
    n_weights = max(n_weights, total, 1)
    wstart = np.array([rng.integers(0, n_weights - w + 1) for w in widths])
    lo = -32768 if negative_weights else 0
    weights = rng.integers(lo, 32768, n_weights).astype(np.int16)
    unweights = rng.integers(lo, 32768, n_weights).astype(np.int16)
    tables = [weights, unweights, freq.astype(np.int16), wstart.astype(np.int16), widths.astype(np.int16)]
    return single_op_model(
        "SignalFilterBank",
        [TensorDef((spectrum,), "UINT32")] + [TensorDef(t.shape, "INT16", data=t) for t in tables],
        [TensorDef((num_channels,), "UINT64")], custom_options=options(num_channels=num_channels))


@given(st.data())
def test_filter_bank_matches_tflm(oracle, data):
    draw = data.draw
    num_channels = draw(st.integers(1, 40))
    spectrum = draw(st.integers(1, 260))
    n_weights = draw(st.integers(1, 320))
    negative = draw(st.booleans())
    rng = rng_of(draw)
    model = filter_bank_model(rng, num_channels, spectrum, n_weights, negative)
    runs = [[int_array(rng, (spectrum,), np.uint32)] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"filter bank {num_channels}ch {spectrum} bins")
