"""kernels.internal.matmul.float32_sequential_matmul: its two ways of summing -- all
products at once through np.add.accumulate (small sizes) and one k-slice at a time (the
loop the float kernels' oracle tests check against TFLM) -- give the same bits, NaN
payloads and signs, infinities, signed zeros and subnormals included."""
import numpy as np
from hypothesis import given, settings, strategies as st

from kernels.internal import matmul
from tests.conftest import EXAMPLES

SPECIAL_BITS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                0x7F800001, 0xFF800001, 0x7FA00000, 0x00000001, 0x80000001, 0x7F7FFFFF,
                0xFF7FFFFF, 0x3F800000, 0xBF800000]


def _array(rng, shape, special_share):
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 30)).astype(np.float32)
    bits = x.view(np.uint32)
    mask = rng.random(shape) < special_share
    bits[mask] = rng.choice(np.array(SPECIAL_BITS, np.uint32), int(mask.sum()))
    return x


def _by_slices(a, b):
    saved = matmul.SEQUENTIAL_AT_ONCE
    matmul.SEQUENTIAL_AT_ONCE = -1
    try:
        return matmul.float32_sequential_matmul(a, b)
    finally:
        matmul.SEQUENTIAL_AT_ONCE = saved


@settings(max_examples=max(EXAMPLES, 200), deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 5), st.integers(0, 24), st.integers(1, 5),
       st.lists(st.integers(1, 3), max_size=2), st.sampled_from([0.0, 0.05, 0.3]))
def test_at_once_equals_by_slices(seed, m, k, n, lead, special_share):
    rng = np.random.default_rng(seed)
    a = _array(rng, tuple(lead) + (m, k), special_share)
    b = _array(rng, (k, n), special_share)
    assert m * k * n * np.prod(lead, dtype=int) <= matmul.SEQUENTIAL_AT_ONCE
    assert m * n * np.prod(lead, dtype=int) <= matmul.SEQUENTIAL_SLAB
    with np.errstate(all="ignore"):
        fast = matmul.float32_sequential_matmul(a, b)
        slow = _by_slices(a, b)
    assert fast.shape == slow.shape and fast.dtype == np.float32
    assert fast.tobytes() == slow.tobytes()


def test_zero_start_and_empty_depth():
    """The C loop starts from +0.0: a sum of -0.0 products is +0.0; no terms gives +0.0."""
    a = np.full((2, 3), -0.0, np.float32)
    b = np.ones((3, 2), np.float32)
    out = matmul.float32_sequential_matmul(a, b)
    assert out.tobytes() == np.zeros((2, 2), np.float32).tobytes()
    assert matmul.float32_sequential_matmul(np.ones((2, 0), np.float32),
                                            np.ones((0, 3), np.float32)).tobytes() == \
        np.zeros((2, 3), np.float32).tobytes()



@settings(max_examples=max(EXAMPLES, 200), deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 40), st.integers(0, 9), st.integers(1, 9),
       st.sampled_from([0.0, 0.05, 0.3]))
def test_column_layout_equals_row_loop(seed, m, k, n, special_share):
    """The (n, m) layout used when m > n gives the row loop's bits (the loop the float
    kernels' oracle tests check against TFLM): signed zeros, infinities and subnormals
    included, and the first step's ``p + 0`` equals ``0 + p``; float32_sequential_matmul
    takes sums ending in NaN (whose payload follows numpy's operand order) from the row
    loop."""
    rng = np.random.default_rng(seed)
    m = max(m, n + 1)
    a = _array(rng, (m, k), special_share)
    b = _array(rng, (k, n), special_share)
    with np.errstate(all="ignore"):
        rows = matmul._sequential_rows(a, b, (m, n))
        columns = np.array(matmul._sequential_columns(a, b))
        chosen = matmul.float32_sequential_matmul(a, b) if m * n > matmul.SEQUENTIAL_SLAB \
            else _by_slices(a, b)
    finite = ~np.isnan(rows)
    assert np.isnan(columns).tolist() == np.isnan(rows).tolist()
    assert columns[finite].tobytes() == rows[finite].tobytes()
    assert np.array(chosen).tobytes() == rows.tobytes()
