"""Compressing a model's constant tensors the ways TFLM decompresses them.

Two output forms, both read by micro-runtime and by TFLM:

* ``"decode"`` — what TFLM's own compression tool writes today: each compressed tensor
  becomes a UINT8 tensor of encoded bytes plus an ancillary-data tensor, and a DECODE
  custom operator (``TFLM_DECODE``) is inserted right before every operator that reads
  it (one DECODE per consumer, decoding all of that consumer's compressed inputs; a
  compressed subgraph output is decoded by one DECODE appended at the end). The decoded
  tensors are arena tensors that live from their DECODE to the next operator. Methods:
  ``"lut"`` (1..7-bit indices into per-tensor or per-channel value tables), ``"prune"``
  (a bit per element, the non-zero-point values kept) and ``"huffman"`` (canonical
  Huffman codes with Xtensa-format decode tables; int8 and int16).
* ``"metadata"`` — TFLM's earlier form (read only by builds with USE_TFLM_COMPRESSION):
  the tensor keeps its type and shape, its buffer holds the packed LUT indices, the value
  tables go to a new buffer, and a ``COMPRESSION_METADATA`` entry lists the tensors.
  Supported kernels (conv, depthwise conv, fully connected, transpose conv,
  concatenation, assign variable) decompress into scratch buffers. LUT only; the
  value tables are padded to 2^bits entries as TFLM's tool did.

TFLM decides the value-table channels from the tensor's quantization (one table per
scale, along the quantized dimension, which must be 0 or the last), whatever the tool's
``axis`` says; :func:`compress` therefore takes the axis from the quantization by default
and refuses an axis that disagrees with it.

Example::

    from micro_runtime.tools.compress import TensorCompression, compress
    small = compress(open("model.tflite", "rb").read(),
                     [TensorCompression(tensor=4, method="lut", bit_width=4)])
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import flatbuffers
import numpy as np

from .. import schema
from ..errors import InputError
from ..model import COMPRESSION_METADATA, DECODE_CUSTOM_CODE, Model, load_model
from .model_writer import ModelBuilder, _offset_vector, _Operator, _Tensor

#: DCM byte 0 of each decode method
DECODE_TYPES = {"lut": 0, "huffman": 1, "prune": 2}
DCM_BYTES = 16
#: LUT value tables TFLM addresses with a uint8 stride
MAX_TABLE_LENGTH = 128
#: bits one Huffman table lookup may take (a symbol entry's 4-bit count says how many
#: of them its code used)
MAX_HUFFMAN_LOOKUP_BITS = 15


@dataclass(frozen=True)
class TensorCompression:
    """How to compress one constant tensor.

    ``method``: ``"lut"``, ``"prune"`` or ``"huffman"``. ``bit_width``: LUT index bits
    (1..7; the tensor may have at most 2^bit_width distinct values per table).
    ``per_channel``: one value table (LUT) or zero point (prune) per channel of the
    tensor's quantization; None = per channel exactly when the tensor has several
    quantization scales."""

    tensor: int
    method: str = "lut"
    bit_width: int = 4
    subgraph: int = 0
    per_channel: Optional[bool] = None


# ------------------------------------------------------------------- encoders
def pack_bit_fields(fields: np.ndarray, bit_width: int) -> bytes:
    """Unsigned ``bit_width``-bit fields packed from the high bit of each byte down, no
    padding between fields, the last byte zero-padded."""
    fields = np.asarray(fields, dtype=np.int64).reshape(-1)
    if fields.size == 0:
        return b""
    shifts = np.arange(bit_width - 1, -1, -1, dtype=np.int64)
    bits = ((fields[:, None] >> shifts) & 1).astype(np.uint8).reshape(-1)
    return np.packbits(bits).tobytes()


def _channels(values: np.ndarray, quantization, per_channel: Optional[bool]) -> Tuple[int, bool]:
    """(channel count, channels on the last axis) TFLM will use for this tensor."""
    scales = 1 if quantization is None else int(quantization.scales.size)
    if per_channel is None:
        per_channel = scales > 1
    if not per_channel:
        if scales > 1:
            raise InputError(f"the tensor has {scales} quantization scales: TFLM decompresses it "
                             "with one table per channel (per_channel must not be False)")
        return 1, False
    if scales <= 1:
        raise InputError("per-channel compression needs per-channel quantization: TFLM takes the "
                         "channels from the tensor's quantization scales")
    axis = int(quantization.quantized_dimension)
    rank = values.ndim
    if axis not in (0, rank - 1):
        raise InputError(f"quantized dimension {axis} of a rank-{rank} tensor: TFLM decompresses "
                         "along axis 0 or the last axis only")
    if values.shape[axis] != scales:
        raise InputError(f"{scales} scales for dimension {axis} of shape {values.shape}")
    return scales, axis == rank - 1 and axis != 0


def _by_channel(values: np.ndarray, channels: int, last: bool) -> np.ndarray:
    """(channels, elements per channel) in TFLM's order (element k of a last-axis
    tensor belongs to channel k % channels)."""
    flat = values.reshape(-1)
    return flat.reshape(-1, channels).T if last else flat.reshape(channels, -1)


def lut_encode(values: np.ndarray, bit_width: int, channels: int, last: bool,
               table_length: Optional[int] = None) -> Tuple[bytes, bytes, int]:
    """(packed indices, value tables, stride): ``stride`` entries per channel table
    (``table_length``, or the largest number of distinct values of a channel)."""
    if not 1 <= bit_width <= 7:
        raise InputError(f"LUT bit width {bit_width} is not 1..7")
    rows = _by_channel(values, channels, last)
    tables, indices = [], []
    for row in rows:
        table, index = np.unique(row, return_inverse=True)
        tables.append(table)
        indices.append(index.reshape(-1))
    stride = max(t.size for t in tables) if table_length is None else table_length
    if stride > min(1 << bit_width, MAX_TABLE_LENGTH) or max(t.size for t in tables) > stride:
        raise InputError(f"a channel has {max(t.size for t in tables)} distinct values: more than "
                         f"{bit_width}-bit indices address")
    index_matrix = np.stack(indices)
    ordered = index_matrix.T.reshape(-1) if last else index_matrix.reshape(-1)
    padded = np.zeros((channels, stride), dtype=values.dtype)
    for c, t in enumerate(tables):
        padded[c, :t.size] = t
    return pack_bit_fields(ordered, bit_width), _le_bytes(padded), stride


def prune_encode(values: np.ndarray, zero_points: np.ndarray, channels: int,
                 last: bool) -> Tuple[bytes, bytes]:
    """(mask bits, kept values): a 1 bit for every element that differs from its
    channel's zero point, the kept values in element order."""
    flat = values.reshape(-1)
    k = np.arange(flat.size)
    channel = k % channels if last else k // max(flat.size // channels, 1)
    zps = np.resize(np.asarray(zero_points), channels).astype(values.dtype)
    keep = flat != zps[channel]
    if values.dtype.kind == "f":
        keep = flat.view(np.int32) != np.zeros(1, np.int32)
    return pack_bit_fields(keep.astype(np.int64), 1), _le_bytes(flat[keep])


def huffman_encode(values: np.ndarray, max_code_bits: int = MAX_HUFFMAN_LOOKUP_BITS,
                   initial_bits: int = 4) -> Tuple[bytes, bytes, int, bool]:
    """(code stream, decode tables, DCM byte 5, wide table) for int8 or int16 values:
    canonical Huffman codes of at most ``max_code_bits`` bits, the stream padded to whole
    32-bit big-endian words, tables in the Xtensa format TFLM's DecodeStateHuffman
    reads (16-bit entries for int8, 32-bit for int16)."""
    flat = values.reshape(-1)
    wide = flat.dtype.itemsize > 1
    symbols, counts = np.unique(flat, return_counts=True)
    lengths = _code_lengths(counts.tolist(), max_code_bits)
    codes = _canonical_codes(lengths)
    code_of = {int(s): (codes[i], lengths[i]) for i, s in enumerate(symbols.tolist())}
    bits = []
    for v in flat.tolist():
        code, n = code_of[int(v)]
        bits.extend((code >> (n - 1 - j)) & 1 for j in range(n))
    bits.extend([0] * ((-len(bits)) % 32))
    stream = np.packbits(np.array(bits, dtype=np.uint8)).tobytes() if bits else b""
    first = max(1, min(initial_bits, max(lengths)))
    entries = _decode_tables([(int(s), codes[i], lengths[i]) for i, s in enumerate(symbols.tolist())],
                             first, wide)
    table = np.array(entries, dtype="<u4" if wide else "<u2")
    params = ((first - 1) << 4) | (1 if wide else 0)
    return stream, table.tobytes(), params, wide


def _code_lengths(counts: List[int], limit: int) -> List[int]:
    """Huffman code lengths (at least 1 bit), lengthened where needed to stay within
    ``limit`` bits (the Kraft sum kept at most 1)."""
    if len(counts) == 1:
        return [1]
    heap = [(c, i, None) for i, c in enumerate(counts)]
    heapq.heapify(heap)
    parent: Dict[int, int] = {}
    next_id = len(counts)
    while len(heap) > 1:
        a = heapq.heappop(heap)
        b = heapq.heappop(heap)
        parent[a[1]] = next_id
        parent[b[1]] = next_id
        heapq.heappush(heap, (a[0] + b[0], next_id, None))
        next_id += 1
    lengths = []
    for i in range(len(counts)):
        n, node = 0, i
        while node in parent:
            node = parent[node]
            n += 1
        lengths.append(n)
    lengths = [min(n, limit) for n in lengths]
    order = sorted(range(len(lengths)), key=lambda i: counts[i])
    while sum(2.0 ** -n for n in lengths) > 1.0:
        for i in order:
            if lengths[i] < limit:
                lengths[i] += 1
                break
    return lengths


def _canonical_codes(lengths: List[int]) -> List[int]:
    codes = [0] * len(lengths)
    code, previous = 0, 0
    for i in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        code <<= lengths[i] - previous
        codes[i] = code
        code += 1
        previous = lengths[i]
    return codes


def _decode_tables(symbols: List[Tuple[int, int, int]], first_bits: int, wide: bool) -> List[int]:
    """Multi-level lookup tables: a table indexed by the next ``width`` bits holds, per
    index, either the symbol whose code those bits start (flag, bits of this lookup the
    code uses, value) or a link (width - 1 of the sub-table, its offset from this entry)."""
    found = 0x80000000 if wide else 0x8000
    shift = 27 if wide else 11
    value_mask = 0x07FFFFFF if wide else 0x07FF
    out: List[int] = []

    def build(entries: List[Tuple[int, int, int]], width: int) -> int:
        """Append a table for ``entries`` (symbol, remaining code, remaining length);
        returns its position."""
        base = len(out)
        out.extend([0] * (1 << width))
        for index in range(1 << width):
            short = [(sym, n) for sym, code, n in entries
                     if n <= width and index >> (width - n) == code]
            longer = [(sym, code & ((1 << (n - width)) - 1), n - width) for sym, code, n in entries
                      if n > width and code >> (n - width) == index]
            if short:
                sym, n = short[0]
                out[base + index] = found | (n << shift) | (sym & value_mask)
            elif longer:
                sub_width = min(max(n for _, _, n in longer), MAX_HUFFMAN_LOOKUP_BITS)
                position = build(longer, sub_width)
                out[base + index] = ((sub_width - 1) << shift) | ((position - (base + index)) & value_mask)
            else:
                # no code starts with these bits (an incomplete code): never read
                out[base + index] = found | (width << shift) | (entries[0][0] & value_mask)
        return base

    build([(s, c, n) for s, c, n in symbols], first_bits)
    return out


def _le_bytes(array: np.ndarray) -> bytes:
    a = np.asarray(array)
    if a.dtype.itemsize > 1:
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.tobytes()


def cluster(values: np.ndarray, levels: int, channels: int = 1, last: bool = False) -> np.ndarray:
    """``values`` with at most ``levels`` distinct values per channel (each value moved
    to the nearest of ``levels`` quantiles of its channel's values, rounded for
    integers): weight clustering, the step before LUT compression when a trained model
    was not clustered already. Same dtype and shape."""
    values = np.asarray(values)
    rows = _by_channel(values, channels, last).astype(np.float64)
    out = np.empty_like(rows)
    for c, row in enumerate(rows):
        centers = np.unique(np.quantile(np.unique(row), np.linspace(0, 1, levels)))
        if values.dtype.kind in "iu":
            centers = np.unique(np.round(centers))
        out[c] = centers[np.abs(row[:, None] - centers[None, :]).argmin(axis=1)]
    flat = out.T.reshape(-1) if last else out.reshape(-1)
    return flat.astype(values.dtype).reshape(values.shape)


def cluster_tensor(model: Union[bytes, Model], tensor: int, levels: int, subgraph: int = 0) -> bytes:
    """A copy of ``model`` whose constant ``tensor`` is :func:`cluster`-ed (per channel
    when it has per-channel quantization)."""
    model = model if isinstance(model, Model) else load_model(bytes(model))
    t = model.subgraphs[subgraph].tensors[tensor]
    if t.data is None:
        raise InputError(f"{t.describe()} is not a constant tensor")
    values = np.asarray(t.data).reshape(t.shape)
    channels, last = _channels(values, t.quantization, None)
    mb = ModelBuilder.from_model(model)
    mb.subgraphs[subgraph].tensors[tensor].buffer = mb.add_buffer(
        _le_bytes(cluster(values, levels, channels, last)))
    _drop_unused_buffers(mb)
    return mb.build()


# ------------------------------------------------------------------ the tool
def compress(model: Union[bytes, Model], specs: Sequence[TensorCompression],
             form: str = "decode") -> bytes:
    """A copy of ``model`` with the tensors of ``specs`` compressed (see the module
    docstring for ``form``)."""
    model = model if isinstance(model, Model) else load_model(bytes(model))
    if form not in ("decode", "metadata"):
        raise InputError(f"form must be 'decode' or 'metadata', not {form!r}")
    if not specs:
        raise InputError("nothing to compress: no tensors given")
    mb = ModelBuilder.from_model(model)
    encoded: Dict[Tuple[int, int], Tuple[bytes, bytes]] = {}
    metadata: Dict[int, List[Tuple[int, int, int]]] = {}
    for spec in specs:
        key = (spec.subgraph, spec.tensor)
        if key in encoded:
            raise InputError(f"tensor {spec.tensor} of subgraph {spec.subgraph} is listed twice")
        if not 0 <= spec.subgraph < len(model.subgraphs):
            raise InputError(f"subgraph {spec.subgraph} does not exist")
        tensors = model.subgraphs[spec.subgraph].tensors
        if not 0 <= spec.tensor < len(tensors):
            raise InputError(f"tensor {spec.tensor} does not exist in subgraph {spec.subgraph}")
        t = tensors[spec.tensor]
        if t.data is None or t.lut is not None:
            raise InputError(f"{t.describe()} is not a constant tensor")
        if spec.method not in DECODE_TYPES:
            raise InputError(f"unknown compression method {spec.method!r} (lut, prune, huffman)")
        if form == "metadata" and spec.method != "lut":
            raise InputError("the COMPRESSION_METADATA form knows LUT compression only")
        values = np.asarray(t.data).reshape(t.shape)
        channels, last = _channels(values, t.quantization, spec.per_channel)
        if form == "metadata":
            packed, tables, _ = lut_encode(values, spec.bit_width, channels, last,
                                           table_length=1 << spec.bit_width)
            mb.subgraphs[spec.subgraph].tensors[spec.tensor].buffer = mb.add_buffer(packed)
            value_buffer = mb.add_buffer(tables)
            metadata.setdefault(spec.subgraph, []).append((spec.tensor, value_buffer, spec.bit_width))
            encoded[key] = (packed, tables)
            continue
        dcm = bytearray(DCM_BYTES)
        dcm[0], dcm[1], dcm[4] = DECODE_TYPES[spec.method], 1, 1
        if spec.method == "lut":
            packed, tables, stride = lut_encode(values, spec.bit_width, channels, last)
            dcm[5], dcm[6] = spec.bit_width, stride
        elif spec.method == "prune":
            zps = np.zeros(1, np.int64) if t.quantization is None else t.quantization.zero_points
            packed, tables = prune_encode(values, zps if channels > 1 else zps[:1], channels, last)
        else:
            if t.type not in (schema.TensorType.INT8, schema.TensorType.INT16):
                raise InputError("Huffman compression takes int8 or int16 tensors")
            packed, tables, dcm[5], _ = huffman_encode(values)
        encoded[key] = (packed, bytes(dcm) + tables)
    if form == "decode":
        _insert_decode_operators(mb, model, encoded)
    remap = _drop_unused_buffers(mb, keep=[vb for luts in metadata.values() for _, vb, _ in luts])
    if form == "metadata":
        luts = {s: [(t, remap[vb], bits) for t, vb, bits in entries] for s, entries in metadata.items()}
        mb.add_metadata(COMPRESSION_METADATA, _metadata_flatbuffer(luts, len(model.subgraphs)))
    return mb.build()


def _metadata_flatbuffer(luts: Dict[int, List[Tuple[int, int, int]]], n_subgraphs: int) -> bytes:
    """The tflite.micro.compression.Metadata flatbuffer (schema version 1)."""
    b = flatbuffers.Builder(256)
    last = max(luts) + 1 if luts else 0
    subgraphs = []
    for s in range(min(last, n_subgraphs)):
        offsets = []
        for tensor, value_buffer, bits in luts.get(s, []):
            b.StartObject(3)
            b.PrependInt32Slot(0, tensor, 0)
            b.PrependUint32Slot(1, value_buffer, 0)
            b.PrependUint8Slot(2, bits, 0)
            offsets.append(b.EndObject())
        vec = _offset_vector(b, _start_table_vector, offsets)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, vec, 0)
        subgraphs.append(b.EndObject())
    vec = _offset_vector(b, _start_table_vector, subgraphs)
    b.StartObject(2)
    b.PrependUint32Slot(0, 1, 1)
    b.PrependUOffsetTRelativeSlot(1, vec, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def _start_table_vector(b, n: int) -> None:
    b.StartVector(4, n, 4)


def _insert_decode_operators(mb: ModelBuilder, model: Model,
                             encoded: Dict[Tuple[int, int], Tuple[bytes, bytes]]) -> None:
    """TFLM's decode insertion: a DECODE right before each consumer of compressed
    tensors, one appended for compressed subgraph outputs; consumers read the decoded
    copies; the compressed tensors become UINT8 byte vectors."""
    decode_opcode = mb.opcode(schema.BuiltinOperator.CUSTOM, DECODE_CUSTOM_CODE)
    for s, g in enumerate(mb.subgraphs):
        mine = {t: enc for (sg, t), enc in encoded.items() if sg == s}
        if not mine:
            continue
        ancillary: Dict[bytes, int] = {}
        original = {t: g.tensors[t] for t in mine}

        def decode(ts: List[int]) -> Tuple[_Operator, Dict[int, int]]:
            inputs, outputs, mapping = [], [], {}
            for t in ts:
                data = mine[t][1]
                if data not in ancillary:
                    src = original[t]
                    ancillary[data] = len(g.tensors)
                    g.tensors.append(_Tensor(f"{src.name}_ancillary", (len(data),),
                                             schema.TensorType.UINT8, mb.add_buffer(data), None))
                src = original[t]
                decoded = len(g.tensors)
                g.tensors.append(_Tensor(f"{src.name}_decoded", src.shape, src.type,
                                         mb.empty_buffer(), src.quantization, False,
                                         src.shape_signature))
                inputs += [t, ancillary[data]]
                outputs.append(decoded)
                mapping[t] = decoded
            return _Operator(decode_opcode, tuple(inputs), tuple(outputs), (), None, {}, None), mapping

        operators: List[_Operator] = []
        for op in g.operators:
            used = [t for t in dict.fromkeys(op.inputs) if t in mine]
            if used:
                dec, mapping = decode(used)
                operators.append(dec)
                op = _Operator(op.opcode_index, tuple(mapping.get(t, t) for t in op.inputs),
                               op.outputs, op.intermediates, op.options_name, op.options,
                               op.custom_options)
            operators.append(op)
        outs = [t for t in dict.fromkeys(g.outputs) if t in mine]
        if outs:
            dec, mapping = decode(outs)
            operators.append(dec)
            g.outputs = [mapping.get(t, t) for t in g.outputs]
        g.operators = operators
        for t, (packed, _) in mine.items():
            src = original[t]
            g.tensors[t] = _Tensor(src.name, (len(packed),), schema.TensorType.UINT8,
                                   mb.add_buffer(packed), None)


def _drop_unused_buffers(mb: ModelBuilder, keep: Sequence[int] = ()) -> Dict[int, int]:
    """Remove buffers no tensor, metadata entry or ``keep`` refers to (buffer 0 stays);
    returns old index -> new index."""
    used = {0} | {index for _, index in mb.metadata} | set(keep)
    for g in mb.subgraphs:
        used.update(t.buffer for t in g.tensors)
    remap = {}
    buffers = []
    for i, data in enumerate(mb.buffers):
        if i in used:
            remap[i] = len(buffers)
            buffers.append(data)
    mb.buffers = buffers
    mb.metadata = [(name, remap[index]) for name, index in mb.metadata]
    for g in mb.subgraphs:
        for t in g.tensors:
            t.buffer = remap[t.buffer]
    return remap
