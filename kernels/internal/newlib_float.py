"""float32 math functions bit for bit as newlib's libm for arm-none-eabi computes them
(newlib 3.3.0, Debian's libnewlib-arm-none-eabi: the C library TFLM's Cortex-M builds link).
The soft-float multilibs (thumb/v7e-m/nofp, v7-m, v6-m, v8-m: -mfloat-abi=soft, no __ARM_FP)
build newlib's "obsolete math": the fdlibm single-precision algorithms of libm/math
(ef_exp.c, ef_log.c, sf_sin.c, ef_rem_pio2.c, kf_sin.c, kf_cos.c, sf_expm1.c, sf_tanh.c)
behind the wf_* wrappers, not the Arm optimized-routines expf / logf / sinf of libm/common
(those need a single-precision FPU). Every operation is one float32 rounding (the C uses
float throughout), vectorised with numpy; :mod:`.float_math` picks these for Cortex-M
targets. tests/test_newlib_float.py checks each against newlib run under QEMU.

* ``expf``: exp(x) = 2^k * exp(r): r = x - k ln2 in two pieces (hi - lo; k = 1 or -1 for
  0.5 ln2 < |x| < 1.5 ln2, else k = trunc(x / ln2 +- 0.5)), exp(r) = 1 - ((lo - r c / (2 - c))
  - hi) with c = r - r^2 (P1 + r^2 (P2 + r^2 (P3 + r^2 (P4 + r^2 P5)))), and k added to the
  exponent bits (k < -125: k + 100, then times 2^-100). |x| < 2^-28 gives 1 + x; NaN,
  infinities, overflow (x > 88.7216796875) and underflow (x < -103.972084) as IEEE.
* ``expm1f``, ``tanhf``: the same fdlibm code as glibc 2.36's (one implementation,
  :mod:`.libm_float`).
* ``logf``: fdlibm's __ieee754_logf (see :func:`logf`).
* ``sinf``, ``cosf``: fdlibm's argument reduction by pi/2 and kernel polynomials (see
  :func:`sinf`).
* ``sqrtf``: IEEE; only its NaN for x < 0 differs from x86's (see :func:`sqrtf`).
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


def _f32_bits(bits) -> np.ndarray:
    """float32 values of int64 bit patterns (low 32 bits)."""
    return (np.asarray(bits, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(_F32)


# ---------------------------------------------------------------- expm1f, tanhf
# newlib's expm1f / tanhf (libm/math sf_expm1.c, sf_tanh.c) are the same fdlibm float32
# algorithms as glibc 2.36's (sysdeps/ieee754/flt-32): one implementation serves both
# (tests/test_newlib_float.py checks it against newlib's outputs)
from .libm_float import expm1f, tanhf  # noqa: E402,F401


# ------------------------------------------------------------------------ logf
_LG = tuple(_F32(v) for v in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01,
                              2.2222198546e-01, 1.8183572590e-01, 1.5313838422e-01,
                              1.4798198640e-01))
_TWO25 = _F32(3.3554432e+07)


def logf(x) -> np.ndarray:
    """newlib's logf (fdlibm ``__ieee754_logf`` behind the ``logf`` wrapper) on a float32
    array: x = 2^k (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)), log(1 + f) from s = f / (2 + f)
    and a degree-7 polynomial in s^2 (two interleaved halves), k ln2 added in two pieces;
    every step one float32 rounding. log(+-0) = -inf, log(x < 0) = the wrapper's nan("")
    (0x7fc00000; 0xffc00000 for -inf, soft-float's inf - inf), log(+inf) = +inf, NaN -> x + x."""
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    f32 = _F32
    with np.errstate(all="ignore"):
        hx = x.view(np.int32).astype(np.int64)
        magnitude = hx & 0x7FFFFFFF
        subnormal = (hx > 0) & (hx < 0x00800000)
        xs = np.where(subnormal, (x * _TWO25).astype(f32), x)
        hx = np.where(subnormal, xs.view(np.int32).astype(np.int64), hx)
        k = np.where(subnormal, -25, 0) + (hx >> 23) - 127
        hx = hx & 0x007FFFFF
        i = (hx + (0x95F64 << 3)) & 0x800000
        xn = _f32_bits(hx | (i ^ 0x3F800000))
        k = k + (i >> 23)
        f = (xn - f32(1.0)).astype(f32)
        dk = k.astype(f32)
        ln2_hi, ln2_lo = _LN2_HI, _LN2_LO
        # |f| < 2^-20
        tiny_f = ((0x007FFFFF & (15 + hx)) < 16)
        r_tiny = ((f * f).astype(f32) * (f32(0.5) - (f32(0.33333333333333333) * f).astype(f32)).astype(f32)).astype(f32)
        t_zero = np.where(k == 0, f32(0.0), ((dk * ln2_hi).astype(f32) + (dk * ln2_lo).astype(f32)).astype(f32))
        t_k0 = (f - r_tiny).astype(f32)
        t_k = ((dk * ln2_hi).astype(f32) - ((r_tiny - (dk * ln2_lo).astype(f32)).astype(f32) - f).astype(f32)).astype(f32)
        res_tiny = np.where(f == 0, t_zero, np.where(k == 0, t_k0, t_k))
        # general
        s = (f / (f32(2.0) + f).astype(f32)).astype(f32)
        z = (s * s).astype(f32)
        w = (z * z).astype(f32)
        i2 = hx - (0x6147A << 3)
        j2 = (0x6B851 << 3) - hx
        t1 = (w * (_LG[1] + (w * (_LG[3] + (w * _LG[5]).astype(f32)).astype(f32)).astype(f32)).astype(f32)).astype(f32)
        t2 = (z * (_LG[0] + (w * (_LG[2] + (w * (_LG[4] + (w * _LG[6]).astype(f32)).astype(f32)).astype(f32)).astype(f32)).astype(f32)).astype(f32)).astype(f32)
        r = (t2 + t1).astype(f32)
        hfsq = ((f32(0.5) * f).astype(f32) * f).astype(f32)
        a_k0 = (f - (hfsq - (s * (hfsq + r).astype(f32)).astype(f32)).astype(f32)).astype(f32)
        a_k = ((dk * ln2_hi).astype(f32)
               - ((hfsq - ((s * (hfsq + r).astype(f32)).astype(f32) + (dk * ln2_lo).astype(f32)).astype(f32)).astype(f32)
                  - f).astype(f32)).astype(f32)
        b_k0 = (f - (s * (f - r).astype(f32)).astype(f32)).astype(f32)
        b_k = ((dk * ln2_hi).astype(f32)
               - (((s * (f - r).astype(f32)).astype(f32) - (dk * ln2_lo).astype(f32)).astype(f32) - f).astype(f32)).astype(f32)
        res_general = np.where((i2 | j2) > 0, np.where(k == 0, a_k0, a_k), np.where(k == 0, b_k0, b_k))
        result = np.where(tiny_f, res_tiny, res_general).astype(f32)
        sign = x.view(np.int32) < 0
        result = np.where(magnitude >= 0x7F800000, (x + x).astype(f32), result)
        result = np.where(sign & (magnitude < 0x7F800000), _f32_bits(0x7FC00000), result)
        result = np.where(sign & (magnitude == 0x7F800000), _f32_bits(0xFFC00000), result)
        result = np.where(magnitude == 0, f32(-np.inf), result)
    return result.astype(f32).reshape(shape)


# ------------------------------------------------------------------------ sqrtf
def sqrtf(x) -> np.ndarray:
    """newlib's sqrtf on a float32 array: the IEEE square root (correctly rounded, as
    ``np.sqrt``; -0 stays -0), a NaN comes out quieted with its sign and payload, and any
    x < 0 (-inf too) gives the wrapper's nan("") 0x7fc00000 -- where x86's sqrtss gives the
    negative default NaN 0xffc00000."""
    x = np.asarray(x, dtype=_F32)
    with np.errstate(all="ignore"):
        root = np.sqrt(x).astype(_F32)
    quiet = _f32_bits(x.view(np.uint32).astype(np.int64) | 0x00400000)
    result = np.where(np.isnan(x), quiet, root)
    return np.where(x < 0, _f32_bits(np.full(x.shape, 0x7FC00000)), result).astype(_F32)


# ---------------------------------------------------------------- sinf, cosf
_S = tuple(_F32(v) for v in (-1.6666667163e-01, 8.3333337680e-03, -1.9841270114e-04,
                             2.7557314297e-06, -2.5050759689e-08, 1.5896910177e-10))
_C = tuple(_F32(v) for v in (4.1666667908e-02, -1.3888889225e-03, 2.4801587642e-05,
                             -2.7557314297e-07, 2.0875723372e-09, -1.1359647598e-11))
_PIO2_1, _PIO2_1T = _f32_bits(0x3FC90F80), _f32_bits(0x37354443)
_PIO2_2, _PIO2_2T = _f32_bits(0x37354400), _f32_bits(0x2E85A308)
_PIO2_3, _PIO2_3T = _f32_bits(0x2E85A300), _f32_bits(0x248D3132)
_INV_PIO2 = _f32_bits(0x3F22F984)


def _npio2_high_words() -> np.ndarray:
    """fdlibm's npio2_hw: the top 24 bits of float32(n pi / 2), n = 1..32."""
    n = np.arange(1, 33, dtype=np.float64)
    return (n * (np.pi / 2)).astype(_F32).view(np.uint32).astype(np.int64) & 0xFFFFFF00


_NPIO2_HW = _npio2_high_words()


def _f(v):
    return v.astype(_F32)


def _kernel_sinf(x, y, iy_zero: bool):
    """fdlibm __kernel_sinf on |x| <= pi/4 (+ tail y); ``iy_zero``: y is known 0."""
    f = _f
    z = f(x * x)
    v = f(z * x)
    r = f(_S[1] + f(z * f(_S[2] + f(z * f(_S[3] + f(z * f(_S[4] + f(z * _S[5]))))))))
    if iy_zero:
        out = f(x + f(v * f(_S[0] + f(z * r))))
    else:
        out = f(x - f(f(f(z * f(f(_F32(0.5) * y) - f(v * r))) - y) - f(v * _S[0])))
    tiny = (x.view(np.int32) & 0x7FFFFFFF) < 0x32000000
    return np.where(tiny, x, out)


def _kernel_cosf(x, y):
    """fdlibm __kernel_cosf on |x| <= pi/4 (+ tail y)."""
    f = _f
    one = _F32(1.0)
    ix = x.view(np.int32).astype(np.int64) & 0x7FFFFFFF
    z = f(x * x)
    r = f(z * f(_C[0] + f(z * f(_C[1] + f(z * f(_C[2] + f(z * f(_C[3] + f(z * f(_C[4] + f(z * _C[5])))))))))))
    zr_xy = f(f(z * r) - f(x * y))
    small = f(one - f(f(_F32(0.5) * z) - zr_xy))
    qx = np.where(ix > 0x3F480000, _F32(0.28125), _f32_bits(ix - 0x01000000))
    hz = f(f(_F32(0.5) * z) - qx)
    a = f(one - qx)
    big = f(a - f(hz - zr_xy))
    out = np.where(ix < 0x3E99999A, small, big)
    return np.where(ix < 0x32000000, one, out)


def _two_over_pi_bytes(count: int) -> tuple:
    """The first ``count`` bytes of 2/pi's binary fraction (fdlibm's ipio2 table for the
    float reduction), from Machin's formula in integers."""
    bits = 8 * count
    guard = bits + 64
    scale = 1 << guard

    def arctan_inv(m: int) -> int:
        total, term, k, m2 = 0, scale // m, 1, m * m
        while term:
            total += term // k if (k // 2) % 2 == 0 else -(term // k)
            term //= m2
            k += 2
        return total

    pi_scaled = 4 * (4 * arctan_inv(5) - arctan_inv(239))
    fraction = (1 << (guard + bits + 1)) // pi_scaled        # floor(2/pi 2^bits)
    return tuple((fraction >> (8 * (count - 1 - i))) & 0xFF for i in range(count))


_IPIO2 = _two_over_pi_bytes(198)
#: pi/2 in 8-bit pieces (fdlibm's PIo2 for the float reduction)
_PIO2_PIECES = tuple(_f32_bits(b) for b in (0x3FC90000, 0x39F00000, 0x37DA0000, 0x33A20000,
                                            0x2E840000, 0x2B500000, 0x27C20000, 0x22D00000,
                                            0x1FC40000, 0x1BC60000, 0x17440000))


def _kernel_rem_pio2f(tx: list, e0: int):
    """fdlibm __kernel_rem_pio2f at precision 2 (jk = 9) on one argument given as 8-bit
    float32 pieces ``tx`` scaled by 2^e0: (n mod 8, y0, y1). Integer-valued float32 steps
    are exact; the partial products' float32 sums round as the C's do. One argument at a
    time (a Python loop): only |x| > 2^7 pi/2 comes here."""
    f32 = _F32
    zero, one, two8, twon8 = f32(0.0), f32(1.0), f32(256.0), f32(0.00390625)
    jk = jp = 9
    jx = len(tx) - 1
    jv = max((e0 - 3) // 8, 0)
    q0 = e0 - 8 * (jv + 1)
    f = {}
    j = jv - jx
    for i in range(jx + jk + 1):
        f[i] = zero if j < 0 else f32(_IPIO2[j])
        j += 1

    def product_sum(i):
        fw = zero
        for jj in range(jx + 1):
            fw = f32(fw + f32(tx[jj] * f[jx + i - jj]))
        return fw

    q = {i: product_sum(i) for i in range(jk + 1)}
    jz = jk
    while True:
        iq = {}
        z = q[jz]
        i, j = 0, jz
        while j > 0:
            fw = f32(int(f32(twon8 * z)))
            iq[i] = int(f32(z - f32(two8 * fw)))
            z = f32(q[j - 1] + fw)
            i += 1
            j -= 1
        z = f32(np.ldexp(z, q0))
        z = f32(z - f32(f32(8.0) * f32(np.floor(f32(z * f32(0.125))))))
        n = int(z)
        z = f32(z - f32(n))
        ih = 0
        if q0 > 0:
            i = iq[jz - 1] >> (8 - q0)
            n += i
            iq[jz - 1] -= i << (8 - q0)
            ih = iq[jz - 1] >> (7 - q0)
        elif q0 == 0:
            # newlib's float version shifts by 8 here (fdlibm's double code shifts its
            # 24-bit chunk by 23; the 8-bit analogue would be 7): ih is always 0 when
            # q0 == 0, so a fraction >= 1/2 is not folded to 1 - q and the reduced argument
            # can reach pi/2 (a few ulps less accurate; checked against newlib's outputs)
            ih = iq[jz - 1] >> 8
        elif z >= f32(0.5):
            ih = 2
        if ih > 0:
            n += 1
            carry = 0
            for i in range(jz):
                j = iq[i]
                if carry == 0:
                    if j != 0:
                        carry = 1
                        iq[i] = 0x100 - j
                else:
                    iq[i] = 0xFF - j
            if q0 == 1:
                iq[jz - 1] &= 0x7F
            elif q0 == 2:
                iq[jz - 1] &= 0x3F
            if ih == 2:
                z = f32(one - z)
                if carry != 0:
                    z = f32(z - f32(np.ldexp(one, q0)))
        if z == zero and not any(iq[i] for i in range(jk, jz)):
            k = 1
            while iq[jk - k] == 0:
                k += 1
            for i in range(jz + 1, jz + k + 1):
                f[jx + i] = f32(_IPIO2[jv + i])
                q[i] = product_sum(i)
            jz += k
            continue
        break
    if z == zero:
        jz -= 1
        q0 -= 8
        while iq[jz] == 0:
            jz -= 1
            q0 -= 8
    else:
        z = f32(np.ldexp(z, -q0))
        if z >= two8:
            fw = f32(int(f32(twon8 * z)))
            iq[jz] = int(f32(z - f32(two8 * fw)))
            jz += 1
            q0 += 8
            iq[jz] = int(fw)
        else:
            iq[jz] = int(z)
    fw = f32(np.ldexp(one, q0))
    qf = {}
    for i in range(jz, -1, -1):
        qf[i] = f32(fw * f32(iq[i]))
        fw = f32(fw * twon8)
    fq = {}
    for i in range(jz, -1, -1):
        fw = zero
        k = 0
        while k <= jp and k <= jz - i:
            fw = f32(fw + f32(_PIO2_PIECES[k] * qf[i + k]))
            k += 1
        fq[jz - i] = fw
    fw = zero
    for i in range(jz, -1, -1):
        fw = f32(fw + fq[i])
    y0 = fw if ih == 0 else -fw
    fw = f32(fq[0] - fw)
    for i in range(1, jz + 1):
        fw = f32(fw + fq[i])
    y1 = fw if ih == 0 else -fw
    return n & 7, y0, y1


def _reduce_large(ax: np.ndarray):
    """|x| > 2^7 pi/2 (finite): fdlibm's large-argument path of __ieee754_rem_pio2f --
    |x| split into three 8-bit float32 pieces at exponent e0 = ilogb(x) - 7, then
    :func:`_kernel_rem_pio2f`. One argument at a time (arguments this large are rare)."""
    n_out = np.zeros(ax.shape, np.int64)
    y0 = np.zeros(ax.shape, _F32)
    y1 = np.zeros(ax.shape, _F32)
    two8 = _F32(256.0)
    for idx, bits in enumerate(ax.view(np.uint32).tolist()):
        e0 = (bits >> 23) - 134
        z = _f32_bits(bits - (e0 << 23))[()]
        tx = []
        for _ in range(2):
            piece = _F32(int(z))
            tx.append(piece)
            z = _F32(_F32(z - piece) * two8)
        tx.append(z)
        while tx[-1] == 0:
            tx.pop()
        n_out[idx], y0[idx], y1[idx] = _kernel_rem_pio2f(tx, e0)
    return n_out, y0, y1


def _rem_pio2f(x: np.ndarray):
    """fdlibm __ieee754_rem_pio2f on a float32 array: (n, y0, y1) with x - n pi/2 = y0 + y1
    (n's low two bits are what sinf / cosf use)."""
    f = _f
    hx = x.view(np.int32).astype(np.int64)
    ix = hx & 0x7FFFFFFF
    neg = hx < 0
    with np.errstate(all="ignore"):
        # |x| < 3 pi / 4: n = +-1
        sgn = np.where(neg, _F32(-1.0), _F32(1.0))
        z = f(x - f(sgn * _PIO2_1))
        near_half_pi = (ix & 0xFFFFFFF0) == 0x3FC90FD0
        z2 = f(z - f(sgn * _PIO2_2))
        y0_a = np.where(near_half_pi, f(z2 - f(sgn * _PIO2_2T)), f(z - f(sgn * _PIO2_1T)))
        y1_a = np.where(near_half_pi, f(f(z2 - y0_a) - f(sgn * _PIO2_2T)), f(f(z - y0_a) - f(sgn * _PIO2_1T)))
        n_a = np.where(neg, -1, 1)
        # medium: |x| <= 2^7 pi / 2
        t = np.abs(x)
        nf = f(f(t * _INV_PIO2) + _F32(0.5))
        n = np.where(ix <= 0x43490F80, np.trunc(np.where(ix <= 0x43490F80, nf, 0)), 0).astype(np.int64)
        fn = n.astype(_F32)
        r = f(t - f(fn * _PIO2_1))
        w = f(fn * _PIO2_1T)
        y0 = f(r - w)
        table_ok = (n < 32) & ((ix & 0xFFFFFF00) != _NPIO2_HW[np.clip(n - 1, 0, 31)])
        j = ix >> 23
        i = j - ((y0.view(np.int32).astype(np.int64) >> 23) & 0xFF)
        second = ~table_ok & (i > 8)
        t2 = r
        w2 = f(fn * _PIO2_2)
        r2 = f(t2 - w2)
        w2 = f(f(fn * _PIO2_2T) - f(f(t2 - r2) - w2))
        y0_2 = f(r2 - w2)
        i2 = j - ((y0_2.view(np.int32).astype(np.int64) >> 23) & 0xFF)
        third = second & (i2 > 25)
        t3 = r2
        w3 = f(fn * _PIO2_3)
        r3 = f(t3 - w3)
        w3 = f(f(fn * _PIO2_3T) - f(f(t3 - r3) - w3))
        y0_3 = f(r3 - w3)
        r_m = np.where(third, r3, np.where(second, r2, r))
        w_m = np.where(third, w3, np.where(second, w2, w))
        y0_m = np.where(third, y0_3, np.where(second, y0_2, y0))
        y1_m = f(f(r_m - y0_m) - w_m)
        y0_m = np.where(neg, -y0_m, y0_m)
        y1_m = np.where(neg, -y1_m, y1_m)
        n_m = np.where(neg, -n, n)
        # large
        large = (ix > 0x43490F80) & (ix < 0x7F800000)
        n_out = np.where(ix < 0x4016CBE4, n_a, n_m)
        y0_out = np.where(ix < 0x4016CBE4, y0_a, y0_m)
        y1_out = np.where(ix < 0x4016CBE4, y1_a, y1_m)
        if large.any():
            n_l, y0_l, y1_l = _reduce_large(t[large])
            neg_l = neg[large]
            n_out[large] = np.where(neg_l, -n_l, n_l)
            y0_out[large] = np.where(neg_l, -y0_l, y0_l)
            y1_out[large] = np.where(neg_l, -y1_l, y1_l)
    return n_out, y0_out, y1_out


def _sin_or_cos(x, cosine: bool) -> np.ndarray:
    x = np.asarray(x, dtype=_F32)
    shape = x.shape
    x = x.reshape(-1)
    with np.errstate(all="ignore"):
        ix = x.view(np.int32).astype(np.int64) & 0x7FFFFFFF
        small = ix <= 0x3F490FD8
        zero = np.zeros_like(x)
        direct = _kernel_cosf(x, zero) if cosine else _kernel_sinf(x, zero, True)
        n, y0, y1 = _rem_pio2f(np.where(small | (ix >= 0x7F800000), _F32(0.0), x))
        sin_y = _kernel_sinf(y0, y1, False)
        cos_y = _kernel_cosf(y0, y1)
        quadrant = (n + (1 if cosine else 0)) & 3
        reduced = np.select([quadrant == 0, quadrant == 1, quadrant == 2],
                            [sin_y, cos_y, -sin_y], -cos_y).astype(_F32)
        result = np.where(small, direct, reduced)
        # x - x: NaN quieted; soft-float's inf - inf is a quiet NaN with inf's sign
        nan_bits = x.view(np.uint32).astype(np.int64) | 0x00400000
        result = np.where(ix >= 0x7F800000, _f32_bits(nan_bits), result)
    return result.astype(_F32).reshape(shape)


def sinf(x) -> np.ndarray:
    """newlib's sinf (fdlibm sf_sin.c) on a float32 array: |x| <= pi/4 directly, else
    x reduced by n pi/2 (__ieee754_rem_pio2f: n = +-1 below 3pi/4, pi/2 in up to three
    float32 pieces up to 2^7 pi/2, __kernel_rem_pio2f's 8-bit pieces of 2/pi beyond) and __kernel_sinf /
    __kernel_cosf on the reduced pair by n's quadrant; NaN and infinities give x - x (a
    quiet NaN with x's sign)."""
    return _sin_or_cos(x, cosine=False)


def cosf(x) -> np.ndarray:
    """newlib's cosf (fdlibm sf_cos.c), as :func:`sinf` with the quadrant shifted by one."""
    return _sin_or_cos(x, cosine=True)


# ------------------------------------------------------------- exp (double)
_F64 = np.float64
_D_LN2_HI = _F64(6.93147180369123816490e-01)
_D_LN2_LO = _F64(1.90821492927058770002e-10)
_D_INV_LN2 = _F64(1.44269504088896338700e+00)
_D_P = (_F64(1.66666666666666019037e-01), _F64(-2.77777777770155933842e-03),
        _F64(6.61375632143793436117e-05), _F64(-1.65339022054652515390e-06),
        _F64(4.13813679705723846039e-08))
_D_O_THRESHOLD = _F64(7.09782712893383973096e+02)
_D_U_THRESHOLD = _F64(-7.45133219101941108420e+02)
_D_TWO_M1000 = _F64(9.33263618503218878990e-302)


def exp64(x) -> np.ndarray:
    """newlib's double ``exp`` (fdlibm __ieee754_exp behind the wrapper) on a float64
    array: the float algorithm of :func:`expf` in double -- k from x / ln2 (+-1 for
    0.5 ln2 < |x| < 1.5 ln2), r = hi - lo with ln2 in two pieces, a degree-5 polynomial
    c(r) and 1 - ((lo - r c / (2 - c)) - hi) scaled by 2^k (k < -1021: 2^(k + 1000) then
    times 2^-1000); |x| < 2^-28 gives 1 + x; overflow past 709.78 gives inf, underflow
    below -745.13 gives 0; NaN -> x + x. Soft-float: every add and subtract is libgcc's
    (:func:`.float_ops.libgcc_dadd`, not always IEEE-rounded), products and quotients
    IEEE."""
    from .float_ops import libgcc_dadd as add, libgcc_dsub as sub
    x = np.asarray(x, dtype=_F64)
    shape = x.shape
    x = x.reshape(-1)
    f = _F64
    one, two = f(1.0), f(2.0)
    with np.errstate(all="ignore"):
        high = (x.view(np.int64) >> 32) & 0xFFFFFFFF
        negative = high >= 0x80000000
        hx = high & 0x7FFFFFFF
        near = (hx > 0x3FD62E42) & (hx < 0x3FF0A2B2)
        far = hx >= 0x3FF0A2B2
        half = np.where(negative, f(-0.5), f(0.5))
        k_far = np.trunc(add(_D_INV_LN2 * x, half))
        k_far = np.where(far & np.isfinite(k_far) & (np.abs(k_far) < 2**31), k_far, 0).astype(np.int64)
        t = k_far.astype(f)
        sign = np.where(negative, f(-1.0), f(1.0))
        hi = np.where(near, sub(x, sign * _D_LN2_HI), sub(x, t * _D_LN2_HI))
        lo = np.where(near, sign * _D_LN2_LO, t * _D_LN2_LO)
        k = np.where(near, np.where(negative, -1, 1), np.where(far, k_far, 0)).astype(np.int64)
        reduced = near | far
        r = np.where(reduced, sub(hi, lo), x)
        tt = r * r
        poly = _D_P[4]
        for p in _D_P[3::-1]:
            poly = add(p, tt * poly)
        c = sub(r, tt * poly)
        rc = r * c
        small = sub(one, sub(rc / sub(c, two), r))
        y = sub(one, sub(sub(lo, rc / sub(two, c)), hi))
        normal = k >= -1021
        shift = np.where(normal, k, k + 1000)
        scaled = (y.view(np.int64) + (shift << 52)).view(f)
        scaled = np.where(normal, scaled, scaled * _D_TWO_M1000)
        result = np.where(k == 0, small, scaled)
        result = np.where(hx < 0x3E300000, add(one, x), result)
        result = np.where(x > _D_O_THRESHOLD, f(np.inf), result)
        result = np.where(x < _D_U_THRESHOLD, f(0.0), result)
        result = np.where(np.isnan(x), x + x, result)
    return result.reshape(shape)
