"""TFLM compression: unpacking LUT indices, pruning masks and Huffman code streams.

Shared by the two ways TFLM decompresses a tensor:

* the COMPRESSION_METADATA path (USE_TFLM_COMPRESSION builds): a kernel that supports
  compression decompresses its LUT-compressed weights into a scratch buffer at invoke;
* the DECODE custom operator (``TFLM_DECODE``): decodes an encoded tensor, guided by its
  ancillary-data tensor, into an arena tensor (LUT, pruning and Huffman decode types).

Every decoder follows TFLM's element order exactly (which value table an element reads,
what is left unwritten) and refuses, with :class:`DecompressionError`, the inputs on which
TFLM would read outside the tensors it was given. Results are whole numpy arrays: the
decoded values depend only on constant data, so callers compute them once.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

#: index bit widths a LUT may use (LookupTableData::kMaxBitWidth = 7)
MAX_LUT_BIT_WIDTH = 7
#: bytes of the DECODE Common Metadata header at the start of an ancillary tensor
DCM_BYTES = 16
#: DCM byte 0: decode types TFLM implements
DECODE_TYPE_LUT, DECODE_TYPE_HUFFMAN, DECODE_TYPE_PRUNE, DECODE_TYPE_CUSTOM = 0, 1, 2, 127


class DecompressionError(ValueError):
    """The compressed data cannot be decoded the way TFLM reads it (TFLM would read
    past a buffer or loop without end)."""


def unpack_bit_fields(packed: np.ndarray, bit_width: int, count: int) -> np.ndarray:
    """``count`` unsigned ``bit_width``-bit fields packed from the high bit of each byte
    downwards without padding (TFLM's LUT index layout), as int64."""
    need = -(-count * bit_width // 8)
    if packed.size < need:
        raise DecompressionError(f"{count} indices of {bit_width} bits need {need} bytes, "
                                 f"the compressed tensor holds {packed.size}")
    if count == 0:
        return np.zeros(0, np.int64)
    bits = np.unpackbits(np.asarray(packed[:need], dtype=np.uint8))[:count * bit_width]
    weights = (1 << np.arange(bit_width - 1, -1, -1)).astype(np.int64)
    return bits.reshape(count, bit_width).astype(np.int64) @ weights


def lut_channel_of_elements(count: int, num_channels: int, channel_last: bool) -> np.ndarray:
    """The value-table channel TFLM uses for each element: consecutive runs of
    ``count // num_channels`` elements per channel (first axis), or element ``k`` in
    channel ``k % num_channels`` (last axis)."""
    if num_channels < 1:
        raise DecompressionError("a compressed tensor needs at least one channel")
    if count % num_channels:
        raise DecompressionError(
            f"{count} elements do not split into {num_channels} channels (TFLM would leave "
            "elements unwritten or run past the buffer)")
    k = np.arange(count, dtype=np.int64)
    return k % num_channels if channel_last else k // (count // num_channels)


def lut_decode(packed: np.ndarray, bit_width: int, values: np.ndarray, count: int,
               num_channels: int, channel_last: bool, stride: int) -> np.ndarray:
    """Look-up-table decompression: element ``k`` takes value
    ``values[channel(k) * stride + index(k)]``. ``values`` is the value-table buffer
    viewed as the tensor's element type; the result has that dtype, ``count`` elements.
    A bit width of 0 reads every index as 0 (what TFLM's DECODE does with it)."""
    if not 0 <= bit_width <= MAX_LUT_BIT_WIDTH:
        raise DecompressionError(f"LUT index bit width {bit_width} is not 1..{MAX_LUT_BIT_WIDTH}")
    if bit_width == 0:
        index = np.zeros(count, np.int64)
    else:
        index = unpack_bit_fields(packed, bit_width, count)
    position = lut_channel_of_elements(count, num_channels, channel_last) * stride + index
    if position.size and int(position.max()) >= values.size:
        raise DecompressionError(
            f"an index reads value-table entry {int(position.max())} but the tables hold "
            f"{values.size} values (stride {stride}, {num_channels} channel(s))")
    return values[position]


def prune_decode(packed: np.ndarray, values: np.ndarray, count: int,
                 zero_points: np.ndarray, channel_last: bool) -> np.ndarray:
    """Pruning decompression: a bit per element (high bit first) says whether it takes
    the next stored value or its channel's zero point (``zero_points`` has one entry per
    channel, or one)."""
    keep = unpack_bit_fields(packed, 1, count).astype(bool)
    kept = int(keep.sum())
    if kept > values.size:
        raise DecompressionError(f"the pruning mask keeps {kept} values but {values.size} "
                                 "are stored")
    if zero_points.size > 1:
        channel = lut_channel_of_elements(count, zero_points.size, channel_last)
        out = zero_points[channel].astype(values.dtype)
    else:
        out = np.full(count, zero_points[0] if zero_points.size else 0).astype(values.dtype)
    out[keep] = values[:kept]
    return out


def huffman_decode(codewords: np.ndarray, tables: np.ndarray, count: int,
                   initial_bits: int, dtype: np.dtype) -> np.ndarray:
    """Huffman decompression with Xtensa-format decode tables, as TFLM's
    DecodeStateHuffman: the code stream is read as big-endian 32-bit words, high bit
    first; ``tables`` holds uint16 (16-bit format) or uint32 entries. An entry with the
    top bit set is a symbol (its low bits, truncated to ``dtype``) whose code used
    ``bits - residual`` of the bits read; otherwise it links to a sub-table indexed by
    the next ``count + 1`` bits. Sequential by nature: one Python step per symbol."""
    wide = tables.dtype.itemsize == 4
    found_mask = 0x80000000 if wide else 0x8000
    count_shift = 27 if wide else 11
    value_mask = 0x07FFFFFF if wide else 0x07FF
    data = np.asarray(codewords, dtype=np.uint8)
    available = data.size * 8
    # 64-bit big-endian window at every byte (reads of a word past the data only ever
    # feed bits that are put back; they read zeros here)
    padded = np.concatenate([data, np.zeros(8, np.uint8)]).astype(np.uint64)
    windows = np.zeros(data.size + 1, np.uint64)
    for j in range(8):
        windows |= padded[j:j + data.size + 1] << np.uint64(56 - 8 * j)
    windows = windows.tolist()
    table = tables.astype(np.int64).tolist()
    out = np.empty(count, dtype=np.int64)
    position = 0

    def take(n: int) -> int:
        nonlocal position
        if position >> 3 >= len(windows):
            raise DecompressionError("the Huffman code stream ends before the last symbol")
        v = (windows[position >> 3] >> (64 - (position & 7) - n)) & ((1 << n) - 1)
        position += n
        return v

    for k in range(count):
        used = initial_bits + 1
        offset = take(used)
        if offset >= len(table):
            raise DecompressionError(f"Huffman code reads table entry {offset} of {len(table)}")
        entry = table[offset]
        while not entry & found_mask:
            used = ((entry >> count_shift) & 0xF) + 1
            offset += (entry & value_mask) + take(used)
            if offset >= len(table):
                raise DecompressionError(f"Huffman code reads table entry {offset} of "
                                         f"{len(table)}")
            entry = table[offset]
        out[k] = entry
        residual = (entry >> count_shift) & 0xF
        if used > residual:
            position -= used - residual
        if position > available or position >> 3 >= len(windows):
            raise DecompressionError("the Huffman code stream ends before the last symbol")
    width = np.dtype(dtype).itemsize * 8
    return (out & ((1 << width) - 1)).astype(f"u{width // 8}").view(dtype)


def typed_values(raw: Optional[np.ndarray], dtype: np.dtype) -> np.ndarray:
    """A value-table byte buffer as whole elements of ``dtype`` (a trailing partial
    element is dropped: TFLM never reads it for in-range indices)."""
    dtype = np.dtype(dtype).newbyteorder("<") if np.dtype(dtype).itemsize > 1 else np.dtype(dtype)
    if raw is None:
        return np.zeros(0, dtype)
    raw = np.asarray(raw, dtype=np.uint8)
    n = raw.size // dtype.itemsize
    return np.frombuffer(raw[:n * dtype.itemsize].tobytes(), dtype=dtype)
