"""SignalPCAN (TFLM signal custom op) against TFLM: gain from the int16 lookup table's
piecewise polynomial of the noise estimate, SNR shift, shrink curve."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


def pcan_model(n, lut, snr_shift, noise_constant=None):
    noise = TensorDef((n,), "UINT32", data=noise_constant)
    return single_op_model("SignalPCAN", [TensorDef((n,), "UINT32"), noise,
                                          TensorDef(lut.shape, "INT16", data=lut)],
                           [TensorDef((n,), "UINT32")], custom_options=options(snr_shift=snr_shift))


@given(st.data())
def test_pcan_matches_tflm(oracle, data):
    draw = data.draw
    n = draw(st.integers(1, 48))
    snr_shift = draw(st.integers(0, 40))
    rng = rng_of(draw)
    if draw(st.booleans()):
        lut = int_array(rng, (125,), np.int16)
    else:   # gains of a plausible size (positive, < 2^15)
        lut = rng.integers(0, 32768, 125).astype(np.int16)
    model = pcan_model(n, lut, snr_shift)
    runs = [[int_array(rng, (n,), np.uint32), int_array(rng, (n,), np.uint32)] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"pcan {n}ch shift {snr_shift}")


def test_pcan_micro_speech_table(oracle):
    from tests.helpers import model_path
    from micro_runtime import load_model
    m = load_model(model_path("audio_preprocessor_int8"))
    lut = next(t.data for t in m.main.tensors if t.name == "signal_pcan/Const")
    rng = np.random.default_rng(5)
    noise = np.concatenate([np.arange(0, 40), [1 << k for k in range(32)],
                            rng.integers(0, 1 << 32, 28, dtype=np.uint64)]).astype(np.uint32)
    x = int_array(rng, (noise.size,), np.uint32)
    compare_invokes(oracle, pcan_model(noise.size, np.asarray(lut, np.int16), 6), [[x, noise]],
                    context="pcan micro_speech lut")
