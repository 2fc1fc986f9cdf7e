"""Shared integer helpers of the signal-library kernels."""
import numpy as np
from hypothesis import given, strategies as st

from kernels.internal.signal_common import wrap16, wrap32

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)


@given(st.lists(INT64, min_size=1, max_size=50))
def test_wraps_are_twos_complement_conversions(values):
    """The cast-based wraps equal the conversion to int16 / int32 written on Python ints."""
    x = np.array(values + [-(1 << 63), (1 << 63) - 1, 32767, 32768, -32769, (1 << 31), -(1 << 31) - 1],
                 dtype=np.int64)
    want16 = [((v + (1 << 15)) % (1 << 16)) - (1 << 15) for v in x.tolist()]
    want32 = [((v + (1 << 31)) % (1 << 32)) - (1 << 31) for v in x.tolist()]
    assert wrap16(x).tolist() == want16 and wrap16(x).dtype == np.int64
    assert wrap32(x).tolist() == want32 and wrap32(x).dtype == np.int64
    assert [int(wrap16(np.int64(v))) for v in x.tolist()] == want16
    assert [wrap16(v) for v in x.tolist()] == want16


@given(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=50))
def test_bit_length_is_pythons(values):
    """bit_length (float exponent + correction) equals int.bit_length, including the values
    just below powers of two that float64 rounds up."""
    from kernels.internal.signal_common import bit_length
    edges = [0, 1, 2, 3] + [(1 << k) + d for k in range(1, 64) for d in (-1, 0, 1)]
    edges += [(1 << 64) - 1, (1 << 64) - 2, (1 << 64) - 1025]
    x = np.array(values + edges, dtype=np.uint64)
    assert bit_length(x, 64).tolist() == [v.bit_length() for v in x.tolist()]
