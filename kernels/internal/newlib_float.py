"""float32 ``expf`` bit for bit as newlib's libm for arm-none-eabi computes it (Debian's
libnewlib-arm-none-eabi, the C library TFLM's Cortex-M builds link): the fdlibm
single-precision algorithm (newlib's ``__ieee754_expf``, the "obsolete math" the soft-float
multilibs use), every operation one float32 rounding, vectorised with numpy.

exp(x) = 2^k * exp(r): r = x - k ln2 in two pieces (hi - lo; k = 1 or -1 for 0.5 ln2 <
|x| < 1.5 ln2, else k = trunc(x / ln2 +- 0.5)), exp(r) = 1 - ((lo - r c / (2 - c)) - hi)
with c = r - r^2 (P1 + r^2 (P2 + r^2 (P3 + r^2 (P4 + r^2 P5)))), and k added to the
exponent bits (k < -125: k + 100, then times 2^-100). |x| < 2^-28 gives 1 + x; NaN,
infinities, overflow (x > 88.7216796875) and underflow (x < -103.972084) as IEEE.
"""
from __future__ import annotations

import numpy as np

_F32 = np.float32

_LN2_HI = _F32(6.9313812256e-01)     # 0x3f317180
_LN2_LO = _F32(9.0580006145e-06)     # 0x3717f7d1
_INV_LN2 = _F32(1.4426950216e+00)    # 0x3fb8aa3b
_P = tuple(_F32(v) for v in (1.6666667163e-01, -2.7777778450e-03, 6.6137559770e-05,
                             -1.6533901999e-06, 4.1381369442e-08))
_TWO_M100 = _F32(7.8886090522e-31)  # 2^-100
_LOG_MAX_BITS = 0x42b17217
_LOG_MIN_BITS = 0x42cff1b5


def expf(x) -> np.ndarray:
    """newlib's expf on a float32 array (any shape); float32 array."""
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    bits = x.view(np.int32).astype(np.int64)
    negative = bits < 0
    magnitude = bits & 0x7FFFFFFF
    one, two = _F32(1.0), _F32(2.0)
    with np.errstate(all="ignore"):
        # argument reduction
        near = (magnitude > 0x3EB17218) & (magnitude < 0x3F851592)
        far = magnitude >= 0x3F851592
        half = np.where(negative, _F32(-0.5), _F32(0.5)).astype(_F32)
        k_far = np.trunc((_INV_LN2 * x + half).astype(_F32))
        k_far = np.where(far & np.isfinite(k_far), k_far, 0).astype(np.int64)
        k = np.where(near, np.where(negative, -1, 1), np.where(far, k_far, 0))
        t = k_far.astype(_F32)
        sign_hi = np.where(negative, -_LN2_HI, _LN2_HI).astype(_F32)
        sign_lo = np.where(negative, -_LN2_LO, _LN2_LO).astype(_F32)
        hi = np.where(near, (x - sign_hi).astype(_F32), (x - t * _LN2_HI).astype(_F32)).astype(_F32)
        lo = np.where(near, sign_lo, (t * _LN2_LO).astype(_F32)).astype(_F32)
        reduced = near | far
        r = np.where(reduced, (hi - lo).astype(_F32), x).astype(_F32)
        # primary range
        tt = (r * r).astype(_F32)
        poly = _P[4]
        for p in _P[3::-1]:
            poly = (p + (tt * poly).astype(_F32)).astype(_F32)
        c = (r - (tt * poly).astype(_F32)).astype(_F32)
        rc = (r * c).astype(_F32)
        small = (one - ((rc / (c - two)).astype(_F32) - r).astype(_F32)).astype(_F32)
        y = (one - ((lo - (rc / (two - c)).astype(_F32)).astype(_F32) - hi).astype(_F32)).astype(_F32)
        ybits = y.view(np.int32).astype(np.int64)
        normal = k >= -125
        scaled = np.where(normal, ybits + (k << 23), ybits + ((k + 100) << 23))
        scaled_f = (scaled & 0xFFFFFFFF).astype(np.uint32).view(_F32)
        scaled_f = np.where(normal, scaled_f, (scaled_f * _TWO_M100).astype(_F32)).astype(_F32)
        result = np.where(k == 0, small, scaled_f).astype(_F32)
        tiny = magnitude < 0x31800000
        result = np.where(tiny, (one + x).astype(_F32), result)
        result = np.where(negative & (magnitude > _LOG_MIN_BITS), _F32(0.0), result)
        result = np.where(~negative & (bits > _LOG_MAX_BITS), _F32(np.inf), result)
        result = np.where(magnitude == 0x7F800000, np.where(negative, _F32(0.0), x), result)
        result = np.where(magnitude > 0x7F800000, (x + x).astype(_F32), result)
    return result.astype(_F32).reshape(shape)
