"""DECODE (TFLM's custom ``TFLM_DECODE``): decompresses encoded constant tensors into
arena tensors, as TFLM's compression tool inserts it before each consumer.

Inputs come in pairs (encoded tensor, ancillary-data tensor), one pair per output. The
ancillary tensor starts with the 16-byte DECODE Common Metadata (byte 0: decode type,
byte 1: DCM version 1, bytes 4..15: per-type parameters) followed by the per-type data:

* LUT (type 0): byte 4 version 1, byte 5 index bit width (low 3 bits), byte 6 value
  table length per channel; value tables from byte 16. Channels come from the output's
  quantization (one per scale; axis 0 or the last axis), not from the tool's axis field;
* pruning (type 2): byte 4 version 1; a bit per element (high bit first), the kept
  values from byte 16; pruned elements take their channel's zero point;
* Huffman (type 1): byte 4 version 1, byte 5 bit 0 = 32-bit table entries, bits 7..4 =
  log2(initial table size) - 1; Xtensa-format tables from byte 16.

Allocations, in TFLM's order: no init; prepare takes one pointer per output from the
tail (the DecodeState array), then per output its DecodeState object (and, for pruning
with per-channel int8 zero points, a zero-point copy). An output that fits in the
alternate decompression memory is placed there, outside the arena plan. The decoded
values depend only on constants: they are computed at prepare and copied into the
output at each invoke. Output types TFLM's decoders do not handle fail at invoke, as in
TFLM.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from micro_runtime.model import DECODE_CUSTOM_CODE

from .base import Kernel, register
from .internal import decompress
from .internal.decompress import (DCM_BYTES, DECODE_TYPE_CUSTOM, DECODE_TYPE_HUFFMAN,
                                  DECODE_TYPE_LUT, DECODE_TYPE_PRUNE, DecompressionError)
from .internal.tensor_utils import BOOL, FLOAT32, INT8, INT16, INT32, INT64, type_name

#: output types TFLM's LUT and pruning decoders write
_LUT_TYPES = (BOOL, FLOAT32, INT8, INT16, INT32, INT64)
_STATE_STRUCTS = {DECODE_TYPE_LUT: "decode.DecodeStateLut",
                  DECODE_TYPE_PRUNE: "decode.DecodeStatePrune",
                  DECODE_TYPE_HUFFMAN: "decode.DecodeStateHuffman"}


class DecodedOutput:
    """One output's decoded values, or the error TFLM's Decode gives at invoke."""

    def __init__(self, values: Optional[np.ndarray], error: Optional[str] = None):
        self.values = values
        self.error = error


def _raw_bytes(tensor) -> np.ndarray:
    """A constant tensor's bytes as TFLM's GetTensorData<uint8_t> sees them."""
    return np.ascontiguousarray(tensor.data).reshape(-1).view(np.uint8)


def _channels(ctx, out) -> tuple:
    """(channel count, last-axis channels, zero points) from the output's quantization,
    as DecodeStateLut / DecodeStatePrune Setup resolve them."""
    q = out.quantization
    if q is None:
        return 1, False, np.zeros(1, np.int64)
    channels = int(q.scales.size)
    axis = int(q.quantized_dimension)
    last = axis == len(out.shape) - 1 and channels > 1
    if not last and axis != 0:
        raise ctx.error(f"unsupported quantization axis {axis}")
    zero_points = q.zero_points.astype(np.int64)
    if zero_points.size != channels:
        zero_points = np.resize(zero_points, channels)
    return channels, last, zero_points


@register
class Decode(Kernel):
    custom_name = DECODE_CUSTOM_CODE
    invoke_allocates = True     # takes decompression memory
    supported_types = ("float32 (LUT, pruning)", "int8", "int16 (LUT, pruning, 32-bit Huffman)",
                       "int32 (LUT, pruning)", "int64 (LUT, pruning)", "bool (LUT, pruning)")
    type_input = None

    def prepare(self, ctx, node):
        n_in, n_out = len(node.inputs), len(node.outputs)
        if n_out < 1:
            raise ctx.error("num_outputs > 0 was not true")
        if n_in != 2 * n_out:
            raise ctx.error(f"num_inputs != num_outputs * 2 ({n_in} != {2 * n_out})")
        ctx.allocate_persistent(n_out * ctx.target.sizeof("pointer"))   # DecodeState* array
        ctx.reset_decompression_memory()
        decoded = []
        for k in range(n_out):
            inp = ctx.input(node, 2 * k)
            if inp is None:
                raise ctx.error(f"failed to allocate input tensor {2 * k}")
            anc = ctx.input(node, 2 * k + 1)
            if anc is None:
                raise ctx.error(f"failed to allocate ancillary tensor {2 * k + 1}")
            out = ctx.output(node, k)
            if out is None:
                raise ctx.error(f"failed to allocate output tensor {k}")
            if not inp.is_constant:
                raise ctx.error(f"IsConstantTensor(input) was not true (input {2 * k})")
            if not anc.is_constant:
                raise ctx.error(f"IsConstantTensor(ancillary) was not true (input {2 * k + 1})")
            if out.is_constant:
                raise ctx.error(f"output {k} is a constant tensor: TFLM would decode into the "
                                "model's own data")
            ancillary = _raw_bytes(anc)
            if ancillary.size < DCM_BYTES:
                raise ctx.error(f"ancillary tensor {2 * k + 1} holds {ancillary.size} bytes, less "
                                f"than the {DCM_BYTES}-byte DECODE metadata header")
            if ancillary[1] != 1:
                raise ctx.error(f"version {ancillary[1]} != 1")
            decode_type = int(ancillary[0])
            struct = _STATE_STRUCTS.get(decode_type)
            if struct is None:
                if decode_type == DECODE_TYPE_CUSTOM:
                    raise ctx.error("Custom decode type not yet supported")
                raise ctx.error(f"unsupported decode type {decode_type}")
            ctx.allocate_persistent(ctx.sizeof(struct))
            self._place_output(ctx, node, k)
            if ancillary[4] != 1:
                raise ctx.error(f"unsupported version {ancillary[4]}")
            try:
                if decode_type == DECODE_TYPE_LUT:
                    decoded.append(self._lut(ctx, inp, ancillary, out))
                elif decode_type == DECODE_TYPE_PRUNE:
                    decoded.append(self._prune(ctx, inp, ancillary, out))
                else:
                    decoded.append(self._huffman(ctx, inp, ancillary, out))
            except DecompressionError as e:
                raise ctx.error(f"output {k}: {e}") from None
            ctx.release(inp, anc, out)
        node.user_data = decoded

    @staticmethod
    def _place_output(ctx, node, k: int) -> None:
        """TFLM's SetOutputTensorData: an output without memory goes to the alternate
        decompression memory when it fits (the planner then leaves it out)."""
        tensor = ctx.eval_tensor(node.outputs[k])
        if tensor.data is not None:
            return
        raw = ctx.allocate_decompression_memory(tensor.nbytes, 16)
        if raw is not None:
            tensor.data = raw.view(tensor.dtype).reshape(tensor.shape)

    @staticmethod
    def _count(out) -> int:
        n = 1
        for d in out.shape:
            n *= int(d)
        return n

    def _lut(self, ctx, inp, ancillary, out) -> DecodedOutput:
        channels, last, _ = _channels(ctx, out)
        bit_width = int(ancillary[5]) & 0x07
        stride = int(ancillary[6])
        if out.type not in _LUT_TYPES:
            return DecodedOutput(None, f"unsupported tensor type {type_name(out.type)}")
        values = decompress.typed_values(ancillary[DCM_BYTES:], out.dtype)
        count = self._count(out)
        flat = decompress.lut_decode(_raw_bytes(inp), bit_width, values, count, channels, last,
                                     stride)
        return DecodedOutput(flat.reshape(out.shape))

    def _prune(self, ctx, inp, ancillary, out) -> DecodedOutput:
        channels, last, zero_points = _channels(ctx, out)
        nonzero = bool(np.any(zero_points[:channels] != 0))
        if out.quantization is not None and out.type != INT8 and nonzero:
            raise ctx.error("All zero-points must be zero")
        per_channel = out.quantization is not None and channels > 1 and nonzero
        if per_channel:
            ctx.allocate_persistent(channels)      # the int8 zero points
        if out.type not in _LUT_TYPES:
            return DecodedOutput(None, f"unsupported tensor type {type_name(out.type)}")
        # TFLM copies raw elements: bool as bytes, float32 as its 32-bit pattern
        element = {BOOL: np.int8, FLOAT32: np.int32}.get(out.type, out.dtype)
        values = decompress.typed_values(ancillary[DCM_BYTES:], element)
        count = self._count(out)
        if per_channel and out.type == INT8:
            zps = zero_points[:channels].astype(np.int8)
        else:
            # single_zero_point_ is an int8_t (0 without quantization)
            zps = np.array([zero_points[0] if out.quantization is not None else 0]).astype(np.int8)
            last = False
        flat = decompress.prune_decode(_raw_bytes(inp), values, count, zps.astype(element), last)
        return DecodedOutput(flat.view(out.dtype).reshape(out.shape))

    def _huffman(self, ctx, inp, ancillary, out) -> DecodedOutput:
        wide = bool(ancillary[5] & 0x01)
        initial = (int(ancillary[5]) & 0xF0) >> 4
        if not wide and out.type != INT8:
            raise ctx.error(f"output.type != kTfLiteInt8 ({type_name(out.type)} != INT8): the "
                            "16-bit Huffman table decodes int8 only")
        if out.type not in (INT8, INT16):
            return DecodedOutput(None, f"unsupported tensor type {type_name(out.type)}")
        tables = decompress.typed_values(ancillary[DCM_BYTES:], np.uint32 if wide else np.uint16)
        flat = decompress.huffman_decode(_raw_bytes(inp), tables, self._count(out), initial,
                                         out.dtype)
        return DecodedOutput(flat.reshape(out.shape))

    def invoke(self, ctx, node):
        for k, decoded in enumerate(node.user_data):
            if decoded.error is not None:
                raise ctx.error(decoded.error)
            target = node.output_arrays[k]
            np.copyto(target.reshape(-1).view(np.uint8),
                      decoded.values.reshape(-1).view(np.uint8))
