"""Matrix products that are exact for the integer kernels and order-faithful for float.

* :func:`exact_int_matmul` — integer operands held in float64, multiplied with BLAS.
  Every product and partial sum is an integer below 2^53, so the float64 result is the
  exact integer (int8/int16 activations x int8 weights: |term| < 2^23, depth < 2^30).
* :func:`float32_sequential_matmul` — TFLM's float loops add one float32 product at a
  time in depth order; this does the same, vectorised over the other two axes.
"""
from __future__ import annotations

import numpy as np

_EXACT_LIMIT = float(1 << 53)


def exact_int_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact integer product of float64 matrices holding integers; returns int64."""
    result = a @ b
    if result.size and np.abs(result).max() >= _EXACT_LIMIT:
        raise OverflowError("integer accumulation exceeds 2^53: float64 product not exact")
    return result.astype(np.int64)


def float32_sequential_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (m x k) @ b (k x n) in float32, summing k in order with one rounding per step."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    total = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        total += np.multiply.outer(a[:, k], b[k])
    return total
