"""float32 ``logf`` / ``sinf`` / ``cosf`` bit for bit as glibc 2.36 on x86-64 computes them
(its FMA variants, which the library selects on CPUs with FMA/AVX2), vectorised with numpy.

TFLM's LOG, SIN, COS and LOG_SOFTMAX kernels call ``std::log`` / ``std::sin`` /
``std::cos`` on floats, i.e. the C library's ``logf`` / ``sinf`` / ``cosf``. None of them
is correctly rounded and numpy's float32 ufuncs differ from them in the last bit on many
inputs, so the algorithms are re-run here (all in float64, one rounding to float32 at the
end):

* ``logf``: x = 2^k z with z in [0x3f330000, 2 * 0x3f330000) as bits; a 16-entry table
  of (1/c, log c) near the centre of each sub-interval; log(x) = log1p(z/c - 1) + log c
  + k ln2 with a degree-4 polynomial. Subnormals are normalised first.
* ``sinf`` / ``cosf``: |x| < pi/4 straight to the polynomials (sin of tiny x is x, cos of
  tiny x is 1); |x| < 120 reduced by n = round(x * 2/pi) with one multiply-subtract;
  larger finite x reduced exactly with 192 bits of 4/pi in integer arithmetic. The
  quadrant picks the sine or (negated) cosine polynomial and the sign.

Every ``a * b + c`` that GCC contracts into a fused multiply-add in the FMA build is an
exact FMA here (:func:`kernels.internal.libm_float.fma64`). Invalid inputs give the x86 default
NaN (sign bit set); NaN inputs come back quieted, as the C code returns them.
"""
from __future__ import annotations

import numpy as np

from .libm_float import fma64

_F32 = np.float32
_F64 = np.float64
_DEFAULT_NAN = np.uint32(0xFFC00000).view(_F32)   # x86's NaN for an invalid operation


def _hex(s: str) -> float:
    return float.fromhex(s)


# ----------------------------------------------------------------------- logf
_LOGF_INVC = np.array([_hex(v) for v in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0", "0x1.3c995b0b80385p+0",
    "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0", "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0",
    "0x1.0953f419900a7p+0", "0x1p+0", "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1",
    "0x1.b2036576afce6p-1", "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1")])
_LOGF_LOGC = np.array([_hex(v) for v in (
    "-0x1.57bf7808caadep-2", "-0x1.2bef0a7c06ddbp-2", "-0x1.01eae7f513a67p-2", "-0x1.b31d8a68224e9p-3",
    "-0x1.6574f0ac07758p-3", "-0x1.1aa2bc79c81p-3", "-0x1.a4e76ce8c0e5ep-4", "-0x1.1973c5a611cccp-4",
    "-0x1.252f438e10c1ep-5", "0x0p+0", "0x1.aa5aa5df25984p-5", "0x1.c5e53aa362eb4p-4",
    "0x1.526e57720db08p-3", "0x1.bc2860d22477p-3", "0x1.1058bc8a07ee1p-2", "0x1.4043057b6ee09p-2")])
_LOGF_LN2 = _hex("0x1.62e42fefa39efp-1")
_LOGF_A0 = _hex("-0x1.00ea348b88334p-2")
_LOGF_A1 = _hex("0x1.5575b0be00b6ap-2")
_LOGF_A2 = _hex("-0x1.ffffef20a4123p-2")
_LOGF_OFF = 0x3F330000


def logf(x) -> np.ndarray:
    """glibc's logf (FMA variant) on a float32 array."""
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    ix = x.view(np.uint32).astype(np.int64)
    special = (ix - 0x00800000) & 0xFFFFFFFF >= 0x7F800000 - 0x00800000
    # subnormals: scale by 2^23 and take 23 off the exponent
    with np.errstate(all="ignore"):
        scaled = (x * _F32(8388608.0)).view(np.uint32).astype(np.int64) - (23 << 23)
    subnormal = special & (ix < 0x00800000) & (ix != 0)
    ix = np.where(subnormal, scaled, ix)
    tmp = (ix - _LOGF_OFF) & 0xFFFFFFFF
    i = (tmp >> 19) & 15
    k = np.where(tmp >= 1 << 31, tmp - (1 << 32), tmp) >> 23      # arithmetic shift
    iz = (ix - (tmp & (0x1FF << 23))) & 0xFFFFFFFF
    z = iz.astype(np.uint32).view(_F32).astype(_F64)
    r = fma64(z, _LOGF_INVC[i], -1.0)
    y0 = fma64(k.astype(_F64), _LOGF_LN2, _LOGF_LOGC[i])
    r2 = r * r
    y = fma64(_LOGF_A1, r, _LOGF_A2)
    y = fma64(_LOGF_A0, r2, y)
    y = fma64(y, r2, y0 + r)
    out = y.astype(_F32)
    out = np.where(ix == 0x3F800000, _F32(0.0), out)
    raw = x.view(np.uint32)
    zero = (raw & np.uint32(0x7FFFFFFF)) == 0
    nan = np.isnan(x)
    invalid = ~nan & ~zero & ((raw >> np.uint32(31)) == 1)
    out = np.where(special & zero, _F32(-np.inf), out)
    out = np.where(raw == 0x7F800000, x, out)
    out = np.where(invalid, _DEFAULT_NAN, out)
    out = np.where(nan, _quiet(x), out)
    return out.reshape(shape)


def _quiet(x: np.ndarray) -> np.ndarray:
    """NaNs with the quiet bit set (what an arithmetic operation returns for them)."""
    return (x.view(np.uint32) | np.uint32(0x00400000)).view(_F32)


# ------------------------------------------------------------------ sinf / cosf
_PIO4_TOP = 0x3F4         # abstop12 of pi/4 as a float
_TINY_TOP = 0x398         # abstop12(0x1p-12f)
_FAST_TOP = 0x42F         # abstop12(120.0f)
_INF_TOP = 0x7F8
_HPI_INV = _hex("0x1.45F306DC9C883p+23")   # 2/pi * 2^24
_HPI = _hex("0x1.921FB54442D18p0")
_C0, _C1, _C2, _C3, _C4 = 1.0, _hex("-0x1.ffffffd0c621cp-2"), _hex("0x1.55553e1068f19p-5"), \
    _hex("-0x1.6c087e89a359dp-10"), _hex("0x1.99343027bf8c3p-16")
_S1, _S2, _S3 = _hex("-0x1.555545995a603p-3"), _hex("0x1.1107605230bc4p-7"), _hex("-0x1.994eb3774cf24p-13")
_PI63 = _hex("0x1.921FB54442D18p-62")
_INV_PIO4 = np.array([
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
    0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
], dtype=np.uint64)
_M32 = np.uint64(0xFFFFFFFF)


def _poly(x, x2, use_cos, negate_cos):
    """The sine polynomial (``use_cos`` False) or the cosine one, negated where
    ``negate_cos`` (the second table entry), in float64 with glibc's FMAs."""
    x3 = x * x2
    s1 = fma64(x2, _S3, _S2)
    x7 = x3 * x2
    s = fma64(x3, _S1, x)
    sin_val = fma64(x7, s1, s)
    sgn = np.where(negate_cos, -1.0, 1.0)
    x4 = x2 * x2
    c2 = fma64(x2, sgn * _C4, sgn * _C3)
    c1 = fma64(x2, sgn * _C1, sgn * _C0)
    x6 = x4 * x2
    c = fma64(x4, sgn * _C2, c1)
    cos_val = fma64(x6, c2, c)
    return np.where(use_cos, cos_val, sin_val)


def _reduce_large(xi: np.ndarray):
    """(x reduced to [-pi/4, pi/4] as float64, quadrant n) for float bits ``xi`` (|x| >= 120)."""
    xi = xi.astype(np.uint64)
    base = ((xi >> np.uint64(26)) & np.uint64(15)).astype(np.intp)
    shift = (xi >> np.uint64(23)) & np.uint64(7)
    m = (((xi & np.uint64(0xFFFFFF)) | np.uint64(0x800000)) << shift) & _M32
    res0 = (m * _INV_PIO4[base]) & _M32                  # 32-bit product
    res1 = m * _INV_PIO4[base + 4]
    res2 = m * _INV_PIO4[base + 8]
    res0 = (res2 >> np.uint64(32)) | (res0 << np.uint64(32))
    res0 = res0 + res1                                    # wraps at 64 bits
    n = (res0 + (np.uint64(1) << np.uint64(61))) >> np.uint64(62)
    res0 = res0 - (n << np.uint64(62))
    return res0.view(np.int64).astype(_F64) * _PI63, n.astype(np.int64)


def _sincosf(y, cosine: bool) -> np.ndarray:
    y = np.asarray(y, dtype=_F32)
    shape = y.shape
    y = y.reshape(-1)
    bits = y.view(np.uint32)
    top = ((bits >> np.uint32(20)) & np.uint32(0x7FF)).astype(np.int64)
    sign = (bits >> np.uint32(31)).astype(np.int64)
    with np.errstate(all="ignore"):
        x = y.astype(_F64)
        # small: no reduction
        small_val = _poly(x, x * x, np.full(x.shape, cosine), np.zeros(x.shape, bool))
        # |y| < 120: n = ((int32)(x * 2/pi * 2^24) + 2^23) >> 24
        r = x * _HPI_INV
        ri = np.where(top < _FAST_TOP, r, 0.0).astype(np.int64)     # truncation
        n_fast = (ri + 0x800000) >> 24
        x_fast = fma64(-n_fast.astype(_F64), _HPI, x)
        # large finite
        x_large, n_large = _reduce_large(np.where((top >= _FAST_TOP) & (top < _INF_TOP), bits, 0x43000000))
        fast = top < _FAST_TOP
        xr = np.where(fast, x_fast, x_large)
        q = np.where(fast, n_fast, n_large + sign)           # quadrant incl. the sign for large x
        n = np.where(fast, n_fast, n_large)
        s = np.where((q & 3) == 1, -1.0, np.where((q & 3) == 2, -1.0, 1.0))
        use_cos = ((n & 1) == 1) != cosine
        red_val = _poly(xr * s, xr * xr, use_cos, (q & 2) != 0)
        out = np.where(top < _PIO4_TOP, small_val, red_val).astype(_F32)
        tiny = top < _TINY_TOP
        out = np.where(tiny, _F32(1.0) if cosine else y, out)
        out = np.where(np.isinf(y), _DEFAULT_NAN, out)
        out = np.where(np.isnan(y), _quiet(y), out)
    return out.reshape(shape)


def sinf(x) -> np.ndarray:
    """glibc's sinf (FMA variant) on a float32 array."""
    return _sincosf(x, cosine=False)


def cosf(x) -> np.ndarray:
    """glibc's cosf (FMA variant) on a float32 array."""
    return _sincosf(x, cosine=True)
