"""The fixed-point primitives: fast forms equal the literal gemmlowp compositions."""
import numpy as np
from hypothesis import given, settings, strategies as st

from kernels.internal.quantization import (INT32_MAX, INT32_MIN, _multiply_by_quantized_multiplier_generic, wrap_int32,
                                  multiply_by_quantized_multiplier, quantize_multiplier,
                                  round_half_away, rounding_divide_by_pot,
                                  saturating_rounding_doubling_high_mul)

EDGES = np.array([INT32_MIN, INT32_MIN + 1, -(1 << 30), -3, -2, -1, 0, 1, 2, 3, 1 << 30,
                  INT32_MAX - 1, INT32_MAX], dtype=np.int64)


def _srdhm_scalar(a, b):
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    s = ab + nudge
    return s // (1 << 31) if s >= 0 else -((-s) // (1 << 31))   # C++ truncation


def _rdbpot_scalar(x, e):
    mask = (1 << e) - 1
    rem = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if rem > threshold else 0)


@settings(max_examples=300)
@given(st.lists(st.integers(INT32_MIN, INT32_MAX), min_size=1, max_size=20),
       st.integers(0, INT32_MAX), st.integers(-31, 7))
def test_fast_requantization_equals_literal_composition(xs, m, shift):
    x = np.concatenate([np.array(xs, np.int64), EDGES])
    fast = multiply_by_quantized_multiplier(x, m, shift)
    slow = _multiply_by_quantized_multiplier_generic(x, m, shift)
    assert fast.tolist() == slow.tolist()
    # per-channel form
    ms = np.full(x.shape, m, np.int64)
    ss = np.full(x.shape, shift, np.int64)
    assert multiply_by_quantized_multiplier(x, ms, ss).tolist() == slow.tolist()


@settings(max_examples=300)
@given(st.integers(1, INT32_MAX), st.integers(1, 31), st.integers(-40, 40))
def test_scalar_requantization_around_the_sign_change(m, e, around):
    """The scalar fast form corrects the rounding where SRDHM turns negative (x*m < -2^30):
    inputs on both sides of that threshold, and the int32 ends, against the scalar C++
    transcriptions above."""
    threshold = -((1 << 30) // m)
    xs = [v for v in (threshold + around, threshold + around // 4, INT32_MIN, INT32_MAX,
                      (1 << 30) // m + around) if INT32_MIN <= v <= INT32_MAX]
    got = multiply_by_quantized_multiplier(np.array(xs, np.int64), m, -e).tolist()
    assert got == [_rdbpot_scalar(_srdhm_scalar(x, m), e) for x in xs]


@settings(max_examples=300)
@given(st.integers(INT32_MIN, INT32_MAX), st.integers(INT32_MIN, INT32_MAX), st.integers(0, 31))
def test_primitives_match_scalar_definitions(a, b, e):
    assert int(saturating_rounding_doubling_high_mul(a, b)) == _srdhm_scalar(a, b)
    assert int(rounding_divide_by_pot(a, e)) == _rdbpot_scalar(a, e)


def test_round_half_away_is_std_round():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.0, -0.0], np.float32)
    assert round_half_away(x).tolist() == [1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 0.0, 2.0, -0.0]


def test_quantize_multiplier_known_values():
    assert quantize_multiplier(0.5) == (1 << 30, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert quantize_multiplier(0.0) == (0, 0)
    m, s = quantize_multiplier(0.0123)
    assert 1 << 30 <= m < 1 << 31 and abs(m * 2.0 ** (s - 31) - 0.0123) < 1e-9
    assert quantize_multiplier(1e-12) == (0, 0)   # flushed: shift below -31


@settings(max_examples=300)
@given(st.lists(st.one_of(st.floats(min_value=-4.0, max_value=4.0),
                          st.floats(min_value=1e-14, max_value=1e6),
                          st.sampled_from([0.5, 1.0, 0.75, 1 - 2.0 ** -33, 2.0 ** -32, 2.0 ** -31,
                                           0.0, -0.5, -1 + 2.0 ** -33])),
                min_size=1, max_size=16))
def test_quantize_multiplier_array_equals_the_scalar_form(reals):
    from kernels.internal.quantization import quantize_multiplier_array
    mult, shift = quantize_multiplier_array(np.array(reals))
    assert list(zip(mult.tolist(), shift.tolist())) == [quantize_multiplier(r) for r in reals]


@settings(max_examples=300)
@given(st.integers(1, 16), st.integers(0, 2**32 - 1), st.booleans(), st.booleans(),
       st.integers(-128, 127))
def test_channel_requantizer_equals_the_literal_output_stage(channels, seed, with_bias, small, offset):
    from kernels.internal.quantization import ChannelRequantizer, quantize_multiplier_array
    rng = np.random.default_rng(seed)
    bound = 2**18 if small else 2**30
    real = rng.uniform(1e-5, 0.99 if small else 40.0, channels)
    mult, shift = quantize_multiplier_array(real)
    bias = rng.integers(-2**16, 2**16, channels) if with_bias else None
    acc = rng.integers(-bound, bound, (channels, 50))
    acc[:, :4] = [[-1, 0, 1, -bound]] * channels
    req = ChannelRequantizer(mult, shift, bias, offset, -128, 127, False, bound)
    got = np.asarray(req(acc.astype(np.float64 if small else np.int64))).astype(np.int64)
    x = acc + (0 if bias is None else bias[:, None])
    want = _multiply_by_quantized_multiplier_generic(
        wrap_int32(x), mult[:, None].astype(np.int64), shift[:, None].astype(np.int64))
    want = np.clip(want + offset, -128, 127)
    assert got.tolist() == want.tolist()
    if small:
        assert req.float64 is not None


@settings(max_examples=200)
@given(st.integers(1, 8), st.integers(0, 2**32 - 1), st.booleans(), st.integers(-128, 127),
       st.integers(0, 3), st.sampled_from(["float32", "float64", "int64"]))
def test_channel_requantizer_clamp_at_or_above_the_offset(channels, seed, with_bias, offset,
                                                          above, dtype):
    """act_min >= the output offset (ReLU / ReLU6 ranges) lets the requantizer skip the
    negative-rounding correction: every accumulator around each channel's sign change of
    the high-mul (and random ones) against the literal gemmlowp composition."""
    from kernels.internal.quantization import ChannelRequantizer, quantize_multiplier_array
    rng = np.random.default_rng(seed)
    bound = 2**20 if dtype == "float32" else 2**30
    real = rng.uniform(1e-4, 0.9, channels)
    mult, shift = quantize_multiplier_array(real)
    bias = rng.integers(-2**12, 2**12, channels) if with_bias else None
    act_min = min(offset + above, 127)
    acc = rng.integers(-bound, bound, (channels, 600))
    for ch in range(channels):
        b = 0 if bias is None else int(bias[ch])
        turn = -((1 << 30) // int(mult[ch])) - b           # high-mul < 0 below this accumulator
        around = np.arange(turn - 250, turn + 250)
        acc[ch, :500] = np.clip(around, -bound, bound)
    req = ChannelRequantizer(mult, shift, bias, offset, act_min, 127, False, bound)
    got = np.asarray(req(acc.astype(dtype))).astype(np.int64)
    x = acc + (0 if bias is None else bias[:, None])
    want = _multiply_by_quantized_multiplier_generic(
        wrap_int32(x), mult[:, None].astype(np.int64), shift[:, None].astype(np.int64))
    want = np.clip(want + offset, act_min, 127)
    assert got.tolist() == want.tolist()
