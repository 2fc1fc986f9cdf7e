"""Shared pieces of TFLM's signal-library kernels (signal/micro/kernels, signal/src).

* Custom options are a flexbuffer map. TFLM reads most parameters through its
  FlexbufferWrapper: the map's value vector, element ``i`` (keys in alphabetical order),
  read as a raw little-endian signed integer of the map's byte width whatever its type.
  A few kernels (SignalRfft, SignalIrfft, SignalOverlapAdd) look the type key ``T`` up by
  name instead.
* ``msb32`` / ``msb64``: the signal library's MostSignificantBit for gcc builds — the bit
  length of ``x``, but 32 (64) for zero.
* Integer helpers emulating C conversions: wrap to int16 / int32 / uint32.
"""
from __future__ import annotations

from typing import List

import numpy as np

from .tensor_utils import BOOL, FLOAT32, INT16, INT32, type_name  # noqa: F401  (re-exported)

__all__ = ["FLOAT32", "INT16", "INT32", "type_name", "signal_options", "flex_element",
           "flex_elements", "flex_element_bool", "flex_map_int", "wrap16", "wrap32", "msb32", "msb64"]

try:
    import flatbuffers.flexbuffers as _flex
except ImportError:  # pragma: no cover - flatbuffers is a dependency
    _flex = None


class SignalOptions:
    """A node's custom options, parsed once: the map's raw value elements (as TFLM's
    FlexbufferWrapper::ElementAsInt64 reads them: signed integers of the map's byte
    width, in key order) and its integer values by key (``AsInt32``)."""

    def __init__(self, elements: List[int], by_key: dict):
        self.elements = elements
        self.by_key = by_key


def signal_options(ctx, node) -> SignalOptions:
    """Parse ``node``'s custom options; malformed flexbuffers fail as the op's error."""
    raw = node.spec.custom_options
    if not raw:
        return SignalOptions([], {})
    try:
        root = _flex.GetRoot(bytes(raw))
        m = root.AsMap
        values = m.Values
        width = values._byte_width
        data = bytes(values._buf[0:width * len(values)])
        elements = [int.from_bytes(data[i * width:(i + 1) * width], "little", signed=True)
                    for i in range(len(values))]
        by_key = {}
        for k, v in zip(m.Keys, values):
            try:
                by_key[k.AsKey] = v.AsInt
            except Exception:   # noqa: BLE001 - non-integer values are not looked up by key
                by_key[k.AsKey] = None
    except Exception as e:      # noqa: BLE001 - any decoding failure is a malformed model
        raise ctx.error(f"malformed custom options (flexbuffer map expected): {type(e).__name__}") from None
    return SignalOptions(elements, by_key)


def flex_elements(options: SignalOptions) -> List[int]:
    return list(options.elements)


def flex_element(options: SignalOptions, index: int) -> int:
    """Element ``index`` as ElementAsInt32 (int64 read, truncated to int32)."""
    if index >= len(options.elements):
        return 0
    return wrap_int32_scalar(options.elements[index])


def flex_element_bool(options: SignalOptions, index: int) -> bool:
    """Element ``index`` as ElementAsBool (nonzero raw value)."""
    return index < len(options.elements) and options.elements[index] != 0


def flex_map_int(options: SignalOptions, key: str) -> int:
    """``flexbuffers::GetRoot(...).AsMap()[key].AsInt32()``: 0 for a missing key."""
    value = options.by_key.get(key)
    return 0 if value is None else wrap_int32_scalar(value)


def wrap_int32_scalar(v: int) -> int:
    return ((int(v) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def wrap16(x: np.ndarray) -> np.ndarray:
    """C conversion of an integer array to int16 (two's complement wrap), kept int64.
    numpy's integer narrowing casts keep the low bits (C's conversion on two's
    complement), in two passes instead of three."""
    if isinstance(x, (np.ndarray, np.integer)):
        return x.astype(np.int16).astype(np.int64)
    return ((x + 32768) & 0xFFFF) - 32768


def wrap32(x: np.ndarray) -> np.ndarray:
    """C conversion to int32 (two's complement wrap), kept int64 (see :func:`wrap16`)."""
    if isinstance(x, (np.ndarray, np.integer)):
        return x.astype(np.int32).astype(np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def bit_length(x: np.ndarray, bits: int) -> np.ndarray:
    """Bit length of unsigned integers (0 for 0), exact for up to 64 bits.

    From float64's exponent: frexp gives the bit length exactly below 2^53; above, the
    conversion may round up to the next power of two (one too many, never too few), which
    the check ``x >> (n - 1) == 0`` undoes."""
    x = np.asarray(x).astype(np.uint64)
    n = np.frexp(x.astype(np.float64))[1].astype(np.int64)
    np.minimum(n, 64, out=n)
    over = (x >> np.maximum(n - 1, 0).astype(np.uint64)) == 0
    over &= n > 0
    n -= over
    return n


def sample_shape(ctx, shape) -> tuple:
    """The per-sample shape of a sample-dependent tensor: without its leading sample axis
    in a block of samples (``ctx.block_samples``; see kernels/internal/sample_rows.py)."""
    shape = tuple(shape)
    return shape[1:] if ctx.block_samples else shape


def vector_rows(block, inputs, outputs=None) -> bool:
    """Batched evaluation of the signal ops that take 1-D vectors (and scalars): the
    listed inputs vary with the sample and no other one does, and every varying tensor
    gets the sample axis in front (a vector of length 1 would have it merged instead)."""
    if not block.only_vary(inputs):
        return False
    tensors = [block.inputs[i] for i in inputs] + list(block.outputs)
    return all(len(t.shape) == 0 or not block.merged(t) for t in tensors)


def msb32(x: np.ndarray) -> np.ndarray:
    """MostSignificantBit32 of uint32 values (gcc build: 32 for zero)."""
    x = np.asarray(x).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    n = bit_length(x, 32)
    return np.where(x == 0, 32, n)


def msb64(x: np.ndarray) -> np.ndarray:
    """MostSignificantBit64 of uint64 values (gcc build: 64 for zero)."""
    x = np.asarray(x).astype(np.uint64)
    n = bit_length(x, 64)
    return np.where(x == 0, 64, n)


def num_dims(t) -> int:
    return len(t.shape)


def fft_tensors(ctx, node, params):
    """The checks SignalRfft and SignalIrfft share in prepare: custom option T known, one
    input and one output of the same rank, both of type T. Returns (input, output)."""
    if params is None:
        raise ctx.error("custom option T must be int16, int32 or float32")
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise ctx.error("needs 1 input and 1 output")
    inp = ctx.required_input(node, 0)
    out = ctx.required_output(node, 0)
    if len(inp.shape) != len(out.shape) or len(inp.shape) < 1:
        raise ctx.error(f"input {inp.shape} and output {out.shape} must have the same rank")
    if inp.type != params.fft_type or out.type != params.fft_type:
        raise ctx.error(f"input {type_name(inp.type)} and output {type_name(out.type)} must be "
                        f"{type_name(params.fft_type)} (custom option T)")
    return inp, out


def frame_and_valid_tensors(ctx, node):
    """(input, output, valid output) temp tensors of an op with one input and a
    (data, valid flag) output pair (SignalFramer, SignalStacker), after TFLM's count
    checks; release them with ``ctx.release``."""
    if len(node.inputs) != 1:
        raise ctx.error(f"NumInputs(node) != 1 ({len(node.inputs)} != 1)")
    if len(node.outputs) != 2:
        raise ctx.error(f"NumOutputs(node) != 2 ({len(node.outputs)} != 2)")
    return ctx.required_input(node, 0), ctx.required_output(node, 0), ctx.required_output(node, 1)


def check_frame_and_valid_types(ctx, inp, out, valid) -> None:
    """int16 data in and out, a bool valid flag (TF_LITE_ENSURE_TYPES_EQ each)."""
    for what, t, want in (("input", inp, INT16), ("output", out, INT16),
                          ("valid output", valid, BOOL)):
        if t.type != want:
            raise ctx.error(f"{what} type {type_name(t.type)} != {type_name(want)}")
