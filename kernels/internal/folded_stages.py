"""Output stages of TFLM's 32-bit requantisation folded into fewer, cheaper numpy passes,
for recurrent kernels that run them once per time step (UNIDIRECTIONAL_SEQUENCE_LSTM).

Both classes compute, for every input in a range declared up front and checked at
construction (``available`` is False when a precondition fails; the caller then keeps its
plain path), exactly

    clamp(RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc, m), r) + zp, lo, hi)

(TFLM's MultiplyByQuantizedMultiplier with a right shift r = -shift >= 0 and a
multiplier 0 or 2^30 <= m < 2^31, as QuantizeMultiplier makes them; FoldedFcStage also
takes left shifts that cannot wrap the accumulator: acc << s is then acc * 2^s, folded
into the weights and bias, with r = 0). The facts used:

* SRDHM(acc, m) = floor((acc*m + 2^30) / 2^31) for m >= 0 (no saturation: m < 2^31);
* RDBPOT(q, r) = floor((q + h - [q < 0]) / 2^r) with h = 2^(r-1) (r >= 1), and q itself
  for r = 0;
* floor((floor(u) + c) / 2^r) = floor((u + c) / 2^r) for an integer c (nested floors);
* ``astype`` of a float to an integer truncates, which is the floor for values >= 0.

:class:`FoldedFcStage` -- a fully connected layer (int32 accumulator = weights x (input +
input offset) + bias, never wrapping in the declared input range) and its output stage,
per output row. One float64 matrix product of the raw inputs (plus a row of ones) with
the weights pre-scaled by m / 2^31 gives u + P, where u = (acc*m + 2^30) / 2^31 and
P = h + O*2^r: every product w*m*x and every partial sum is an integer multiple of 2^-31
below 2^53 of them (checked), so the product is exact in any summation order (with or
without fused multiply-adds), and O (one offset for all rows) keeps it positive. Then,
in int32: Q = trunc(u + P) = q + h + O*2^r; Q += (Q - K) >> 31 with K = h + O*2^r
subtracts [q < 0]; Q >>= r gives RDBPOT(q, r) + O; clamp at (lo, hi) + O - zp. The result
is returned with the offset ``offset`` = O - zp added (callers fold it into what follows).

:class:`ProductRequant` -- a product of two int16-range arrays (|x| <= ``bound``) with a
scalar multiplier and right shift. The power-of-two factor 2^j of m (j <= 30) divides
2^30, 2^31 and h*2^31, so the whole routine is floor((x*m' + c - F*[x < 0]) / 2^S) with
m' = m / 2^j, c = (2^30 + h*2^31) / 2^j, F = 2^31 / 2^j (0 for r = 0), S = 31 + r - j:
int32 arithmetic when |x|*m' + c + F < 2^31 (e.g. m = 2^30: m' = 1), int64 otherwise.
TFLM's condition is [x*m + 2^30 < 0], i.e. x < T = -floor(2^30 / m); T is 0 for m > 2^30
and -1 for m = 2^30, where the one value x = -1 gives x*m + 2^30 = 0 and the fix, were it
applied, would subtract 2^31 from 2^30 - 2^30 + h*2^31 >= 2^31 (r >= 1): (h - 1) * 2^31
>= 0 stays below 2^S, so the floor is 0 either way; m = 0 likewise (the constants alone
stay in [0, 2^S)). So [x < 0] serves for every multiplier. tests/test_folded_stages.py
checks both classes against a plain transcription of TFLM's routine at every rounding
boundary.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .quantization import clip_into

_INT32_LIMIT = 1 << 31
_EXACT_UNITS = 1 << 53


def _valid_multiplier(m: int) -> bool:
    return m == 0 or (1 << 30) <= m < (1 << 31)


class FoldedFcStage:
    """A fully connected layer and its 32-bit output stage, folded (see the module doc).

    ``weights``: (rows, depth) integers (weight zero point already subtracted);
    ``input_offset``: added to every raw input; ``input_range``: (min, max) of the raw
    inputs; ``bias``: (rows,) integers or None; ``multipliers`` / ``shifts``: per row
    (QuantizeMultiplier's); ``output_offset``: zp; (``lo``, ``hi``): the clamp;
    ``min_offset``: the least O wanted (a caller indexing tables by the offset results)."""

    def __init__(self, weights: np.ndarray, input_offset: int, input_range: Tuple[int, int],
                 bias: Optional[np.ndarray], multipliers: np.ndarray, shifts: np.ndarray,
                 output_offset: int, lo: int, hi: int, min_offset: int = 1):
        self.available = False
        self.f32 = None
        w = [[int(v) for v in row] for row in np.asarray(weights, dtype=np.int64)]
        rows = len(w)
        ms = [int(v) for v in np.asarray(multipliers).reshape(-1)]
        shift_list = [int(v) for v in np.asarray(shifts).reshape(-1)]
        bs = [0] * rows if bias is None else [int(v) for v in np.asarray(bias).reshape(-1)]
        if rows == 0 or len(ms) != rows or len(shift_list) != rows or len(bs) != rows:
            return
        if any(not _valid_multiplier(m) for m in ms) or any(not -30 <= v <= 30 for v in shift_list):
            return
        o = int(input_offset)
        x_lo, x_hi = int(input_range[0]), int(input_range[1])
        biggest_input = max(abs(x_lo), abs(x_hi))
        biggest_shifted = max(abs(x_lo + o), abs(x_hi + o))
        consts, acc_bounds, rs = [], [], []
        for i in range(rows):
            abs_sum = sum(abs(v) for v in w[i])
            acc_bound = abs_sum * biggest_shifted + abs(bs[i])
            if acc_bound >= _INT32_LIMIT:        # TFLM's int32 sum could wrap
                return
            left = max(shift_list[i], 0)
            if left:
                # a left shift: TFLM's acc << left, here never wrapping, is the
                # accumulator of the weights and bias times 2^left; no right shift
                if acc_bound << left >= _INT32_LIMIT:
                    return
                acc_bound <<= left
                bs[i] <<= left
                w[i] = [v << left for v in w[i]]
            rs.append(max(-shift_list[i], 0))
            acc_bounds.append(acc_bound)
            consts.append(o * sum(w[i]) + bs[i])
        # one positive offset O for every row: u + h + O*2^r >= 0 for every accumulator
        big = max(1, int(min_offset))
        for i in range(rows):
            u_low = -((acc_bounds[i] * ms[i]) >> 31) - 1          # <= min u (floor)
            big = max(big, -(u_low // (1 << rs[i])) + 1)
        self.offset_o = big
        matrix = np.empty((rows, len(w[0]) + 1), dtype=np.float64)
        limits = []
        for i in range(rows):
            m, r = ms[i], rs[i]
            h = (1 << (r - 1)) if r else 0
            p = h + big * (1 << r)
            # in units of 2^-31: every term and partial sum below 2^53
            units = sum(abs(v) for v in w[i]) * m * biggest_input + abs(consts[i] * m + (1 << 30) + p * _INT32_LIMIT)
            if units >= _EXACT_UNITS:
                return
            top = (acc_bounds[i] * m + (1 << 30)) // _INT32_LIMIT + 1 + p
            if top >= _INT32_LIMIT:
                return
            scale = m / float(_INT32_LIMIT)          # exact: m < 2^31
            matrix[i, :-1] = [v * scale for v in w[i]]
            matrix[i, -1] = (consts[i] * m + (1 << 30) + p * _INT32_LIMIT) / float(_INT32_LIMIT)
            limits.append((h + big * (1 << r)) if r else 0)
        self.matrix = matrix
        self.rows = rows
        self.shift_values = np.array(rs, dtype=np.int32)
        self.sign_limits = np.array(limits, dtype=np.int32)
        self.uniform_shift = rs[0] if all(r == rs[0] for r in rs) else None
        self.uniform_limit = limits[0] if all(k == limits[0] for k in limits) else None
        self.matrix_t = np.ascontiguousarray(matrix.T)
        # rows_last in float32 (half the product's cost): the offset inputs x + o and
        # the weights are integers whose sums stay below 2^24 (exact in any order), and
        # one multiplier, shift and constant serve every row (no bias, one m and r): then
        # u + P = acc * (m / 2^31) + c with c = (2^30 + P * 2^31) / 2^31, in float64 from
        # the exact float32 acc -- the same integers of 2^-31 below 2^53 as the float64 path
        self.f32 = None
        if (bias is None and self.uniform_shift is not None and all(m == ms[0] for m in ms)
                and all(sum(abs(v) for v in row) * biggest_shifted < (1 << 24) for row in w)):
            r = rs[0]
            p = ((1 << (r - 1)) if r else 0) + big * (1 << r)
            self.f32 = (np.ascontiguousarray(np.array(w, dtype=np.float32).T), float(o),
                        ms[0] / float(_INT32_LIMIT), ((1 << 30) + p * _INT32_LIMIT) / float(_INT32_LIMIT))
        self.offset = big - int(output_offset)
        self.lo, self.hi = int(lo) + self.offset, int(hi) + self.offset
        self._columns = -1
        self.available = True

    def _constants(self, columns: int):
        """Per-row constants as full (rows, columns) arrays: numpy's same-shape loops are
        several times faster than broadcasting a (rows, 1) column."""
        if columns != self._columns:
            self._limits_full = np.repeat(self.sign_limits, columns).reshape(self.rows, columns)
            self._shifts_full = (None if self.uniform_shift is not None else
                                 np.repeat(self.shift_values, columns).reshape(self.rows, columns))
            self._columns = columns
        return self._limits_full, self._shifts_full

    def __call__(self, x_aug: np.ndarray, work: np.ndarray) -> np.ndarray:
        """``x_aug``: (depth + 1, N) float64, the raw inputs with a last row of ones;
        ``work``: a (rows, N) float64 buffer. Returns the clamped outputs + ``offset``,
        (rows, N) int32."""
        np.matmul(self.matrix, x_aug, out=work)
        q = work.astype(np.int32)
        limits, shifts = self._constants(q.shape[1])
        return self._finish(q, limits, shifts)

    def stacked_constants(self, other: "FoldedFcStage", columns: int):
        """(sign limits, shifts or None if uniform) as full (rows + other.rows, columns)
        arrays, for running this stage and ``other`` (same offset and clamp) through one
        :meth:`finish` on their stacked products."""
        limits = np.concatenate([self.sign_limits, other.sign_limits])
        shifts = np.concatenate([self.shift_values, other.shift_values])
        rows = len(limits)
        full_limits = np.repeat(limits, columns).reshape(rows, columns)
        if (shifts == shifts[0]).all():
            return full_limits, int(shifts[0])
        return full_limits, np.repeat(shifts, columns).reshape(rows, columns)

    def finish(self, work: np.ndarray, limits, shifts) -> np.ndarray:
        """The int32 passes on products ``work`` (float64, from :attr:`matrix` @ inputs
        with a row of ones, possibly stacked with another stage's) given their constants
        (:meth:`stacked_constants`)."""
        q = work.astype(np.int32)
        fix = np.subtract(q, limits)
        fix >>= 31
        q += fix
        q >>= shifts
        clip_into(q, self.lo, self.hi, out=q)
        return q

    def rows_last(self, x: np.ndarray) -> np.ndarray:
        """The same with samples first: ``x`` (N, depth), the raw inputs (any integer
        dtype); returns (N, rows). Only for uniform per-row constants (one shift for every
        row and equal sign limits, e.g. a per-tensor FC)."""
        n = x.shape[0]
        if self.f32 is not None:
            weights, offset, scale, const = self.f32
            x32 = np.empty(x.shape, np.float32)
            np.copyto(x32, x, casting="unsafe")
            if offset:
                x32 += offset
            acc = x32 @ weights
            work = np.multiply(acc, scale, dtype=np.float64)
            work += const
        else:
            x_aug = np.empty((n, x.shape[1] + 1), np.float64)
            x_aug[:, :-1] = x
            x_aug[:, -1] = 1.0
            work = x_aug @ self.matrix_t
        q = work.astype(np.int32)
        return self._finish(q, self.uniform_limit, None)

    def _finish(self, q, limits, shifts):
        fix = np.subtract(q, limits)
        fix >>= 31
        q += fix
        if shifts is None:
            q >>= self.uniform_shift
        else:
            q >>= shifts
        clip_into(q, self.lo, self.hi, out=q)
        return q


class ProductRequant:
    """MultiplyByQuantizedMultiplier(x, m, -r) + zp, clamped, for int32 arrays x with
    |x| <= ``bound`` (see the module doc). ``clamp_needed`` is False when the clamp is
    provably a no-op on the range (then it is skipped)."""

    def __init__(self, multiplier: int, shift: int, output_offset: int, lo: int, hi: int,
                 bound: int):
        self.available = False
        m, r = int(multiplier), -int(shift)
        if not _valid_multiplier(m) or not 0 <= r <= 30:
            return
        j = 30 if m == 0 else min((m & -m).bit_length() - 1, 30)
        h = (1 << (r - 1)) if r else 0
        self.mult = m >> j
        self.fix_shift = (31 - j) if r else -1            # F = 2^fix_shift, none when r = 0
        self.shift = 31 + r - j
        const = ((1 << 30) + h * _INT32_LIMIT) >> j
        zp = int(output_offset)
        folded = const + (zp << self.shift)
        fix = (1 << self.fix_shift) if r else 0
        bound = int(bound)
        if max(abs(folded), abs(const)) + bound * self.mult + fix < _INT32_LIMIT:
            self.dtype, self.const, self.zp = np.int32, folded, 0
        elif const + bound * self.mult + fix < (1 << 62) and abs(zp) < (1 << 20):
            self.dtype, self.const, self.zp = np.int64, const, zp
        else:
            return
        self.lo, self.hi = int(lo), int(hi)
        low = self.reference(-bound)
        high = self.reference(bound)
        self.clamp_needed = not (self.lo <= low and high <= self.hi)
        self.available = True

    def reference(self, x: int) -> int:
        """The unclamped result for one value (Python ints; monotone in x)."""
        p = x * self.mult + self.const - ((1 << self.fix_shift) if (x < 0 and self.fix_shift >= 0) else 0)
        return (p >> self.shift) + self.zp

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``x``: int32 array. Returns the clamped results as ``self.dtype``."""
        mult, fix_shift = self.mult, self.fix_shift
        if self.dtype is np.int32:
            if mult == 1:
                p = np.add(x, self.const)
            else:
                p = np.multiply(x, mult)
                p += self.const
            if fix_shift >= 0:
                fix = np.right_shift(x, 31)
                fix <<= fix_shift
                p += fix
        else:
            p = np.multiply(x, mult, dtype=np.int64)
            p += self.const
            if fix_shift >= 0:
                # -F where x < 0: in int32 while F <= 2^30, else in int64
                fix = np.right_shift(x, 31, dtype=np.int32 if fix_shift <= 30 else np.int64)
                fix <<= fix_shift
                p += fix
        p >>= self.shift
        if self.zp:
            p += self.zp
        if self.clamp_needed:
            clip_into(p, self.lo, self.hi, out=p)
        return p


def _saturation_range(multiplier: int, shift: int, lo: int, hi: int,
                      clamped) -> Optional[Tuple[int, int]]:
    """(base, top): the int32 accumulators from which clamp(MBQM(acc, m, shift), lo, hi)
    -- ``clamped``, the vectorised routine, monotone for m >= 0 and shift <= 0 -- can
    differ from lo (base: the last one still giving lo) up to the first one giving hi. The
    search uses the closed form floor((acc*m + 2^30) / 2^31) then the rounding shift on
    Python ints; the ends are then checked with ``clamped`` itself (None if they
    disagree: the caller keeps its plain path), which is all the table needs: by
    monotonicity every accumulator below base gives lo and every one from top on hi."""
    m, r = int(multiplier), -int(shift)

    def value(a: int) -> int:
        q = (a * m + (1 << 30)) >> 31
        if r > 0:
            q = (q + (1 << (r - 1)) - (1 if q < 0 else 0)) >> r
        return min(max(q, lo), hi)

    def first(pred) -> int:
        low, high = -_INT32_LIMIT, _INT32_LIMIT
        while low < high:
            mid = (low + high) // 2
            if pred(mid):
                high = mid
            else:
                low = mid + 1
        return low

    base = max(first(lambda a: value(a) > lo) - 1, -_INT32_LIMIT)
    top = min(first(lambda a: value(a) >= hi), _INT32_LIMIT - 1)
    ends = clamped(np.array([base, top], dtype=np.int64))
    if base > -_INT32_LIMIT and int(ends[0]) != lo:
        return None
    if top < _INT32_LIMIT - 1 and int(ends[1]) != hi:
        return None
    return base, top        # monotone: every accumulator below base gives lo, from top on hi


#: SaturatingTableFc works on at most this many outputs at a time (128 KiB of int64
#: indices): 2026-11, hello_world_int8's 16-output layers ran 0.12 us per sample on blocks of
#: 2048 samples and 0.22 on blocks of 4096 before the slicing
TABLE_FC_CHUNK_ELEMENTS = 16384


class SaturatingTableFc:
    """A per-tensor int8 fully connected layer whose output stage is read from a table of
    the accumulators it does not saturate (host-side, built from the plain routine).

    TFLM's int32 accumulator is wrap32(S + bias) with S = weights x (input + offset) (the
    C++ sum wraps modulo 2^32 at every step; the result is the exact sum modulo 2^32). The
    output g(acc) = clamp(MultiplyByQuantizedMultiplier(acc, m, shift) + zp, lo, hi) is
    monotone in acc (m >= 0 and a right shift; left shifts, which wrap acc << shift, are
    declined), so it equals g at acc clipped to [base, base + L - 1] where
    base is the last accumulator giving lo and base + L - 1 the first giving hi; the table
    holds g(base + j) for j < L. One float64 product (a column of ones carries
    offset x sum(weights) + bias + 2^31: every partial sum is an integer below 2^53, so
    the product is exact) gives S + bias + 2^31; converted to int64 (exact), its low 32
    bits (x & (2^32 - 1), the value modulo 2^32) are the wrapped accumulator plus 2^31;
    minus 2^31 + base it indexes the table with mode="clip", which is the clip. (When the
    raw sums stay below 2^24, the product runs in float32 -- exact in any order -- and the
    constants are added in int64.) ``available`` is False when the table would exceed
    ``max_entries`` or the sums could reach 2^53."""

    def __init__(self, weights: np.ndarray, input_offset: int, input_range: Tuple[int, int],
                 bias: Optional[np.ndarray], multiplier: int, shift: int, output_offset: int,
                 lo: int, hi: int, max_entries: int = 1 << 18):
        from .quantization import multiply_by_quantized_multiplier
        self.available = False
        if int(shift) > 0 or not _valid_multiplier(int(multiplier)):
            return      # a left shift wraps acc << shift: the output is not monotone in acc
        w = np.asarray(weights, dtype=np.int64)
        rows, depth = w.shape
        o = int(input_offset)
        biggest = max(abs(int(input_range[0]) + o), abs(int(input_range[1]) + o),
                      abs(int(input_range[0])), abs(int(input_range[1])))
        b = np.zeros(rows, np.int64) if bias is None else np.asarray(bias, np.int64).reshape(-1)
        consts = o * w.sum(axis=1) + b + _INT32_LIMIT
        if float(np.abs(w).sum(axis=1).max(initial=0)) * biggest + float(np.abs(consts).max(initial=0)) >= 2.0 ** 52:
            return

        zp = int(output_offset)

        def clamped(a):
            a = np.asarray(a, dtype=np.int64)
            return np.clip(multiply_by_quantized_multiplier(a, int(multiplier), int(shift)),
                           int(lo) - zp, int(hi) - zp)

        def g(a):
            return clamped(a) + zp

        ends = _saturation_range(multiplier, shift, int(lo) - zp, int(hi) - zp, clamped)
        if ends is None:
            return
        base, top = ends
        entries = top - base + 1
        if entries > max_entries:
            return
        self.table = g(np.arange(base, top + 1, dtype=np.int64)).astype(np.int8)
        matrix = np.empty((depth + 1, rows), np.float64)
        matrix[:depth] = w.T
        matrix[depth] = consts
        self.matrix = matrix
        self.index_offset = _INT32_LIMIT + base
        # raw sums below 2^24 (any order): float32 products, the constants added in int64
        biggest_raw = max(abs(int(input_range[0])), abs(int(input_range[1])))
        self.weights32 = (np.ascontiguousarray(w.T.astype(np.float32))
                          if int(np.abs(w).sum(axis=1).max(initial=0)) * biggest_raw < (1 << 24) else None)
        self.consts = consts
        self.available = True

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        """``x``: (N, depth) raw int8 inputs; ``out``: (N, rows) int8, written (in
        slices of rows whose int64 indices stay within :data:`TABLE_FC_CHUNK_ELEMENTS`:
        the index passes then run in cache, whatever the block size)."""
        n, outputs = out.shape
        step = max(1, TABLE_FC_CHUNK_ELEMENTS // max(1, outputs))
        if n <= step:
            self._rows(x, out)
            return
        for start in range(0, n, step):
            self._rows(x[start:start + step], out[start:start + step])

    def _rows(self, x: np.ndarray, out: np.ndarray) -> None:
        n, depth = x.shape
        if self.weights32 is not None:
            index = (x.astype(np.float32) @ self.weights32).astype(np.int64)
            index += self.consts
        else:
            x_aug = np.empty((n, depth + 1), np.float64)
            x_aug[:, :-1] = x
            x_aug[:, -1] = 1.0
            index = (x_aug @ self.matrix).astype(np.int64)
        index &= 0xFFFFFFFF
        index -= self.index_offset
        np.take(self.table, index, out=out, mode="clip")


class OutputTable:
    """post(clamp(MultiplyByQuantizedMultiplier(acc, m, shift), lo, hi)) for int32
    accumulators, read from a host table: the clamped value is monotone in acc (m >= 0,
    right shifts only), so it is constant below ``base`` and from ``base + len - 1`` on,
    and the table (built by the plain routine, ``post`` applied element-wise, e.g. a zero
    point and a C conversion) read with mode="clip" at acc - base gives it for every
    accumulator. ``available`` is False for left shifts or a table longer than
    ``max_entries``."""

    def __init__(self, multiplier: int, shift: int, lo: int, hi: int, post=None,
                 dtype=np.int8, max_entries: int = 1 << 18):
        from .quantization import multiply_by_quantized_multiplier
        self.available = False
        m, s = int(multiplier), int(shift)
        if s > 0 or not _valid_multiplier(m):
            return

        def inner(a):
            return np.clip(multiply_by_quantized_multiplier(np.asarray(a, np.int64), m, s), lo, hi)

        ends = _saturation_range(m, s, lo, hi, inner)
        if ends is None:
            return
        base, top = ends
        if top - base + 1 > max_entries:
            return
        values = inner(np.arange(base, top + 1, dtype=np.int64))
        if post is not None:
            values = post(values)
        self.table = np.asarray(values).astype(dtype)
        self.base = base
        self.available = True

    def read(self, acc: np.ndarray, out: np.ndarray) -> None:
        """``acc``: int64 accumulators (int32 values) -- modified; ``out`` written."""
        acc -= self.base
        np.take(self.table, acc, out=out, mode="clip")
