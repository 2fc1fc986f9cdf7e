"""SignalFilterBankSpectralSubtraction (TFLM signal custom op) against TFLM: the noise
estimate carried across invokes (persistent state), clamping, alternate smoothing for odd
channels, reset()."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle

MICRO_SPEECH = dict(alternate_one_minus_smoothing=15401, alternate_smoothing=983, clamping=False,
                    min_signal_remaining=819, num_channels=40, one_minus_smoothing=15975,
                    smoothing=409, smoothing_bits=10, spectral_subtraction_bits=14)


def subtraction_model(opts, n_noise=None):
    n = opts["num_channels"]
    return single_op_model("SignalFilterBankSpectralSubtraction", [TensorDef((n,), "UINT32")],
                           [TensorDef((n,), "UINT32"), TensorDef((n_noise or n,), "UINT32")],
                           custom_options=options(**opts))


@st.composite
def subtraction_options(draw):
    bits = draw(st.integers(0, 20))
    one = 1 << bits
    smoothing = draw(st.integers(0, one))
    alt = draw(st.integers(0, one))
    exact = draw(st.booleans())
    return dict(num_channels=draw(st.integers(1, 48)), spectral_subtraction_bits=bits,
                smoothing=smoothing, alternate_smoothing=alt,
                one_minus_smoothing=one - smoothing if exact else draw(st.integers(0, 1 << 31)),
                alternate_one_minus_smoothing=one - alt if exact else draw(st.integers(0, 1 << 31)),
                min_signal_remaining=draw(st.integers(0, one)),
                smoothing_bits=draw(st.integers(0, 16)), clamping=draw(st.booleans()))


@given(st.data())
def test_spectral_subtraction_matches_tflm(oracle, data):
    opts = data.draw(subtraction_options())
    rng = rng_of(data.draw)
    n = opts["num_channels"]
    runs = [[int_array(rng, (n,), np.uint32)] for _ in range(4)]
    compare_invokes(oracle, subtraction_model(opts), runs, context=f"spectral subtraction {opts}")


@pytest.mark.parametrize("reset_between", [False, True])
def test_spectral_subtraction_micro_speech_state(oracle, reset_between):
    rng = np.random.default_rng(11)
    runs = [[rng.integers(0, 1 << int(rng.integers(8, 20)), 40).astype(np.uint32)] for _ in range(6)]
    compare_invokes(oracle, subtraction_model(MICRO_SPEECH), runs, reset_between=reset_between,
                    context=f"micro_speech spectral subtraction reset={reset_between}")
