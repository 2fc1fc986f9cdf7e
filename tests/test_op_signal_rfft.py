"""SignalRfft (TFLM signal custom op) against TFLM: kiss FFT in its int16 (FIXED_POINT 16),
int32 (FIXED_POINT 32) and float builds, radices 2/3/4/5, zero padding, several rows."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from kernels.internal.kiss_fft import supported_length
from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, mcu32_runs, options, rng_of

pytestmark = pytest.mark.oracle

TYPES = {"INT16": (7, np.int16), "INT32": (2, np.int32), "FLOAT32": (0, np.float32)}
LENGTHS = [n for n in range(4, 641, 2) if supported_length(n // 2)]


def rfft_model(type_name, fft_length, outer, input_length):
    code, _ = TYPES[type_name]
    return single_op_model("SignalRfft", [TensorDef(tuple(outer) + (input_length,), type_name)],
                           [TensorDef(tuple(outer) + (fft_length + 2,), type_name)],
                           custom_options=options(T=code, fft_length=fft_length))


def _signal(rng, type_name, shape):
    dtype = TYPES[type_name][1]
    if dtype == np.float32:
        scale = 10.0 ** rng.integers(-3, 4)
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    if rng.random() < 0.5:
        return int_array(rng, shape, dtype)
    bits = int(rng.integers(1, np.iinfo(dtype).bits))
    return rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), size=shape).astype(dtype)


@given(st.data())
def test_rfft_matches_tflm(oracle, data):
    draw = data.draw
    type_name = draw(st.sampled_from(sorted(TYPES)))
    fft_length = draw(st.sampled_from(LENGTHS))
    input_length = draw(st.integers(1, fft_length))
    outer = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    rng = rng_of(draw)
    model = rfft_model(type_name, fft_length, outer, input_length)
    runs = [[_signal(rng, type_name, tuple(outer) + (input_length,))] for _ in range(2)]
    compare_invokes(oracle, model, runs, context=f"rfft {type_name} {fft_length} {outer}x{input_length}")


@pytest.mark.parametrize("type_name", sorted(TYPES))
def test_rfft_512_of_480(oracle, type_name):
    """The micro_speech front end's transform (480 samples padded to 512)."""
    rng = np.random.default_rng(7)
    model = rfft_model(type_name, 512, [], 480)
    runs = [[_signal(rng, type_name, (480,))] for _ in range(3)]
    compare_invokes(oracle, model, runs, context=f"rfft {type_name} 512")
    mcu32_runs(model, runs)


def test_rfft_refuses_lengths_tflm_cannot_transform():
    from micro_runtime import MicroInterpreter
    from micro_runtime.errors import MicroRuntimeError
    for n in (14, 2, 9):   # radix 7, the 1-point sub-FFT, odd length
        model = rfft_model("INT16", n, [], 2)
        with pytest.raises(MicroRuntimeError):
            MicroInterpreter(model, arena_size=1 << 16, error_reporter=lambda m: None).allocate_tensors()


def _extreme_signals(rng, length):
    """Inputs at the int16 limits, where the 16-bit build's stored sums wrap and its
    int32 products come closest to overflowing."""
    lo, hi = -32768, 32767
    alternating = np.where(np.arange(length) % 2 == 0, lo, hi)
    impulse = np.zeros(length)
    impulse[0] = lo
    square = np.where((np.arange(length) // max(1, length // 8)) % 2 == 0, lo, hi)
    return [np.full(length, lo), np.full(length, hi), alternating, -alternating - 1, impulse, square,
            rng.choice([lo, hi], length), rng.choice([lo, hi, 0, -1], length)]


@pytest.mark.parametrize("fft_length", [6, 20, 96, 250, 480, 512])
def test_rfft_int16_at_the_limits(oracle, fft_length):
    """The 16-bit build holds its scalars in int16 arrays and takes products in int32
    (kernels/internal/kiss_fft.py): inputs at the limits of int16 for radices 2, 3, 4, 5."""
    rng = np.random.default_rng(fft_length)
    model = rfft_model("INT16", fft_length, [], fft_length)
    runs = [[x.astype(np.int16)] for x in _extreme_signals(rng, fft_length)]
    compare_invokes(oracle, model, runs, context=f"rfft INT16 {fft_length} at the limits")
