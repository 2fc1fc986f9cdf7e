"""Matrix products that are exact for the integer kernels and order-faithful for float.

* :func:`exact_int_matmul` — integer operands held in float64, multiplied with BLAS.
  Every product and partial sum is an integer below 2^53, so the float64 result is the
  exact integer (int8/int16 activations x int8 weights: |term| < 2^23, depth < 2^30).
* :func:`float32_sequential_matmul` — TFLM's float loops add one float32 product at a
  time in depth order; this does the same, vectorised over the other axes (batch
  dimensions broadcast). With ``fused=True`` each step is one fused multiply-add
  (:func:`float32_fma`), as gcc compiles those loops for a core with a hardware FPU
  and the hard-float ABI (``vfma.f32``; Target.float_fma).
"""
from __future__ import annotations

import math

import numpy as np

_EXACT_LIMIT = float(1 << 53)


def exact_int_matmul(a: np.ndarray, b: np.ndarray, check: bool = True) -> np.ndarray:
    """Exact integer product of float64 matrices holding integers; returns int64.

    ``check=False`` skips the run-time bound check when the caller proved it (see
    :func:`products_fit`)."""
    result = a @ b
    if check and result.size and np.abs(result).max() >= _EXACT_LIMIT:
        raise OverflowError("integer accumulation exceeds 2^53: float64 product not exact")
    return result.astype(np.int64)


def products_fit(depth: int, max_abs_a: int, max_abs_b: int) -> bool:
    """True when any sum of ``depth`` products |a| <= max_abs_a, |b| <= max_abs_b is
    below 2^53, so the float64 product is exact."""
    return depth * max_abs_a * max_abs_b < (1 << 53)


#: float32_sequential_matmul forms all products at once when there are at most this many
#: and each step of the sum adds at most SEQUENTIAL_SLAB of them (beyond, one numpy call
#: per step costs less than the larger temporary)
SEQUENTIAL_AT_ONCE = 1 << 16
SEQUENTIAL_SLAB = 2048


def float32_fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 fused multiply-add a * b + c, one rounding (IEEE fma, round to nearest
    even), elementwise with broadcasting. The product of two float32 is exact in float64;
    the float64 sum is made round-to-odd (a TwoSum error term nudges an inexact, even
    result one ulp towards the exact sum), which rounded to float32 (24 bits, 53 >= 24 + 2)
    gives the correctly rounded fma. Infinities take the float64 result; NaNs follow the
    Arm FPU's rule for ``vfma`` (FPMulAdd with the default-NaN mode off): the first
    signalling NaN of (c, a, b) quieted, else the first quiet NaN of (c, a, b), else
    (0 * inf, or inf - inf) the default NaN 0x7fc00000 -- an accumulator that is already
    a NaN stays that NaN (only Cortex-M builds with an FPU use this)."""
    c64 = np.asarray(c, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        bits = np.asarray(s).view(np.int64)
        nudge = np.isfinite(err) & (err != 0) & ((bits & 1) == 0)
        if np.any(nudge):
            s = np.where(nudge, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        out = np.asarray(s, np.float64).astype(np.float32)
    nan = np.isnan(out)
    if np.any(nan):
        out = _arm_fma_nan(np.asarray(a, np.float32), np.asarray(b, np.float32),
                           np.asarray(c, np.float32), out)
    return out


_QUIET_BIT = np.uint32(0x00400000)
_ARM_DEFAULT_NAN = np.uint32(0x7FC00000)


def _arm_fma_nan(a: np.ndarray, b: np.ndarray, c: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The NaN an Arm FPU's fused multiply-add returns where ``out`` is a NaN (see
    :func:`float32_fma`)."""
    a, b, c, out = np.broadcast_arrays(a, b, c, out)
    ops = [c, a, b]                       # FPMulAdd's order: addend, then the factors
    bits = [x.view(np.uint32) for x in ops]
    result = np.full(out.shape, _ARM_DEFAULT_NAN, np.uint32)
    chosen = np.zeros(out.shape, bool)
    for quiet_pass in (False, True):      # signalling NaNs first, then quiet ones
        for x, xb in zip(ops, bits):
            hit = np.isnan(x) & (((xb & _QUIET_BIT) != 0) == quiet_pass) & ~chosen
            result = np.where(hit, xb | _QUIET_BIT, result)
            chosen |= hit
    # a quiet-NaN addend with 0 * inf gives the default NaN
    zero_inf = ((a == 0) & np.isinf(b)) | (np.isinf(a) & (b == 0))
    qnan_c = np.isnan(c) & ((bits[0] & _QUIET_BIT) != 0)
    signalling = np.zeros(out.shape, bool)
    for x, xb in zip(ops, bits):
        signalling |= np.isnan(x) & ((xb & _QUIET_BIT) == 0)
    result = np.where(qnan_c & zero_inf & ~signalling, _ARM_DEFAULT_NAN, result)
    return np.where(np.isnan(out), result.view(np.float32), out).astype(np.float32)


def _fused_sequential(a: np.ndarray, b: np.ndarray, shape) -> np.ndarray:
    """``total = 0; total = fma(a[..., k], b[k], total)`` for each k in order."""
    total = np.zeros(shape, dtype=np.float32)
    for k in range(a.shape[-1]):
        total = float32_fma(a[..., :, k:k + 1], b[..., k:k + 1, :], total)
    return total


def float32_sequential_matmul(a: np.ndarray, b: np.ndarray, fused: bool = False,
                              x86_nans: bool = False) -> np.ndarray:
    """a (..., m, k) @ b (..., k, n) in float32, summing k in order with one rounding per
    product and per addition (TFLM's ``total = 0.f; total += a * b`` loops); leading batch
    dimensions broadcast as in ``np.matmul``.

    Small products (see :data:`SEQUENTIAL_AT_ONCE`) are formed at once and summed
    by ``np.add.accumulate`` along k, which adds strictly in order (the first term to
    +0.0, as the C loop's zero start does); larger ones, and sums that end NaN (the NaN
    an x86 addition keeps depends on its operand order, which only the loop follows), add
    one k-slice at a time. The result may be a reused scratch array: consume or copy it
    before the next call. ``fused``: each step one fused multiply-add
    (:func:`float32_fma`), the first from +0.0. ``x86_nans``: a sum that ends NaN takes
    the NaN x86 gives ``total = total + a * b`` (of two NaNs the first operand's:
    ``a`` in the product, ``total`` in the sum), as TFLM's FULLY_CONNECTED in the package."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    if a.ndim == 2 and b.ndim == 2:
        shape = (a.shape[0], b.shape[1])
    else:
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    depth = a.shape[-1]
    if fused:
        return _fused_sequential(a, b, shape)
    slab = math.prod(shape)
    nan_sum = False         # a faster form already ended with a NaN sum
    if depth and slab <= SEQUENTIAL_SLAB and slab * depth <= SEQUENTIAL_AT_ONCE:
        # (..., k, m, n): each step of the sum adds one contiguous m x n slab
        products = np.swapaxes(a, -1, -2)[..., :, :, None] * b[..., :, None, :]
        first = products[..., 0, :, :]
        np.add(first, np.float32(0.0), out=first)
        np.add.accumulate(products, axis=-3, out=products)
        total = products[..., -1, :, :]
        if not np.isnan(total).any():
            return total
        # a NaN sum: which NaN x86 keeps depends on the operand order of each addition,
        # which only the loop below follows
        nan_sum = True
    if not nan_sum and a.ndim == 2 and b.ndim == 2 and shape[0] > shape[1]:
        total = _sequential_columns(a, b)
        if not np.isnan(total).any():
            return total
        # a NaN sum: numpy's broadcast loops may swap a multiplication's operands, and
        # only the row loop keeps the NaN choice of TFLM's
        nan_sum = True
    if x86_nans and nan_sum:
        return _sequential_rows(a, b, shape, x86_nans=True)
    total = _sequential_rows(a, b, shape)
    if x86_nans and np.isnan(total).any():
        total = _sequential_rows(a, b, shape, x86_nans=True)
    return total


def _sequential_rows(a: np.ndarray, b: np.ndarray, shape, x86_nans: bool = False) -> np.ndarray:
    """The one-product-per-step loop: ``total = 0; total += a[..., k] * b[k]`` for each
    k in order, on the (..., m, n) result; ``x86_nans``: of two NaN operands, the
    first's (:func:`~kernels.internal.float_ops.first_nan`)."""
    from .float_ops import first_nan
    total = np.zeros(shape, dtype=np.float32)
    product = np.empty(shape, dtype=np.float32)
    for k in range(a.shape[-1]):
        a_k, b_k = a[..., :, k:k + 1], b[..., k:k + 1, :]
        np.multiply(a_k, b_k, out=product)
        if x86_nans:
            step = first_nan(a_k, b_k, product)
            total = first_nan(total, step, np.add(total, step))
        else:
            total += product
    return total


def _sequential_columns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The one-product-per-step loop of :func:`float32_sequential_matmul` for a 2-D
    a (m, k) @ b (k, n) with m > n, held as (n, m) so that each numpy call runs along m
    (the long axis) instead of n; same operand order (``a * b``, then ``total +
    product``) and same roundings (the first step is ``p + 0.0``, which equals the loop's
    ``0.0 + p`` bit for bit), so the same bits whenever no NaN arises (which NaN a sum
    ends with follows the operand order of numpy's inner loops: the caller takes NaN sums
    from the row loop). Returns an (m, n) view of a reused scratch array: valid until the
    next call in this thread."""
    from .quantization import work_buffer
    m, depth = a.shape
    n = b.shape[1]
    a_by_depth = work_buffer("f32-seq-by-depth", (depth, m), np.float32)
    np.copyto(a_by_depth, a.T)
    total = work_buffer("f32-seq-total", (n, m), np.float32)
    product = work_buffer("f32-seq-product", (n, m), np.float32)
    if not depth:
        total.fill(0.0)
    for k in range(depth):
        np.multiply(a_by_depth[k][None, :], b[k][:, None], out=product if k else total)
        if k:
            np.add(total, product, out=total)
        else:
            np.add(total, np.float32(0.0), out=total)
    return total.T


def exact_float_dtype(bound: float):
    """The narrowest float type in which integer products and sums are exact, given
    ``bound`` >= the sum of the absolute values of every term of any one sum (so every
    partial sum, in whatever order BLAS takes them, is an integer below the bound):
    float32 below 2^24, float64 below 2^53, else None."""
    if bound < float(1 << 24):
        return np.float32
    if bound < _EXACT_LIMIT:
        return np.float64
    return None
