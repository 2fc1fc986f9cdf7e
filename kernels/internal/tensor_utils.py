"""Small tensor helpers shared by kernels (type names, shapes, int4 unpacking)."""
from __future__ import annotations

from typing import Optional, Sequence

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


# ---- helpers of the data-movement kernels (reshape, pad, slice, gather ...)

def data_address(a: np.ndarray) -> int:
    """Address of an array's first byte (TFLM compares data pointers)."""
    return int(a.__array_interface__["data"][0])


def copy_flat(dst: np.ndarray, src: np.ndarray) -> None:
    """memcpy of ``src`` into ``dst`` in row-major order (same byte size; the bytes are
    copied as they are when the dtypes differ), skipped when both are the same buffer
    (TFLM's in-place case)."""
    if dst.size and data_address(dst) == data_address(src):
        return
    if dst.dtype == src.dtype:
        dst.reshape(-1)[...] = src.reshape(-1)
    else:
        dst.reshape(-1).view(np.uint8)[...] = src.reshape(-1).view(np.uint8)


def int32_words(data: np.ndarray, count: int) -> Optional[np.ndarray]:
    """The first ``count`` int32 values of a constant tensor's buffer, as TFLM reads it
    with ``GetTensorData<int32_t>`` whatever the tensor's type; None when the buffer is
    shorter than ``count`` words."""
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    if raw.size < 4 * count:
        return None
    return raw[: 4 * count].view("<i4").astype(np.int64)


def normalize_axis(axis: int, ndims: int) -> int:
    """``axis`` + ``ndims`` when negative (TFLM's convention); no range check."""
    return axis + ndims if axis < 0 else axis


def items(a: np.ndarray) -> np.ndarray:
    """``a`` with its last axis folded into one element (an unsigned integer for 1, 2, 4
    or 8 bytes, else a raw ``V<bytes>`` item): shape ``a.shape[:-1]``, same memory. Numpy
    then moves whole rows (memcpy-like) instead of element by element. The last axis
    must be contiguous and non-empty."""
    n = a.shape[-1] * a.dtype.itemsize
    return a.view(f"u{n}" if n in (1, 2, 4, 8) else f"V{n}")[..., 0]


def copy_rows(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` for 2-D arrays of the same shape and dtype whose rows are
    contiguous (either may be a column block of a larger array), row by row."""
    if dst.size:
        items(dst)[...] = items(src)


def int_array_bytes(ctx, size: int) -> int:
    """TfLiteIntArrayGetSizeInBytes(size): the ``size`` field and ``size`` int32 values,
    in bytes, on the context's target."""
    return ctx.sizeof("TfLiteIntArray") + 4 * int(size)


def make_output_dims_writable(ctx, rank: int) -> None:
    """TFLM's CreateWritableTensorDimsWithCopy: the output's dims move into a persistent
    TfLiteIntArray of the model's output ``rank`` (kernels that recompute the output shape
    in prepare). Only the arena effect is emulated: our kernels then require the model's
    output shape to be the computed one. The array is written while the kernel's
    temporaries are live."""
    ctx.allocate_persistent(int_array_bytes(ctx, rank), written=True)


def check_io_count(ctx, node, inputs: int, outputs: int = 1) -> None:
    """TFLM's NumInputs / NumOutputs checks: exactly ``inputs`` and ``outputs`` tensors."""
    if len(node.inputs) != inputs or len(node.outputs) != outputs:
        def count(n, what):
            return f"{n} {what}{'s' if n != 1 else ''}"
        raise ctx.error(f"needs {count(inputs, 'input')} and {count(outputs, 'output')}, got "
                        f"{len(node.inputs)} and {len(node.outputs)}")
