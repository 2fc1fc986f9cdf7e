"""SignalIrfft (TFLM signal custom op) against TFLM: kiss_fftri in its int16, int32 and
float builds, several rows."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from kernels.internal.kiss_fft import supported_length
from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, mcu32_runs, options, rng_of

pytestmark = pytest.mark.oracle

TYPES = {"INT16": (7, np.int16), "INT32": (2, np.int32), "FLOAT32": (0, np.float32)}
LENGTHS = [n for n in range(4, 641, 2) if supported_length(n // 2)]


def irfft_model(type_name, fft_length, outer):
    code, _ = TYPES[type_name]
    return single_op_model("SignalIrfft", [TensorDef(tuple(outer) + (fft_length + 2,), type_name)],
                           [TensorDef(tuple(outer) + (fft_length,), type_name)],
                           custom_options=options(T=code, fft_length=fft_length))


def _bins(rng, type_name, shape):
    dtype = TYPES[type_name][1]
    if dtype == np.float32:
        return (rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 4)).astype(np.float32)
    return int_array(rng, shape, dtype)


@given(st.data())
def test_irfft_matches_tflm(oracle, data):
    draw = data.draw
    type_name = draw(st.sampled_from(sorted(TYPES)))
    fft_length = draw(st.sampled_from(LENGTHS))
    outer = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    rng = rng_of(draw)
    model = irfft_model(type_name, fft_length, outer)
    runs = [[_bins(rng, type_name, tuple(outer) + (fft_length + 2,))] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"irfft {type_name} {fft_length} {outer}")


@pytest.mark.parametrize("type_name", sorted(TYPES))
def test_irfft_512(oracle, type_name):
    rng = np.random.default_rng(9)
    model = irfft_model(type_name, 512, [2])
    runs = [[_bins(rng, type_name, (2, 514))] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"irfft {type_name} 512")
    mcu32_runs(model, runs)


@pytest.mark.parametrize("fft_length", [6, 20, 96, 250, 480, 512])
def test_irfft_int16_at_the_limits(oracle, fft_length):
    """Bins at the int16 limits through the 16-bit build's inverse (int16 scalars, int32
    products: kernels/internal/kiss_fft.py)."""
    rng = np.random.default_rng(fft_length)
    model = irfft_model("INT16", fft_length, [])
    size = fft_length + 2
    lo, hi = -32768, 32767
    runs = [[np.full(size, v, np.int16)] for v in (lo, hi)]
    runs += [[np.where(np.arange(size) % 2 == 0, lo, hi).astype(np.int16)]]
    runs += [[rng.choice([lo, hi], size).astype(np.int16)] for _ in range(3)]
    runs += [[rng.choice([lo, hi, 0, -1], size).astype(np.int16)] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"irfft INT16 {fft_length} at the limits")
