"""SignalFilterBankLog (TFLM signal custom op) against TFLM: Log32's table interpolation,
correction-bit shift (uint32 wrap), output scale (uint32 wrap), cap at 32767."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


def log_model(n, correction_bits, output_scale):
    return single_op_model("SignalFilterBankLog", [TensorDef((n,), "UINT32")],
                           [TensorDef((n,), "INT16")],
                           custom_options=options(input_correction_bits=correction_bits,
                                                  output_scale=output_scale))


@given(st.data())
def test_filter_bank_log_matches_tflm(oracle, data):
    draw = data.draw
    n = draw(st.integers(1, 64))
    bits = draw(st.integers(0, 12))
    scale = draw(st.one_of(st.integers(0, 1 << 12), st.integers(0, (1 << 31) - 1), st.integers(-(1 << 31), -1)))
    rng = rng_of(draw)
    runs = [[int_array(rng, (n,), np.uint32)] for _ in range(2)]
    compare_invokes(oracle, log_model(n, bits, scale), runs, context=f"log {n} bits {bits} scale {scale}")


def test_filter_bank_log_every_octave(oracle):
    x = np.array([0, 1, 2, 3] + [(1 << k) + d for k in range(1, 32) for d in (0, 1, 511, (1 << k) - 1)],
                 np.uint64).astype(np.uint32)
    compare_invokes(oracle, log_model(x.size, 0, 64), [[x]], context="log octaves")
