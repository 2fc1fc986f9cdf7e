"""The fast integer output stages against a plain transcription of TFLM's integer routines,
on accumulators placed at the rounding boundaries (issue 17).

The reference below is written from TFLM's / gemmlowp's definitions on Python ints, one
value at a time, independently of kernels/internal/quantization.py:

* SaturatingRoundingDoublingHighMul: (a*b + nudge) / 2^31 truncated toward zero, the nudge
  2^30 for a non-negative product and 1 - 2^30 otherwise; INT32_MIN * INT32_MIN saturates;
* RoundingDivideByPOT: arithmetic shift plus one when the masked remainder exceeds half the
  mask (plus one for negative x);
* MultiplyByQuantizedMultiplier (int32): x * 2^left wrapped to int32, SRDHM, then
  RoundingDivideByPOT by the right shift;
* MultiplyByQuantizedMultiplier (int64 x): multiplier reduced to 16 bits (rounded, 0x7FFF at
  the top), (x * reduced + 2^(14 - shift)) >> (15 - shift), narrowed to int32;
* QuantizeMultiplier: frexp, round half away from zero of q * 2^31, carry at 2^31, shifts
  below -31 flush to zero.

Accumulators are placed, for every (multiplier, shift), where the result changes: for each
target quotient q (a RoundingDivideByPOT tie k * 2^r + 2^(r-1), one below and one above it,
for a spread of k), the first accumulator whose SRDHM reaches q, and its neighbours; for
left shifts, the accumulators around the int32 wrap of x * 2^left. Shifts -31..+30,
multipliers 2^30, 2^30 + 1, 2^31 - 2, 2^31 - 1 and random ones in between.

Case counts (``python -m tests.test_edge_requant`` prints them; 2026-11-23):
  test_mbqm_fast_forms_at_boundaries                  171,942 (57,314 accumulators x 3 forms)
  test_channel_requantizer_int32_boundaries[right]    475,590 (7 variants x 2 layouts)
  test_channel_requantizer_int32_boundaries[all]      573,140
  test_channel_requantizer_float64_plan               676,044 (shifts 0..-18, 2 dtypes, 2 layouts)
  test_channel_requantizer_int64_boundaries           436,450 (shifts -31..14)
  test_quantize_multiplier_matches_reference            7,618
  test_kernel_output_stage_at_boundaries_reference  11,059,200 outputs: FC / CONV_2D /
      DEPTHWISE_CONV_2D / TRANSPOSE_CONV, int8 (6,144 each) and int16 (1,572,864 each),
      per-tensor and per-channel, each channel sweeping 256 (int8) or 65536 (int16)
      consecutive accumulators centred on a boundary
  test_kernel_output_stage_at_boundaries_tflm: the same models (2 seeds each) run by TFLM,
      equal to the reference and to us.
"""
from __future__ import annotations

import math
from typing import Dict, List, Tuple

import numpy as np
import pytest

from kernels.internal.quantization import (ChannelRequantizer, _multiply_by_quantized_multiplier_generic,
                                           multiply_by_quantized_multiplier,
                                           multiply_by_quantized_multiplier_64, quantize_multiplier,
                                           quantize_multiplier_array)
from tests.helpers import TensorDef, run_ours, single_op_model

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

#: cases run per test, filled in as the tests run (reported by ``__main__``)
CASE_COUNTS: Dict[str, int] = {}


# ------------------------------------------------------------------ the reference
def ref_wrap32(x: int) -> int:
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def ref_srdhm(a: int, b: int) -> int:
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    num = ab + nudge
    quotient = abs(num) // (1 << 31)          # C++ division truncates toward zero
    return quotient if num >= 0 else -quotient


def ref_rdbp(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def ref_mbqm(x: int, multiplier: int, shift: int) -> int:
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    return ref_rdbp(ref_srdhm(ref_wrap32(x * (1 << left)), multiplier), right)


def ref_mbqm64(x: int, multiplier: int, shift: int) -> int:
    reduced = (multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF
    total_shift = 15 - shift
    result = (x * reduced + (1 << (total_shift - 1))) >> total_shift
    return ref_wrap32(result)


def ref_quantize_multiplier(real: float) -> Tuple[int, int]:
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    scaled = q * 2.0 ** 31
    fixed = int(math.floor(abs(scaled) + 0.5)) * (1 if scaled >= 0 else -1)   # std::round
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return fixed, shift


# ----------------------------------------------------------- boundary accumulators
MULTIPLIERS = (1 << 30, (1 << 30) + 1, (1 << 31) - 2, (1 << 31) - 1, 1234567891, 1462485049, 2000000011)
SHIFTS = tuple(range(-31, 31))
#: output values (quotients of the final rounding) around which boundaries are placed
TARGET_QUOTIENTS = (0, 1, -1, 2, -2, 5, -5, 63, -64, 127, -128, 128, -129, 1000, -1000,
                    32767, -32768, 1 << 20, -(1 << 20), (1 << 30) - 1, -(1 << 30))


def boundary_accumulators(multiplier: int, shift: int, lo: int = INT32_MIN, hi: int = INT32_MAX,
                          quotients=TARGET_QUOTIENTS) -> List[int]:
    """int32 accumulators at the rounding boundaries of MultiplyByQuantizedMultiplier."""
    out = {0, 1, -1, lo, hi, lo + 1, hi - 1}
    left = max(shift, 0)
    right = max(-shift, 0)
    for k in quotients:
        if right:
            base = k << right
            targets = [base + (1 << (right - 1)) + d for d in (-1, 0, 1)] + [base - 1, base, base + 1]
        else:
            targets = [k - 1, k, k + 1]
        for q in targets:
            # smallest x' with floor((x' * m + 2^30) / 2^31) >= q, then x = x' / 2^left
            xp = -((-(q * (1 << 31) - (1 << 30))) // max(multiplier, 1))
            for cand in (xp >> left, (xp >> left) + 1, (xp >> left) - 1, (xp >> left) + 2, (xp >> left) - 2):
                if lo <= cand <= hi:
                    out.add(cand)
    if left:
        edge = 1 << (31 - left)          # x * 2^left wraps from here on
        for e in (edge, -edge):
            for d in (-2, -1, 0, 1, 2):
                if lo <= e + d <= hi:
                    out.add(e + d)
    return sorted(out)


def _boundary_table(lo: int = INT32_MIN, hi: int = INT32_MAX, shifts=SHIFTS, multipliers=MULTIPLIERS):
    """[(multiplier, shift, accumulators)] for every combination."""
    return [(m, s, boundary_accumulators(m, s, lo, hi)) for s in shifts for m in multipliers]


# --------------------------------------------------------------------- unit tests
def test_reference_matches_known_values():
    """The reference itself, on values worked out by hand from the definitions (the issue's
    accumulator -88337, multiplier 1462485049, shift -9 gives -117; SRDHM ties)."""
    assert ref_mbqm(-88337, 1462485049, -9) == -117
    assert ref_mbqm(-88337, 1462485078, -9) == -118
    assert ref_srdhm(1 << 30, 1 << 30) == 1 << 29
    assert ref_srdhm(INT32_MIN, INT32_MIN) == INT32_MAX
    assert ref_srdhm(-1, 1 << 30) == 0                    # -0.5 rounds away: (-2^30 + 1 - 2^30) / 2^31 -> 0
    assert ref_srdhm(-3, 1 << 30) == -1                   # -1.5 -> -1 (truncation of -1.99..)
    assert ref_rdbp(3, 1) == 2 and ref_rdbp(-3, 1) == -2 and ref_rdbp(-2, 1) == -1
    assert ref_rdbp(5, 2) == 1 and ref_rdbp(6, 2) == 2 and ref_rdbp(-6, 2) == -2 and ref_rdbp(-5, 2) == -1
    assert ref_quantize_multiplier(0.5) == (1 << 30, 0)
    assert ref_quantize_multiplier(1.0) == (1 << 30, 1)


def test_mbqm_fast_forms_at_boundaries():
    """multiply_by_quantized_multiplier's scalar-constant fast form, its per-channel array
    form, and the literal composition, on every boundary accumulator of every
    (multiplier, shift); ~21,000 accumulators x 3 paths."""
    count = 0
    for m, s, xs in _boundary_table():
        x = np.array(xs, dtype=np.int64)
        expected = np.array([ref_mbqm(v, m, s) for v in xs], dtype=np.int64)
        got_scalar = multiply_by_quantized_multiplier(x, m, s)
        got_array = multiply_by_quantized_multiplier(x, np.full(x.shape, m), np.full(x.shape, s))
        got_generic = _multiply_by_quantized_multiplier_generic(x, m, s)
        for name, got in (("scalar", got_scalar), ("array", got_array), ("generic", got_generic)):
            bad = np.nonzero(np.asarray(got) != expected)[0]
            assert not len(bad), (f"{name} form, m={m} shift={s}: x={xs[bad[0]]} gives "
                                  f"{np.asarray(got)[bad[0]]}, TFLM {expected[bad[0]]}")
        count += 3 * len(xs)
    CASE_COUNTS["mbqm fast forms"] = count
    assert count > 40000


def _requant_variants():
    """(name, bias per channel or None, output offset, act range, acc bound or None)."""
    return [
        ("plain", None, 0, (INT32_MIN, INT32_MAX), None),
        ("bounded", None, 0, (INT32_MIN, INT32_MAX), "exact"),
        ("bias", "half", 0, (INT32_MIN, INT32_MAX), None),
        ("bias-bounded", "half", 0, (INT32_MIN, INT32_MAX), "exact"),
        ("bias-wrap", "wrap", 0, (INT32_MIN, INT32_MAX), None),
        ("int8-offset", "half", -37, (-128, 127), "exact"),
        ("int16-offset", None, 32767, (-32768, 32767), "exact"),
    ]


def _channel_matrix(table):
    """Accumulators of every (m, s) as a (C, N) matrix (rows padded with zeros) and the
    per-row multipliers, shifts and valid-length."""
    width = max(len(xs) for _, _, xs in table)
    acc = np.zeros((len(table), width), dtype=np.int64)
    for c, (_, _, xs) in enumerate(table):
        acc[c, :len(xs)] = xs
    m = np.array([t[0] for t in table], dtype=np.int64)
    s = np.array([t[1] for t in table], dtype=np.int64)
    return acc, m, s


def _check_requantizer(table, acc, m, s, name, bias_kind, offset, act, bound, dtype, layout):
    C, N = acc.shape
    if bias_kind is None:
        bias = None
        pre = acc
    elif bias_kind == "half":
        # the bias carries half of each target accumulator (and both parts stay in int32)
        bias = acc[:, :1] // 2
        bias = bias.reshape(-1)
        pre = acc - bias[:, None]
    else:
        # accumulator + bias overflows int32 and wraps back onto the target
        bias = np.where(acc[:, 0] >= 0, INT32_MAX - 5, INT32_MIN + 5).astype(np.int64)
        pre = acc - bias[:, None] + np.where(acc[:, :1] >= 0, 1 << 32, -(1 << 32))
        pre = np.clip(pre, INT32_MIN, INT32_MAX)
    if bound == "exact":
        acc_bound = float(np.abs(pre).max())
        if bias is not None and acc_bound + float(np.abs(bias).max()) >= 2.0 ** 31:
            return 0
    else:
        acc_bound = None
    rq = ChannelRequantizer(m, s, bias, offset, act[0], act[1], False, acc_bound)
    data = pre.astype(dtype)
    if dtype == np.float32 and np.abs(pre).max() >= 1 << 24:
        return 0
    if layout == "F":
        data = np.asfortranarray(data)
    got = np.asarray(rq(data))
    n = 0
    for c, (mm, ss, xs) in enumerate(table):
        b = 0 if bias is None else int(bias[c])
        for j in range(len(xs)):
            total = ref_wrap32(int(pre[c, j]) + b)
            want = min(max(ref_mbqm(total, int(mm), int(ss)) + offset, act[0]), act[1])
            if int(got[c, j]) != want:
                raise AssertionError(f"ChannelRequantizer {name} ({np.dtype(dtype).name}, {layout}): "
                                     f"m={mm} shift={ss} acc={int(pre[c, j])} bias={b} gives "
                                     f"{int(got[c, j])}, TFLM {want}")
            n += 1
    return n


@pytest.mark.parametrize("shifts", ["right", "all"])
def test_channel_requantizer_int32_boundaries(shifts):
    """ChannelRequantizer's int32 output stage (bias folding, offset folding, wrap handling,
    per-channel constants on axis 0) against the reference, one channel per (multiplier,
    shift); ``right``: right shifts only (the folded constants apply), ``all``: left shifts
    mixed in. Integer input; C and Fortran layouts."""
    table = _boundary_table(shifts=range(-31, 1) if shifts == "right" else SHIFTS)
    acc, m, s = _channel_matrix(table)
    count = 0
    for variant in _requant_variants():
        for layout in ("C", "F"):
            count += _check_requantizer(table, acc, m, s, *variant, np.int64, layout)
    CASE_COUNTS[f"ChannelRequantizer int32 ({shifts} shifts)"] = count
    assert count > 20000


def test_channel_requantizer_float64_plan():
    """The float64 plan of ChannelRequantizer (taken when every intermediate stays below 2^51)
    on boundary accumulators, one requantizer per right shift 0..18 (channels: the
    multipliers; |accumulator| <= 2^18, where the plan applies), float64 and float32 inputs,
    C and Fortran layouts, with and without a folded bias and output offset. The test
    asserts that the plan is in use whenever the output offset is 0 (a folded offset can
    push the rounding constant past the plan's 2^51 limit: the integer form is used)."""
    lo, hi = -(1 << 18), (1 << 18)
    count = planned = 0
    for shift in range(-18, 1):
        table = _boundary_table(lo, hi, shifts=(shift,))
        acc, m, s = _channel_matrix(table)
        for bias in (None, np.zeros(len(table), np.int64), np.full(len(table), 12345, np.int64)):
            for offset, act in ((0, (INT32_MIN, INT32_MAX)), (-37, (-128, 127)), (100, (-32768, 32767))):
                pre = acc if bias is None else acc - bias[:, None]
                rq = ChannelRequantizer(m, s, bias, offset, act[0], act[1], False, float(np.abs(pre).max()))
                if rq.float64 is None:
                    # the output offset folded into the rounding constant can push it past 2^51
                    assert offset != 0, f"the float64 plan was not taken (shift {shift})"
                    continue
                planned += 1
                for dtype in (np.float64, np.float32):
                    for layout in ("C", "F"):
                        data = pre.astype(dtype)
                        if layout == "F":
                            data = np.asfortranarray(data)
                        got = np.array(rq(data))
                        for c, (mm, ss, xs) in enumerate(table):
                            b = 0 if bias is None else int(bias[c])
                            want = [min(max(ref_mbqm(int(pre[c, j]) + b, int(mm), int(ss)) + offset, act[0]),
                                        act[1]) for j in range(len(xs))]
                            row = got[c, :len(xs)].astype(np.int64).tolist()
                            if row != want:
                                j = next(i for i in range(len(xs)) if row[i] != want[i])
                                raise AssertionError(f"float64 plan, m={mm} shift={ss} acc={int(pre[c, j])} "
                                                     f"bias={b}: {row[j]}, TFLM {want[j]}")
                            count += len(xs)
    CASE_COUNTS["ChannelRequantizer float64 plan"] = count
    assert planned >= 19 * 3 and count > 10000


def _int64_boundaries(m: int, shift: int, limit: int = 1 << 47) -> List[int]:
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    t = 15 - shift
    out = {0, 1, -1, limit - 1, -limit}
    for k in TARGET_QUOTIENTS:
        for target in (k << t, (k << t) - (1 << (t - 1)), (k << t) + (1 << (t - 1))):
            x0 = -((-target) // reduced)
            for d in (-2, -1, 0, 1, 2):
                if -limit <= x0 + d < limit:
                    out.add(x0 + d)
    return sorted(out)


def test_channel_requantizer_int64_boundaries():
    """The 64-bit output stage (16x8 kernels with an int64 bias): ChannelRequantizer with
    int64 accumulators (with and without the bias folded into the rounding constant, with
    and without the int32 narrowing) and multiply_by_quantized_multiplier_64, against the
    reference, on boundary accumulators in TFLM's assumed range |x| < 2^47, shifts -31..14."""
    table = [(m, s, _int64_boundaries(m, s)) for s in range(-31, 15) for m in MULTIPLIERS]
    acc, m, s = _channel_matrix(table)
    count = 0
    got_fn = multiply_by_quantized_multiplier_64(acc, m[:, None], s[:, None])
    for bias in (None, np.arange(len(table), dtype=np.int64) * 1000003 - 77):
        for offset, act, bound in ((0, (INT32_MIN, INT32_MAX), None), (0, (-32768, 32767), None),
                                   (0, (INT32_MIN, INT32_MAX), "small")):
            pre = acc if bias is None else acc - bias[:, None]
            if bound == "small":
                # a bound small enough that the int32 narrowing is skipped
                keep = np.abs(pre) < (1 << 20)
                pre = np.where(keep, pre, 0)
                acc_bound = float(np.abs(pre).max())
            else:
                acc_bound = None
            rq = ChannelRequantizer(m, s, bias, offset, act[0], act[1], True, acc_bound)
            got = np.asarray(rq(pre))
            for c, (mm, ss, xs) in enumerate(table):
                b = 0 if bias is None else int(bias[c])
                for j in range(len(xs)):
                    want = min(max(ref_mbqm64(int(pre[c, j]) + b, int(mm), int(ss)) + offset, act[0]), act[1])
                    assert int(got[c, j]) == want, (f"int64 requantizer m={mm} shift={ss} "
                                                    f"acc={int(pre[c, j])} bias={b}: {int(got[c, j])}, TFLM {want}")
                    count += 1
    for c, (mm, ss, xs) in enumerate(table):
        for j, v in enumerate(xs):
            assert int(got_fn[c, j]) == ref_mbqm64(v, int(mm), int(ss))
            count += 1
    CASE_COUNTS["ChannelRequantizer int64 / mbqm64"] = count
    assert count > 20000


def test_quantize_multiplier_matches_reference():
    """quantize_multiplier (scalar) and quantize_multiplier_array (per-channel) against the
    reference on random doubles over 2^-40..2^40 and on the doubles next to the rounding
    ties of q * 2^31 and the carry to 2^31."""
    rng = np.random.default_rng(17)
    reals = list(np.exp2(rng.uniform(-40, 40, 3000)))
    for e in range(-34, 33):
        for frac in ((1 << 31) - 0.5, (1 << 30) + 0.5, 1518500249.5, (1 << 31) - 1.5):
            v = math.ldexp(frac / 2.0 ** 31, e)
            reals += [v, math.nextafter(v, 0), math.nextafter(v, math.inf)]
    reals += [0.0, 5e-324, 2.0 ** -32, 2.0 ** -31, math.nextafter(2.0 ** -32, 0)]
    m_arr, s_arr = quantize_multiplier_array(np.array(reals))
    for k, r in enumerate(reals):
        want = ref_quantize_multiplier(float(r))
        assert quantize_multiplier(float(r)) == want, r
        assert (int(m_arr[k]), int(s_arr[k])) == want, r
    CASE_COUNTS["quantize_multiplier"] = 2 * len(reals)


# ------------------------------------------------ kernels against TFLM and the reference
def _scales_for(real: float, s_in: float = 0.0123456789, s_out: float = 0.3711):
    """(input scale, filter scale, output scale) as float32 values whose double-precision
    multiplier is close to ``real``."""
    s_in, s_out = float(np.float32(s_in)), float(np.float32(s_out))
    s_w = float(np.float32(real * s_out / s_in))
    return s_in, s_w, s_out


def _kernel_channels(io: str, per_channel: bool, shifts, rng):
    """Per output channel: (filter scale, bias) so that the channel's accumulators
    bias + (x - zp) sweep a window centred on a rounding boundary."""
    s_in, s_out = float(np.float32(0.0123456789)), float(np.float32(0.3711))
    chans = []
    shared_w = None
    for c, shift in enumerate(shifts):
        if per_channel or shared_w is None:
            real = math.ldexp(rng.uniform(0.5, 1.0), shift)
            shared_w = _scales_for(real, s_in, s_out)[1]
        m, s = ref_quantize_multiplier(s_in * shared_w / s_out)
        window = 128 if io == "INT8" else 32768
        # boundary accumulators of outputs that stay inside the output range
        cands = [x for x in boundary_accumulators(m, s, quotients=(0, 1, -1, 3, -7, 20, -50))
                 if abs(ref_mbqm(x, m, s)) < (100 if io == "INT8" else 30000) and abs(x) < (1 << 30)]
        center = cands[int(rng.integers(len(cands)))] if cands else 0
        chans.append((shared_w, center, m, s))
    return s_in, s_out, chans


def _reference_outputs(acc: np.ndarray, chans, zp_out: int, lo: int, hi: int, int64: bool) -> np.ndarray:
    out = np.empty(acc.shape, dtype=np.int64)
    for c, (_, _, m, s) in enumerate(chans):
        for j in range(acc.shape[0]):
            v = int(acc[j, c])
            r = ref_mbqm64(v, m, s) if int64 else ref_mbqm(ref_wrap32(v), m, s)
            out[j, c] = min(max(r + zp_out, lo), hi)
    return out


KERNEL_CASES = [(op, io, pc) for op in ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")
                for io in ("INT8", "INT16") for pc in (False, True)
                if not (op == "FULLY_CONNECTED" and io == "INT16" and pc)]


def _kernel_model(op: str, io: str, per_channel: bool, seed: int):
    """A one-op model whose channel c computes bias_c + (x - zp) (one filter tap of 1), and
    the expected outputs from the reference; inputs sweep the whole input type."""
    rng = np.random.default_rng(seed)
    shifts = [int(v) for v in rng.integers(-24, 3, 6)] if per_channel else [int(rng.integers(-20, 1))] * 6
    s_in, s_out, chans = _kernel_channels(io, per_channel, shifts, rng)
    C = len(chans)
    zp_in = int(rng.integers(-128, 128)) if io == "INT8" else 0
    zp_out = int(rng.integers(-20, 20)) if io == "INT8" else 0
    lo, hi = (-128, 127) if io == "INT8" else (-32768, 32767)
    values = np.arange(lo, hi + 1, dtype=np.int64)
    n = values.size
    x = values.astype(np.int8 if io == "INT8" else np.int16)
    bias_type = "INT32" if io == "INT8" else ("INT64" if seed % 2 or op in ("DEPTHWISE_CONV_2D", "TRANSPOSE_CONV") else "INT32")
    bias = np.array([center for _, center, _, _ in chans], dtype=np.int64)
    w_scales = [w for w, _, _, _ in chans]
    # accumulator of sample j, channel c: (x_j - zp_in) + bias_c
    acc = (values - zp_in)[:, None] + bias[None, :]
    expected = _reference_outputs(acc, chans, zp_out, lo, hi, bias_type == "INT64")
    bq = ([s_in * w for w in w_scales], [0] * C) if per_channel else ([s_in * w_scales[0]], [0])
    bdef = TensorDef((C,), bias_type, data=bias.astype(np.int64 if bias_type == "INT64" else np.int32),
                     quant=bq)
    in_def = TensorDef
    if op == "FULLY_CONNECTED":
        w = np.ones((C, 1), np.int8)
        wq = (w_scales, [0] * C, 0) if per_channel else (w_scales[0], 0)
        model = single_op_model(op, [in_def((n, 1), io, quant=(s_in, zp_in)), TensorDef(w.shape, "INT8", data=w, quant=wq),
                                     bdef], [TensorDef((n, C), io, quant=(s_out, zp_out))])
        return model, [x.reshape(n, 1)], expected
    if op == "CONV_2D":
        w = np.ones((C, 1, 1, 1), np.int8)
        wq = (w_scales, [0] * C, 0) if per_channel else ([w_scales[0]], [0])
        model = single_op_model(op, [in_def((1, 1, n, 1), io, quant=(s_in, zp_in)),
                                     TensorDef(w.shape, "INT8", data=w, quant=wq), bdef],
                                [TensorDef((1, 1, n, C), io, quant=(s_out, zp_out))],
                                padding=1, stride_w=1, stride_h=1)
        return model, [x.reshape(1, 1, n, 1)], expected
    if op == "DEPTHWISE_CONV_2D":
        w = np.ones((1, 1, 1, C), np.int8)
        wq = (w_scales, [0] * C, 3) if per_channel else ([w_scales[0]], [0])
        model = single_op_model(op, [in_def((1, 1, n, 1), io, quant=(s_in, zp_in)),
                                     TensorDef(w.shape, "INT8", data=w, quant=wq), bdef],
                                [TensorDef((1, 1, n, C), io, quant=(s_out, zp_out))],
                                padding=1, stride_w=1, stride_h=1, depth_multiplier=C)
        return model, [x.reshape(1, 1, n, 1)], expected
    w = np.ones((C, 1, 1, 1), np.int8)
    wq = (w_scales, [0] * C, 0) if per_channel else ([w_scales[0]], [0])
    shape = np.array([1, 1, n, C], np.int32)
    model = single_op_model(op, [TensorDef((4,), "INT32", data=shape), TensorDef(w.shape, "INT8", data=w, quant=wq),
                                 in_def((1, 1, n, 1), io, quant=(s_in, zp_in)), bdef],
                            [TensorDef((1, 1, n, C), io, quant=(s_out, zp_out))],
                            padding=1, stride_w=1, stride_h=1)
    return model, [x.reshape(1, 1, n, 1)], expected


@pytest.mark.parametrize("op, io, per_channel", KERNEL_CASES)
def test_kernel_output_stage_at_boundaries_reference(op, io, per_channel):
    """The kernel end to end (its cached filter, float matmul and prepared output stage):
    every channel's accumulators sweep 256 (int8) or 65536 (int16) consecutive values
    around a rounding boundary of its multiplier; expected from the reference."""
    count = 0
    for seed in range(4):
        model, inputs, expected = _kernel_model(op, io, per_channel, seed)
        ours, _, _ = run_ours(model, inputs, arena_size=1 << 24, recording=False)
        got = np.asarray(ours[0]).reshape(expected.shape)
        bad = np.argwhere(got != expected)
        assert not len(bad), (f"{op} {io} per_channel={per_channel} seed {seed}: sample {bad[0][0]} "
                              f"channel {bad[0][1]}: ours {got[tuple(bad[0])]}, reference {expected[tuple(bad[0])]}")
        count += expected.size
    CASE_COUNTS[f"{op} {io} {'per-channel' if per_channel else 'per-tensor'}"] = count


@pytest.mark.oracle
@pytest.mark.parametrize("op, io, per_channel", KERNEL_CASES)
def test_kernel_output_stage_at_boundaries_tflm(oracle, op, io, per_channel):
    """The same boundary models run by TFLM: TFLM agrees with the reference (the reference
    and our reading of TFLM's multiplier computation are right) and with us."""
    for seed in range(2):
        model, inputs, expected = _kernel_model(op, io, per_channel, seed)
        theirs = oracle.run(model, inputs, 1 << 24)
        assert theirs.ok, f"TFLM failed: {theirs.error}"
        got = np.asarray(theirs.outputs[0]).reshape(expected.shape)
        bad = np.argwhere(got != expected)
        assert not len(bad), (f"TFLM {op} {io} per_channel={per_channel} seed {seed}: sample {bad[0][0]} "
                              f"channel {bad[0][1]}: TFLM {got[tuple(bad[0])]}, reference {expected[tuple(bad[0])]}")
        ours, _, _ = run_ours(model, inputs, arena_size=1 << 24, recording=False)
        assert np.array_equal(np.asarray(ours[0]), np.asarray(theirs.outputs[0]))


if __name__ == "__main__":      # python -m tests.test_edge_requant: run the unit tests and print the counts
    test_mbqm_fast_forms_at_boundaries()
    test_channel_requantizer_int32_boundaries("right")
    test_channel_requantizer_int32_boundaries("all")
    test_channel_requantizer_float64_plan()
    test_channel_requantizer_int64_boundaries()
    test_quantize_multiplier_matches_reference()
    for case in KERNEL_CASES:
        test_kernel_output_stage_at_boundaries_reference(*case)
    for name, n in CASE_COUNTS.items():
        print(f"{name:55s} {n:>10,d}")


def _depth_model(op: str, depth: int, units: int, seed: int):
    """FULLY_CONNECTED or a 1x1 CONV_2D over ``depth`` int8 inputs at the extremes (x - zp =
    -255 or 0 / +255 patterns) with weights +-127, so the accumulators reach
    +-255 * 127 * depth; biases near the int32 limits. Expected outputs from Python ints
    (the int32 accumulator wraps as the C++ sum does)."""
    rng = np.random.default_rng(seed)
    zp_in = 127
    x = np.where(rng.random((2, depth)) < 0.85, -128, 127).astype(np.int8)
    x[0] = -128                                                   # every term at -255
    w = np.where(rng.random((units, depth)) < 0.9, -127, 127).astype(np.int8)
    w[0] = -127
    bias = rng.integers(INT32_MIN, INT32_MAX, units, endpoint=True).astype(np.int64)
    bias[0] = INT32_MAX - 3
    s_in, s_w, s_out = float(np.float32(0.0123456789)), float(np.float32(0.0009876)), float(np.float32(250.0))
    m, s = ref_quantize_multiplier(s_in * s_w / s_out)
    zp_out = 3
    expected = np.empty((2, units), np.int64)
    xs = [[int(v) - zp_in for v in row] for row in x]
    for b in range(2):
        for u in range(units):
            acc = sum(a * int(c) for a, c in zip(xs[b], w[u])) + int(bias[u])
            expected[b, u] = min(max(ref_mbqm(ref_wrap32(acc), m, s) + zp_out, -128), 127)
    bdef = TensorDef((units,), "INT32", data=bias.astype(np.int32), quant=([s_in * s_w], [0]))
    if op == "FULLY_CONNECTED":
        model = single_op_model(op, [TensorDef((2, depth), "INT8", quant=(s_in, zp_in)),
                                     TensorDef((units, depth), "INT8", data=w, quant=(s_w, 0)), bdef],
                                [TensorDef((2, units), "INT8", quant=(s_out, zp_out))])
        return model, [x], expected
    model = single_op_model(op, [TensorDef((1, 1, 2, depth), "INT8", quant=(s_in, zp_in)),
                                 TensorDef((units, 1, 1, depth), "INT8", data=w.reshape(units, 1, 1, depth),
                                           quant=([s_w], [0])), bdef],
                            [TensorDef((1, 1, 2, units), "INT8", quant=(s_out, zp_out))],
                            padding=1, stride_w=1, stride_h=1)
    return model, [x.reshape(1, 1, 2, depth)], expected


#: depths at the exactness limits of the fast paths: the float32 sums of CONV_2D hold every
#: partial sum exactly up to 255 * 127 * depth < 2^24 (depth 518), float64 beyond (519);
#: 1 << 17 takes the int8 accumulator past 2^31, so the int32 sum wraps
DEPTHS = [("CONV_2D", 518), ("CONV_2D", 519), ("CONV_2D", 1 << 17), ("FULLY_CONNECTED", 518),
          ("FULLY_CONNECTED", 1 << 17)]


@pytest.mark.parametrize("op, depth", DEPTHS)
def test_largest_depths_reference(op, depth):
    """Accumulations at the depths where the fast paths change (float32 -> float64 sums)
    and beyond int32 (wrapping sums), extreme inputs and weights, biases near the int32
    limits: equal to the Python-int reference."""
    model, inputs, expected = _depth_model(op, depth, 6, depth)
    ours, _, _ = run_ours(model, inputs, arena_size=1 << 24, recording=False)
    got = np.asarray(ours[0]).reshape(expected.shape)
    assert np.array_equal(got, expected), (op, depth, got, expected)
    CASE_COUNTS[f"{op} depth {depth}"] = expected.size


@pytest.mark.oracle
@pytest.mark.parametrize("op, depth", DEPTHS)
def test_largest_depths_tflm(oracle, op, depth):
    model, inputs, expected = _depth_model(op, depth, 6, depth)
    theirs = oracle.run(model, inputs, 1 << 24)
    assert theirs.ok, theirs.error
    assert np.array_equal(np.asarray(theirs.outputs[0]).reshape(expected.shape), expected)


def test_host_tables_equal_their_functions_on_every_input():
    """The host-side tables of the element-wise kernels (int8: 256 entries, int16: 65536,
    int8 pairs: 65536) read back the function they were built from on every input, in any
    layout (the byte-pattern indexing of negative values, broadcasting of pair tables)."""
    from kernels.internal.lut import (apply_int8_pair_table, apply_int8_table, apply_int16_table,
                                      int8_pair_table, int8_table, int16_table, logistic_int16,
                                      tanh_int16)
    from kernels.internal.quantization import fixed_point_logistic
    count = 0
    all8 = np.arange(-128, 128, dtype=np.int8)
    fn8 = lambda v: np.clip(fixed_point_logistic(np.asarray(v, np.int64) << 20, 4) >> 23, -128, 127)  # noqa: E731
    table8 = int8_table(fn8)
    x8 = np.random.default_rng(3).permutation(np.tile(all8, 3)).reshape(3, 16, 16)
    assert np.array_equal(apply_int8_table(table8, x8), fn8(x8).astype(np.int8))
    count += x8.size
    all16 = np.arange(-32768, 32768, dtype=np.int64).astype(np.int16)
    for fn in (lambda v: logistic_int16(v, 0, 3), lambda v: tanh_int16(v, 24576, 1)):
        table16 = int16_table(fn)
        x16 = np.random.default_rng(4).permutation(all16).reshape(256, 256)
        assert np.array_equal(apply_int16_table(table16, x16), np.asarray(fn(x16)).astype(np.int32))
        count += x16.size
    pair = lambda a, b: np.clip((np.asarray(a, np.int64) * 3 - np.asarray(b, np.int64) * 5) >> 2, -128, 127)  # noqa: E731
    table = int8_pair_table(pair)
    a = np.repeat(all8, 256).reshape(256, 256)
    b = np.tile(all8, 256).reshape(256, 256)
    out = np.empty((256, 256), np.int8)
    apply_int8_pair_table(table, a, b, out)
    assert np.array_equal(out, pair(a, b).astype(np.int8))
    out_b = np.empty((256, 256), np.int8)
    apply_int8_pair_table(table, all8.reshape(256, 1), all8.reshape(1, 256), out_b)   # broadcast
    assert np.array_equal(out_b, pair(all8.reshape(256, 1), all8.reshape(1, 256)).astype(np.int8))
    count += out.size + out_b.size
    CASE_COUNTS["host tables (int8, int16, int8 pairs)"] = count


def _np_mbqm(x: np.ndarray, m: int, shift: int) -> np.ndarray:
    """Candidate search only (every hit is re-checked with ref_mbqm): the 32-bit routine for
    right shifts, in numpy int64."""
    q = (x * m + (1 << 30)) >> 31
    r = -shift
    return q if r <= 0 else (q + (1 << (r - 1)) - (q < 0)) >> r


def _np_mbqm64(x: np.ndarray, m: int, shift: int) -> np.ndarray:
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    t = 15 - shift
    return (x * reduced + (1 << (t - 1))) >> t


def _distinguishing_cases(op: str, count: int, seed: int):
    """Scale sets whose float32-product multiplier and double-product multiplier differ,
    each with an accumulator (one product, depth 1) on which the two give different outputs:
    (model, inputs, output with the double product, output with the float32 one)."""
    rng = np.random.default_rng(seed)
    io = "INT16" if op == "BATCH_MATMUL" else "INT8"
    found = []
    a_vals = rng.integers(-32768, 32768, 20000)
    b_vals = rng.integers(-32768, 32768, 20000)
    products = a_vals * b_vals
    accs = np.arange(-(1 << 21), 1 << 21, dtype=np.int64)
    for _ in range(50000):
        if len(found) == count:
            break
        lo, hi = (1e-5, 1e-2) if io == "INT16" else (1e-3, 0.5)
        s1, s2 = (float(np.float32(v)) for v in np.exp(rng.uniform(np.log(lo), np.log(hi), 2)))
        so = float(np.float32(np.exp(rng.uniform(np.log(lo), np.log(hi * 10)))))
        m64 = ref_quantize_multiplier(s1 * s2 / so)
        m32 = ref_quantize_multiplier(float(np.float32(s1) * np.float32(s2)) / so)
        if m64 == m32 or m64[1] > 0 or m32[1] > 0:
            continue
        if io == "INT16":
            r64, r32 = _np_mbqm64(products, *m64), _np_mbqm64(products, *m32)
            hits = np.nonzero((r64 != r32) & (np.abs(r64) < 32000))[0]
            if not len(hits):
                continue
            a, b = int(a_vals[hits[0]]), int(b_vals[hits[0]])
            want64, want32 = ref_mbqm64(a * b, *m64), ref_mbqm64(a * b, *m32)
            model = single_op_model("BATCH_MATMUL", [TensorDef((1, 1, 1), io, (s1, 0)),
                                                     TensorDef((1, 1, 1), io, (s2, 0))],
                                    [TensorDef((1, 1, 1), io, (so, 0))], adj_x=False, adj_y=False)
            inputs = [np.array([[[a]]], np.int16), np.array([[[b]]], np.int16)]
        else:
            # FULLY_CONNECTED int8: the bias sets the accumulator (input at its zero point x 1)
            r64, r32 = _np_mbqm(accs, *m64), _np_mbqm(accs, *m32)
            hits = np.nonzero((r64 != r32) & (np.abs(r64) < 120))[0]
            if not len(hits):
                continue
            acc = int(accs[hits[0]])
            want64, want32 = ref_mbqm(acc, *m64), ref_mbqm(acc, *m32)
            model = single_op_model("FULLY_CONNECTED", [
                TensorDef((1, 1), io, quant=(s1, -128)),
                TensorDef((1, 1), "INT8", data=np.array([[1]], np.int8), quant=(s2, 0)),
                TensorDef((1,), "INT32", data=np.array([acc], np.int32), quant=([s1 * s2], [0]))],
                [TensorDef((1, 1), io, quant=(so, 0))])
            inputs = [np.array([[-128]], np.int8)]
        assert want64 != want32
        found.append((model, inputs, want64, want32))
    return found


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["FULLY_CONNECTED", "BATCH_MATMUL"])
def test_multiplier_uses_the_double_product_of_the_scales(oracle, op):
    """Where the float32 and the double product of the input scales give different
    multipliers and different outputs, TFLM (the package) gives the double product's,
    and so do we (issue 17). FULLY_CONNECTED int8 (accumulator set by the bias) and
    BATCH_MATMUL int16 (64-bit output stage), 12 cases each."""
    cases = _distinguishing_cases(op, 12, 11)
    assert len(cases) == 12
    for model, inputs, with_double, with_float32 in cases:
        theirs = oracle.run(model, inputs)
        assert theirs.ok, theirs.error
        assert int(np.asarray(theirs.outputs[0]).ravel()[0]) == with_double != with_float32
        ours, _, _ = run_ours(model, inputs, recording=False)
        assert int(np.asarray(ours[0]).ravel()[0]) == with_double
