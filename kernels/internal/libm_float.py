"""float32 ``expf`` / ``tanhf`` / ``expm1f`` bit for bit as the C library the tflite-micro
package calls (glibc 2.36 on x86-64), vectorised with numpy.

TFLM's float kernels call ``std::exp(float)`` and ``std::tanh(float)``, i.e. the C
library's ``expf`` and ``tanhf``; neither is correctly rounded, so numpy's ``np.exp`` /
``np.tanh`` differ from them on some inputs. This module re-runs glibc's algorithms:

* ``expf``: glibc's table-driven double-precision algorithm (32-entry 2^(i/32) table,
  cubic polynomial) in its x86-64 FMA variant, which the library selects on CPUs with
  FMA/AVX2. Fused multiply-adds are emulated exactly in float64 (Dekker product, TwoSum,
  round-to-odd; Boldo & Melquiond).
* ``expm1f`` / ``tanhf``: the fdlibm single-precision algorithms (float32 arithmetic,
  one rounding per operation), which glibc 2.36 uses.

Both were checked against the C library on every one of the 2^32 float32 inputs.
"""
from __future__ import annotations

import numpy as np

from .quantization import ACT_NONE, ACT_RELU, ACT_RELU6, ACT_RELU_N1_TO_1, ACT_SIGN_BIT, ACT_TANH

ACT_SIGMOID = 6   # TfLiteFusedActivation kTfLiteActSigmoid (not expressible in the schema)

_F32 = np.float32
_F64 = np.float64

# ------------------------------------------------------------- exact double FMA
_SPLITTER = _F64(134217729.0)  # 2^27 + 1


def _split(x):
    c = _SPLITTER * x
    hi = c - (c - x)
    return hi, x - hi


def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _two_sum(a, b):
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _add_round_to_odd(a, b):
    s, e = _two_sum(a, b)
    bits = s.view(np.int64)
    inexact_even = (e != 0) & ((bits & 1) == 0)
    step = np.where((e > 0) == (s > 0), 1, -1)
    return np.where(inexact_even, bits + step, bits).view(np.float64)


def fma64(a, b, c):
    """Correctly rounded a*b + c for float64 arrays (no overflow / underflow)."""
    a = np.asarray(a, dtype=_F64)
    b = np.asarray(b, dtype=_F64)
    c = np.asarray(c, dtype=_F64)
    a, b, c = np.broadcast_arrays(a, b, c)
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    return th + _add_round_to_odd(tl, ul)


# ---------------------------------------------------------------------- expf
_EXP2F_TAB = np.array([
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
], dtype=np.uint64)
_N = 32
_INVLN2N = _F64(float.fromhex("0x1.71547652b82fep+0") * _N)
_C0 = _F64(float.fromhex("0x1.c6af84b912394p-5") / _N / _N / _N)
_C1 = _F64(float.fromhex("0x1.ebfce50fac4f3p-3") / _N / _N)
_C2 = _F64(float.fromhex("0x1.62e42ff0c52d6p-1") / _N)
_EXP_OVERFLOW = _F32(float.fromhex("0x1.62e42ep6"))
_EXP_UNDERFLOW = _F32(float.fromhex("-0x1.9fe368p6"))


def expf(x) -> np.ndarray:
    """glibc's expf (FMA variant) on a float32 array."""
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    nan = np.isnan(x)
    xd = np.clip(np.where(nan, _F32(0.0), x), _F32(-110.0), _F32(90.0)).astype(_F64)
    # z = x * 32/ln2 exactly as hi + lo; k = its nearest integer (ties to even), i.e.
    # fma(InvLn2N, x, 0x1.8p52) - 0x1.8p52
    z_hi, z_lo = _two_prod(_INVLN2N, xd)
    k = np.rint(z_hi)
    d = z_hi - k                                # exact
    k = np.where((d == 0.5) & (z_lo > 0), k + 1, k)
    k = np.where((d == -0.5) & (z_lo < 0), k - 1, k)
    r = (z_hi - k) + z_lo                       # fma(InvLn2N, x, -k): one rounding
    ki = k.astype(np.int64)
    t = _EXP2F_TAB[ki & (_N - 1)] + (ki.astype(np.uint64) << np.uint64(52 - 5))
    s = t.view(_F64)
    y = fma64(fma64(_C0, r, _C1), r * r, fma64(_C2, r, _F64(1.0)))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = (y * s).astype(_F32)
        out = np.where(x > _EXP_OVERFLOW, _F32(np.inf), out)
        out = np.where(x < _EXP_UNDERFLOW, _F32(0.0), out)
        out = np.where(nan, x + x, out)
    return out.reshape(shape)


# -------------------------------------------------------------------- expm1f
_LN2_HI = _F32(6.9313812256e-01)
_LN2_LO = _F32(9.0580006145e-06)
_INVLN2 = _F32(1.4426950216e+00)
_Q1 = _F32(-3.3333335072e-02)
_Q2 = _F32(1.5873016091e-03)
_Q3 = _F32(-7.9365076090e-05)
_Q4 = _F32(4.0082177293e-06)
_Q5 = _F32(-2.0109921195e-07)
_ONE = _F32(1.0)
_HALF = _F32(0.5)


def _fma(a, b, c) -> np.ndarray:
    """float32 fused multiply-add (one rounding)."""
    from .matmul import float32_fma
    return float32_fma(a, b, c)


def _bits(x):
    return x.view(np.uint32)


def _add_exponent(y, k):
    """SET_FLOAT_WORD(y, GET_FLOAT_WORD(y) + (k << 23))."""
    b = y.view(np.int32).astype(np.int64) + (k.astype(np.int64) << 23)
    return (b & 0xFFFFFFFF).astype(np.uint32).view(_F32)


def expm1f(x, fused: bool = False) -> np.ndarray:
    """fdlibm's expm1f (glibc 2.36; newlib's is the same code) on a float32 array.

    ``fused``: the code as gcc compiles it for an FPU with fused multiply-add and
    -ffp-contract=fast (newlib's hard-float Armv8-M multilibs): the polynomial, the
    ``3 - r1 * hfx`` and ``6 - x * t`` terms, ``x * e - hxs``, ``x * (e - c) - c`` and
    ``0.5 * (x - e) - 0.5`` are single-rounding fused multiply-adds (read off the
    disassembly of newlib 3.3.0's thumb/v8-m.main+dp/hard libm)."""
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    with np.errstate(all="ignore"):
        hx = _bits(x) & np.uint32(0x7FFFFFFF)
        neg = (_bits(x) >> np.uint32(31)) == 1
        result = np.zeros_like(x)
        done = np.zeros(x.shape, dtype=bool)
        # huge / non-finite
        nan = hx > 0x7F800000
        result = np.where(nan, x + x, result)
        done |= nan
        inf = hx == 0x7F800000
        result = np.where(inf & ~done, np.where(neg, _F32(-1.0), x), result)
        done |= inf
        over = (hx >= 0x42B17218) & ~done & (x > _F32(8.8721679688e+01))
        result = np.where(over, _F32(np.inf), result)
        done |= over
        minus_one = (hx >= 0x4195B844) & neg & ~done
        result = np.where(minus_one, _F32(1.0e-30) - _ONE, result)
        done |= minus_one
        tiny = (hx < 0x33000000) & ~done
        result = np.where(tiny, x, result)
        done |= tiny

        # argument reduction
        reduce = hx > 0x3EB17218
        near = reduce & (hx < 0x3F851592)
        # k = +-1 case
        hi1 = np.where(neg, x + _LN2_HI, x - _LN2_HI)
        lo1 = np.where(neg, -_LN2_LO, _LN2_LO)
        k1 = np.where(neg, -1, 1).astype(np.int32)
        # general case: k = (int)(invln2*x +- 0.5), truncation towards zero
        kf = _INVLN2 * x + np.where(neg, _F32(-0.5), _F32(0.5))
        kf = np.where(np.isfinite(kf), kf, _F32(0.0))
        k2 = np.trunc(kf).astype(np.int32)
        t2 = k2.astype(_F32)
        hi2 = x - t2 * _LN2_HI
        lo2 = t2 * _LN2_LO
        hi = np.where(near, hi1, hi2)
        lo = np.where(near, lo1, lo2)
        k = np.where(reduce, np.where(near, k1, k2), 0).astype(np.int32)
        xr = np.where(reduce, hi - lo, x)
        c = np.where(reduce, (hi - xr) - lo, _F32(0.0))

        hfx = _HALF * xr
        hxs = xr * hfx
        if fused:
            r1 = _fma(hxs, _Q5, _Q4)
            for q in (_Q3, _Q2, _Q1, _ONE):
                r1 = _fma(r1, hxs, q)
            t = _fma(-r1, hfx, _F32(3.0))
            e = hxs * ((r1 - t) / _fma(-xr, t, _F32(6.0)))
            res_k0 = xr - _fma(xr, e, -hxs)
            e = _fma(xr, e - c, -c)
            e = e - hxs
            res_km1 = _fma(xr - e, _HALF, -_HALF)
            res_k1 = np.where(xr < _F32(-0.25), -_F32(2.0) * (e - (xr + _HALF)),
                              _fma(xr - e, _F32(2.0), _ONE))
        else:
            r1 = _ONE + hxs * (_Q1 + hxs * (_Q2 + hxs * (_Q3 + hxs * (_Q4 + hxs * _Q5))))
            t = _F32(3.0) - r1 * hfx
            e = hxs * ((r1 - t) / (_F32(6.0) - xr * t))
            res_k0 = xr - (xr * e - hxs)
            e = xr * (e - c) - c
            e = e - hxs
            res_km1 = _HALF * (xr - e) - _HALF
            res_k1 = np.where(xr < _F32(-0.25), -_F32(2.0) * (e - (xr + _HALF)),
                              _ONE + _F32(2.0) * (xr - e))
        # k <= -2 or k > 56
        y_far = _add_exponent(_ONE - (e - xr), k) - _ONE
        # 2 <= k < 23
        kk = np.clip(k, 0, 22)
        t_lo = (np.uint32(0x3F800000) - (np.uint32(0x1000000) >> kk.astype(np.uint32))).view(_F32)
        y_mid = _add_exponent(t_lo - (e - xr), k)
        # 23 <= k <= 56
        kh = np.clip(k, 0, 0x7F)
        t_hi = ((np.uint32(0x7F) - kh.astype(np.uint32)) << np.uint32(23)).view(_F32)
        y_high = _add_exponent((xr - (e + t_hi)) + _ONE, k)
        general = np.where((k <= -2) | (k > 56), y_far, np.where(k < 23, y_mid, y_high))
        value = np.where(k == 0, res_k0,
                         np.where(k == -1, res_km1, np.where(k == 1, res_k1, general)))
        result = np.where(done, result, value)
    return result.reshape(shape)


# --------------------------------------------------------------------- tanhf
def tanhf(x, fused: bool = False) -> np.ndarray:
    """fdlibm's tanhf (glibc 2.36; newlib's is the same code) on a float32 array;
    ``fused``: with newlib's hard-float expm1f (:func:`expm1f`; tanhf itself has no
    multiply-add to fuse)."""
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    with np.errstate(all="ignore"):
        jx = _bits(x)
        ix = jx & np.uint32(0x7FFFFFFF)
        neg = (jx >> np.uint32(31)) == 1
        ax = np.abs(x)
        two = _F32(2.0)
        t_big = expm1f(two * ax, fused)
        z_big = _ONE - two / (t_big + two)
        t_small = expm1f(-two * ax, fused)
        z_small = -t_small / (t_small + two)
        z = np.where(ix >= 0x3F800000, z_big, z_small)
        z = np.where(ix >= 0x41B00000, _ONE - _F32(1.0e-30), z)
        z = np.where(neg, -z, z)
        z = np.where(ix < 0x24000000, x * (_ONE + x), z)
        z = np.where(ix == 0, x, z)
        z = np.where(ix >= 0x7F800000, np.where(neg, _ONE / x - _ONE, _ONE / x + _ONE), z)
    return z.reshape(shape)


# ------------------------------------------------------------ float activations
def sigmoid_reference_float(x, exp=expf) -> np.ndarray:
    """reference_ops::Logistic for float32: 1 above 16.619047, exp(x) below -9,
    else 1 / (1 + exp(-x)) (float32 operations); ``exp``: the C library's expf
    (:func:`.float_math.c_expf`)."""
    expf = exp
    x = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        mid = _ONE / (_ONE + expf(-x))
        low = expf(x)
    out = np.where(x > _F32(16.619047164916992188), _ONE, np.where(x < _F32(-9.0), low, mid))
    return out.astype(_F32)


def activation_value_float(activation: int, x, exp=expf, tanh=tanhf) -> np.ndarray:
    """TFLM's ActivationValFloat / PortableApplyActivationToVector on float32 values
    (fmax / fmin semantics: a NaN operand is ignored); ``exp`` / ``tanh``: the C library's
    expf / tanhf (:func:`kernels.internal.float_math.math_for`)."""
    expf = exp
    x = np.asarray(x, dtype=_F32)
    if activation == ACT_NONE:
        return x
    if activation == ACT_RELU:
        return np.fmax(_F32(0.0), x)
    if activation == ACT_RELU_N1_TO_1:
        return np.fmax(_F32(-1.0), np.fmin(x, _ONE))
    if activation == ACT_RELU6:
        return np.fmax(_F32(0.0), np.fmin(x, _F32(6.0)))
    if activation == ACT_TANH:
        return tanh(x)
    if activation == ACT_SIGN_BIT:
        return np.signbit(x).astype(_F32)
    if activation == ACT_SIGMOID:
        with np.errstate(all="ignore"):
            return (_ONE / (_ONE + expf(-x))).astype(_F32)
    return np.zeros_like(x)
