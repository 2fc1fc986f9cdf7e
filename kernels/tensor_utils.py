"""Small tensor helpers shared by kernels (type names, shapes, int4 unpacking)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from micro_runtime.schema import TensorType, tensor_type_name

FLOAT32, INT8, INT16, INT32, INT64, UINT8, INT4, BOOL = (
    TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32, TensorType.INT64,
    TensorType.UINT8, TensorType.INT4, TensorType.BOOL)


def type_name(t: int) -> str:
    """TfLiteTypeGetName-style name of a schema tensor type."""
    return tensor_type_name(t)


def flat_size(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def flat_size_skip_dim(shape: Sequence[int], skip: int) -> int:
    n = 1
    for i, d in enumerate(shape):
        if i != skip:
            n *= int(d)
    return n


def unpack_int4(packed: np.ndarray, count: int) -> np.ndarray:
    """TFLM's UnpackDenseInt4IntoInt8: two's-complement nibbles, low nibble first."""
    raw = np.asarray(packed).view(np.int8).ravel()[: (count + 1) // 2]
    low = (raw.astype(np.int8) << 4).astype(np.int8) >> 4
    high = raw.astype(np.int8) >> 4
    out = np.empty(2 * raw.size, dtype=np.int8)
    out[0::2] = low
    out[1::2] = high
    return out[:count]
