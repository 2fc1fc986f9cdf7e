"""SignalFilterBankSquareRoot (TFLM signal custom op) against TFLM: TFLM's 32/64-bit
integer square roots with their rounding, shifted by the scale-bits input."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.helpers import TensorDef, single_op_model
from tests.signal_helpers import compare_invokes, int_array, options, rng_of

pytestmark = pytest.mark.oracle


def sqrt_model(n, constant_bits=None):
    bits = TensorDef((), "INT32", data=None if constant_bits is None else np.array(constant_bits, np.int32))
    return single_op_model("SignalFilterBankSquareRoot", [TensorDef((n,), "UINT64"), bits],
                           [TensorDef((n,), "UINT32")], custom_options=options())


@given(st.data())
def test_square_root_matches_tflm(oracle, data):
    draw = data.draw
    n = draw(st.integers(1, 64))
    rng = rng_of(draw)
    runs = [[int_array(rng, (n,), np.uint64), np.array(draw(st.integers(0, 31)), np.int32)]
            for _ in range(2)]
    compare_invokes(oracle, sqrt_model(n), runs, context=f"sqrt {n}")


def test_square_root_edges(oracle):
    vals = [0, 1, 2, 3, 4, 0xFFFE0001, 0xFFFE0000, 0xFFFFFFFF, 1 << 32, (1 << 32) + 1,
            (1 << 64) - 1, (0xFFFFFFFF ** 2), 0xFFFFFFFF ** 2 + 1, 0xFFFFFFFF ** 2 - 1, (1 << 63),
            (1 << 62) + 12345, 65535 ** 2, 65536 ** 2 - 1]
    x = np.array(vals, np.uint64)
    compare_invokes(oracle, sqrt_model(x.size, 0), [[x]], context="sqrt edges")


def test_root_at_squares_and_rounding_thresholds():
    """sqrt64 (float root + exact integer correction) against Python's math.isqrt and the
    documented rounding (up when the remainder exceeds the root, except at 0xFFFF for
    values below 2^32 and 0xFFFFFFFF above), on both sides of every kind of boundary."""
    import math
    from kernels.signal.filter_bank_square_root import sqrt64
    roots = [1, 2, 3, 255, 256, 4095, 65534, 65535, 65536, 2**20 + 7, 2**31 - 1, 2**31,
             2**32 - 2, 2**32 - 1]
    values = {1, 2, 3, 2**32 - 1, 2**32, 2**32 + 1, 2**64 - 1, 2**64 - 2}
    for r in roots:
        for base in (r * r, r * r + r):
            values.update(v for v in range(base - 3, base + 4) if 0 <= v < 2**64)
    values = sorted(values)
    got = sqrt64(np.array(values, dtype=np.uint64)).tolist()
    for v, g in zip(values, got):
        root = math.isqrt(v)
        cap = 0xFFFF if v < 2**32 else 0xFFFFFFFF
        want = root + 1 if v - root * root > root and root != cap else root
        assert g == want, (v, g, want)
