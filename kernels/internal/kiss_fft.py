"""The kiss FFT (v130, as TFLM's signal library builds it) in numpy: complex FFT and the
real-FFT split, for its three builds — FIXED_POINT 16 (int16 scalars), FIXED_POINT 32
(int32 scalars) and float.

Facts reproduced (kissfft v130 kiss_fft.c / _kiss_fft_guts.h / tools/kiss_fftr.c, with
TFLM's patch):

* The length is factored into radix 4s first, then 2s, then odd numbers 3, 5, 7, ...
  (a candidate larger than floor(sqrt(n)) ends the search: the rest is one factor).
  The transform is a decimation in time: the input is read in digit-reversed order and
  every stage combines ``fstride`` blocks of ``p`` sub-transforms of length ``m`` with
  radix-``p`` butterflies. Only radices 2, 3, 4 and 5 exist here: TFLM's patch makes the
  generic butterfly's temporary allocation a null pointer, so other factors crash TFLM.
* Fixed point: a product is widened (int32 for 16-bit, int64 for 32-bit) and rounded
  back with ``(x + 2^(FRACBITS-1)) >> FRACBITS`` (FRACBITS 15 / 31) then truncated to the
  scalar type; every butterfly input is first divided by the radix by multiplying with
  ``SAMP_MAX / p`` (integer division) and rounding the same way. Sums are stored back
  into scalars (two's complement wrap); "half of" is an arithmetic shift by one.
* Twiddles: ``floor(0.5 + SAMP_MAX * cos(phase))`` (and sin) with
  ``phase = -2*pi*i / nfft``; float: ``(float)cos(phase)``. The real-FFT split has its own
  twiddles with ``phase = -pi * ((i + 1) / ncfft + 0.5)``.
* Real FFT of length N: the N real samples are a complex FFT of N/2 points; then
  DC/Nyquist from bin 0 (both halved first), and for k = 1..N/4 the pair (k, N/2-k)
  halved, summed/differenced, the difference rotated by the split twiddle, and each
  result halved again (``(x) >> 1`` fixed point, ``x * 0.5f`` float after TFLM's patch).

cos/sin come from Python's math module (the C library's), evaluated once per table.
"""
from __future__ import annotations

import math
from typing import List, Tuple

import numpy as np

from .signal_common import wrap32

PI_ALLOC = 3.141592653589793238462643383279502884197169399375105820974944
PI_FFTR = 3.14159265358979323846264338327


def kf_factor(n: int) -> List[Tuple[int, int]]:
    """kiss_fft's (radix, remaining length) list for a length-n transform."""
    factors = []
    p = 4
    floor_sqrt = math.floor(math.sqrt(float(n)))
    while True:
        while n % p:
            if p == 4:
                p = 2
            elif p == 2:
                p = 3
            else:
                p += 2
            if p > floor_sqrt:
                p = n
        n //= p
        factors.append((p, n))
        if n <= 1:
            break
    return factors


def supported_length(nfft: int) -> bool:
    """True when TFLM's kiss build can transform ``nfft`` points (radices 2..5 only)."""
    if nfft < 2:
        return False
    return all(p in (2, 3, 4, 5) for p, _ in kf_factor(nfft))


class _Arith:
    """Scalar arithmetic of one kiss build on numpy arrays.

    The 16-bit build keeps its scalars in int16 arrays, as the C code stores them: sums
    and differences of scalars wrap there (modular, so a chain of them wraps once, as C's
    store of an ``int`` expression does), and the products (SAMPPROD, int32) are taken in
    int32, where no product sum of the build overflows: |a*b - c*d| <= 2 * 32768 * 32767
    plus the rounding 2^14 stays below 2^31. The other builds hold their scalars in int64
    (32-bit) or float32 and wrap explicitly."""

    def __init__(self, kind: str):
        self.kind = kind
        self.fixed = kind != "float"
        if kind == "int16":
            self.fracbits, self.samp_max, self.wrap = 15, 32767, _to_int16
            self.dtype, self.product = np.int16, np.int32
        elif kind == "int32":
            self.fracbits, self.samp_max, self.wrap = 31, 2147483647, wrap32
            self.dtype, self.product = np.int64, np.int64
        elif kind == "float":
            self.wrap = lambda x: x
            self.dtype = self.product = np.float32
        else:
            raise ValueError(kind)

    def sround(self, x):
        """Round a product (fixed point) back to a scalar: (x + 2^(FRACBITS-1)) >> FRACBITS."""
        if self.kind == "int16":
            x = np.add(x, 1 << 14, out=x) if isinstance(x, np.ndarray) else x + (1 << 14)
            return (x >> 15).astype(np.int16)
        return self.wrap((x + (1 << (self.fracbits - 1))) >> self.fracbits)

    def _mul(self, a, b):
        if self.kind == "int16":
            return np.multiply(a, b, dtype=np.int32)
        return a * b

    def s_mul(self, a, b):
        if self.fixed:
            return self.sround(self._mul(a, b))
        return a * b

    def cmul(self, ar, ai, br, bi):
        if self.fixed:
            real = self._mul(ar, br)
            real -= self._mul(ai, bi)
            imag = self._mul(ar, bi)
            imag += self._mul(ai, br)
            return self.sround(real), self.sround(imag)
        return ar * br - ai * bi, ar * bi + ai * br

    def fixdiv(self, xr, xi, p):
        if self.fixed:
            k = self.samp_max // p
            return self.sround(self._mul(xr, k)), self.sround(self._mul(xi, k))
        return xr, xi

    def wide_add(self, a, b):
        """``a + b`` as C computes it before a store: in ``int`` for the 16-bit build."""
        if self.kind == "int16":
            return np.add(a, b, dtype=np.int32)
        return a + b

    def wide_sub(self, a, b):
        if self.kind == "int16":
            return np.subtract(a, b, dtype=np.int32)
        return a - b

    def half(self, x):
        """HALF_OF of a C expression value (int for int16, int32 for int32, float)."""
        if self.kind == "int16":
            return x >> 1
        if self.kind == "int32":
            return wrap32(x) >> 1
        return x * np.float32(0.5)

    def twiddle(self, phase: float):
        c, s = math.cos(phase), math.sin(phase)
        if self.fixed:
            return math.floor(0.5 + self.samp_max * c), math.floor(0.5 + self.samp_max * s)
        return float(np.float32(c)), float(np.float32(s))

    def array(self, values):
        return np.asarray(values, self.dtype)


def _to_int16(x):
    """C's store into an int16 scalar (two's complement wrap); int16 arrays as they are."""
    if isinstance(x, np.ndarray):
        return x if x.dtype == np.int16 else x.astype(np.int16)
    if isinstance(x, np.integer):
        return np.int16(((int(x) + 32768) & 0xFFFF) - 32768)
    return ((x + 32768) & 0xFFFF) - 32768


class KissFft:
    """A complex kiss FFT of ``nfft`` points (forward or inverse) on batches."""

    def __init__(self, nfft: int, kind: str, inverse: bool = False):
        if not supported_length(nfft):
            raise ValueError(f"kiss fft length {nfft} needs radices other than 2, 3, 4, 5")
        self.nfft, self.inverse = nfft, inverse
        self.ar = ar = _Arith(kind)
        tw = []
        for i in range(nfft):
            phase = -2 * PI_ALLOC * i / nfft
            if inverse:
                phase *= -1
            tw.append(ar.twiddle(phase))
        self.tw_r = ar.array([t[0] for t in tw])
        self.tw_i = ar.array([t[1] for t in tw])
        self.factors = kf_factor(nfft)
        # digit-reversed input order of the decimation in time
        rem = np.arange(nfft)
        idx = np.zeros(nfft, np.int64)
        stride = 1
        for p, m in self.factors:
            idx += (rem // m) * stride
            rem = rem % m
            stride *= p
        self.order = idx
        self.stages = []
        fstride = 1
        for p, m in self.factors:
            self.stages.append((p, m, fstride))
            fstride *= p

    def __call__(self, xr: np.ndarray, xi: np.ndarray):
        """Transform rows of (B, nfft) arrays (scalars as int64 / float32)."""
        fr = xr[:, self.order]
        fi = xi[:, self.order]
        batch = fr.shape[0]
        for p, m, fstride in reversed(self.stages):
            shape = (batch, fstride, p, m)
            gr = fr.reshape(shape)
            gi = fi.reshape(shape)
            xs = [(gr[:, :, q, :], gi[:, :, q, :]) for q in range(p)]
            u = np.arange(m)
            tws = [(self.tw_r[q * u * fstride], self.tw_i[q * u * fstride]) for q in range(p)]
            if p == 2:
                out = self._bfly2(xs, tws)
            elif p == 3:
                out = self._bfly3(xs, tws, fstride * m)
            elif p == 4:
                out = self._bfly4(xs, tws)
            else:
                out = self._bfly5(xs, tws, fstride * m)
            fr = np.stack([o[0] for o in out], axis=2).reshape(batch, self.nfft)
            fi = np.stack([o[1] for o in out], axis=2).reshape(batch, self.nfft)
        return fr, fi

    def _bfly2(self, xs, tws):
        ar, w = self.ar, self.ar.wrap
        f0 = ar.fixdiv(*xs[0], 2)
        f1 = ar.fixdiv(*xs[1], 2)
        tr, ti = ar.cmul(f1[0], f1[1], *tws[1])
        return [(w(f0[0] + tr), w(f0[1] + ti)), (w(f0[0] - tr), w(f0[1] - ti))]

    def _bfly4(self, xs, tws):
        ar, w = self.ar, self.ar.wrap
        f = [ar.fixdiv(*x, 4) for x in xs]
        s0 = ar.cmul(f[1][0], f[1][1], *tws[1])
        s1 = ar.cmul(f[2][0], f[2][1], *tws[2])
        s2 = ar.cmul(f[3][0], f[3][1], *tws[3])
        s5 = (w(f[0][0] - s1[0]), w(f[0][1] - s1[1]))
        f0 = (w(f[0][0] + s1[0]), w(f[0][1] + s1[1]))
        s3 = (w(s0[0] + s2[0]), w(s0[1] + s2[1]))
        s4 = (w(s0[0] - s2[0]), w(s0[1] - s2[1]))
        o2 = (w(f0[0] - s3[0]), w(f0[1] - s3[1]))
        o0 = (w(f0[0] + s3[0]), w(f0[1] + s3[1]))
        if self.inverse:
            o1 = (w(s5[0] - s4[1]), w(s5[1] + s4[0]))
            o3 = (w(s5[0] + s4[1]), w(s5[1] - s4[0]))
        else:
            o1 = (w(s5[0] + s4[1]), w(s5[1] - s4[0]))
            o3 = (w(s5[0] - s4[1]), w(s5[1] + s4[0]))
        return [o0, o1, o2, o3]

    def _bfly3(self, xs, tws, epi_index):
        ar, w = self.ar, self.ar.wrap
        epi_i = self.tw_i[epi_index]
        f = [ar.fixdiv(*x, 3) for x in xs]
        s1 = ar.cmul(f[1][0], f[1][1], *tws[1])
        s2 = ar.cmul(f[2][0], f[2][1], *tws[2])
        s3 = (w(s1[0] + s2[0]), w(s1[1] + s2[1]))
        s0 = (w(s1[0] - s2[0]), w(s1[1] - s2[1]))
        o1 = (w(f[0][0] - ar.half(s3[0])), w(f[0][1] - ar.half(s3[1])))
        s0 = (ar.s_mul(s0[0], epi_i), ar.s_mul(s0[1], epi_i))
        o0 = (w(f[0][0] + s3[0]), w(f[0][1] + s3[1]))
        o2 = (w(o1[0] + s0[1]), w(o1[1] - s0[0]))
        o1 = (w(o1[0] - s0[1]), w(o1[1] + s0[0]))
        return [o0, o1, o2]

    def _bfly5(self, xs, tws, ya_index):
        ar, w = self.ar, self.ar.wrap
        ya = (self.tw_r[ya_index], self.tw_i[ya_index])
        yb = (self.tw_r[2 * ya_index], self.tw_i[2 * ya_index])
        f = [ar.fixdiv(*x, 5) for x in xs]
        sm = ar.s_mul
        s0 = f[0]
        s1 = ar.cmul(f[1][0], f[1][1], *tws[1])
        s2 = ar.cmul(f[2][0], f[2][1], *tws[2])
        s3 = ar.cmul(f[3][0], f[3][1], *tws[3])
        s4 = ar.cmul(f[4][0], f[4][1], *tws[4])
        s7 = (w(s1[0] + s4[0]), w(s1[1] + s4[1]))
        s10 = (w(s1[0] - s4[0]), w(s1[1] - s4[1]))
        s8 = (w(s2[0] + s3[0]), w(s2[1] + s3[1]))
        s9 = (w(s2[0] - s3[0]), w(s2[1] - s3[1]))
        o0 = (w(s0[0] + (s7[0] + s8[0])), w(s0[1] + (s7[1] + s8[1])))
        s5 = (w(s0[0] + sm(s7[0], ya[0]) + sm(s8[0], yb[0])),
              w(s0[1] + sm(s7[1], ya[0]) + sm(s8[1], yb[0])))
        s6 = (w(sm(s10[1], ya[1]) + sm(s9[1], yb[1])),
              w(-sm(s10[0], ya[1]) - sm(s9[0], yb[1])))
        o1 = (w(s5[0] - s6[0]), w(s5[1] - s6[1]))
        o4 = (w(s5[0] + s6[0]), w(s5[1] + s6[1]))
        s11 = (w(s0[0] + sm(s7[0], yb[0]) + sm(s8[0], ya[0])),
               w(s0[1] + sm(s7[1], yb[0]) + sm(s8[1], ya[0])))
        s12 = (w(-sm(s10[1], yb[1]) + sm(s9[1], ya[1])),
               w(sm(s10[0], yb[1]) - sm(s9[0], ya[1])))
        o2 = (w(s11[0] + s12[0]), w(s11[1] + s12[1]))
        o3 = (w(s11[0] - s12[0]), w(s11[1] - s12[1]))
        return [o0, o1, o2, o3, o4]


class KissFftr:
    """kiss_fftr / kiss_fftri of an even length ``nfft`` (real signal <-> nfft/2+1 bins)."""

    def __init__(self, nfft: int, kind: str, inverse: bool = False):
        if nfft & 1:
            raise ValueError("real FFT length must be even")
        self.nfft, self.kind, self.inverse = nfft, kind, inverse
        self.ncfft = ncfft = nfft // 2
        self.sub = KissFft(ncfft, kind, inverse)
        self.ar = ar = self.sub.ar
        sup = []
        for i in range(ncfft // 2):
            phase = -PI_FFTR * (float(i + 1) / ncfft + 0.5)
            if inverse:
                phase *= -1
            sup.append(ar.twiddle(phase))
        self.sup_r = ar.array([t[0] for t in sup])
        self.sup_i = ar.array([t[1] for t in sup])

    def forward(self, x: np.ndarray):
        """(B, nfft) real scalars -> (B, ncfft+1) real and imaginary parts."""
        ar, w, ncfft = self.ar, self.ar.wrap, self.ncfft
        x = ar.array(x)
        tr, ti = self.sub(x[:, 0::2], x[:, 1::2])
        batch = x.shape[0]
        out_r = ar.array(np.zeros((batch, ncfft + 1)))
        out_i = ar.array(np.zeros((batch, ncfft + 1)))
        dr, di = ar.fixdiv(tr[:, 0], ti[:, 0], 2)
        out_r[:, 0] = w(dr + di)
        out_r[:, ncfft] = w(dr - di)
        k = np.arange(1, ncfft // 2 + 1)
        if k.size:
            fpk = ar.fixdiv(tr[:, k], ti[:, k], 2)
            fpnk = ar.fixdiv(tr[:, ncfft - k], w(-ti[:, ncfft - k]), 2)
            f1k = (w(fpk[0] + fpnk[0]), w(fpk[1] + fpnk[1]))
            f2k = (w(fpk[0] - fpnk[0]), w(fpk[1] - fpnk[1]))
            twr, twi = ar.cmul(f2k[0], f2k[1], self.sup_r[k - 1], self.sup_i[k - 1])
            out_r[:, k] = w(ar.half(ar.wide_add(f1k[0], twr)))
            out_i[:, k] = w(ar.half(ar.wide_add(f1k[1], twi)))
            out_r[:, ncfft - k] = w(ar.half(ar.wide_sub(f1k[0], twr)))
            out_i[:, ncfft - k] = w(ar.half(ar.wide_sub(twi, f1k[1])))
        return out_r, out_i

    def inverse_transform(self, fr: np.ndarray, fi: np.ndarray):
        """(B, ncfft+1) bins -> (B, nfft) real scalars (kiss_fftri)."""
        ar, w, ncfft = self.ar, self.ar.wrap, self.ncfft
        fr, fi = ar.array(fr), ar.array(fi)
        batch = fr.shape[0]
        tr = ar.array(np.zeros((batch, ncfft)))
        ti = ar.array(np.zeros((batch, ncfft)))
        t0 = ar.fixdiv(w(fr[:, 0] + fr[:, ncfft]), w(fr[:, 0] - fr[:, ncfft]), 2)
        tr[:, 0], ti[:, 0] = t0
        k = np.arange(1, ncfft // 2 + 1)
        if k.size:
            fk = ar.fixdiv(fr[:, k], fi[:, k], 2)
            fnkc = ar.fixdiv(fr[:, ncfft - k], w(-fi[:, ncfft - k]), 2)
            fek = (w(fk[0] + fnkc[0]), w(fk[1] + fnkc[1]))
            tmp = (w(fk[0] - fnkc[0]), w(fk[1] - fnkc[1]))
            fok = ar.cmul(tmp[0], tmp[1], self.sup_r[k - 1], self.sup_i[k - 1])
            tr[:, k] = w(fek[0] + fok[0])
            ti[:, k] = w(fek[1] + fok[1])
            tr[:, ncfft - k] = w(fek[0] - fok[0])
            if ar.fixed:
                ti[:, ncfft - k] = w(-w(fek[1] - fok[1]))
            else:
                ti[:, ncfft - k] = (fek[1] - fok[1]) * np.float32(-1.0)
        yr, yi = self.sub(tr, ti)
        out = ar.array(np.zeros((batch, self.nfft)))
        out[:, 0::2] = yr
        out[:, 1::2] = yi
        return out
