"""Reading a .tflite model: every table checked before use, constant data left in place.

The flatbuffer is read through the ``tflite`` schema package's generated accessors.
Before any table is touched its position, its vtable and its size are checked to lie
inside the file, and every vector or string is checked before it is read, so a corrupt
file gives a :class:`ModelError` naming the subgraph / tensor / operator at fault instead
of garbage or a deep traceback. Constant tensor data are numpy views on the model bytes
(no copy, like TFLM pointing into flash).
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import flatbuffers
import numpy as np
import tflite

from . import schema
from .builtin_options import OpParams, parse_builtin_options
from .errors import ModelError

#: TFLite file identifier at bytes 4..8.
FILE_IDENTIFIER = b"TFL3"
#: metadata name of an offline memory plan (TFLM's OfflineMemoryAllocation).
OFFLINE_MEMORY_ALLOCATION = "OfflineMemoryAllocation"
#: metadata name of TFLM compression data.
COMPRESSION_METADATA = "COMPRESSION_METADATA"
#: custom code of TFLM's DECODE operator (compressed tensors decoded into the arena).
DECODE_CUSTOM_CODE = "TFLM_DECODE"
#: newest COMPRESSION_METADATA schema version TFLM reads.
COMPRESSION_SCHEMA_VERSION = 1

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")


@dataclass(frozen=True)
class Quantization:
    """Affine quantization of a tensor as stored in the model."""

    scales: np.ndarray              #: float32, one per channel (or one)
    zero_points: np.ndarray         #: int64, one per channel (or one)
    quantized_dimension: int

    @property
    def scale(self) -> float:
        return float(self.scales[0])

    @property
    def zero_point(self) -> int:
        return int(self.zero_points[0])


@dataclass
class LutTensor:
    """A tensor listed in the model's ``COMPRESSION_METADATA`` (TFLM's older compression
    path, read by builds with USE_TFLM_COMPRESSION): its buffer holds ``index_bitwidth``-wide
    indices, packed from the high bit of each byte down, into value tables kept in buffer
    ``value_buffer`` (one table per channel for per-channel quantized tensors)."""

    subgraph: int
    tensor: int
    value_buffer: int
    index_bitwidth: int
    #: the value buffer's bytes (None when the buffer is empty)
    values: Optional[np.ndarray]


@dataclass
class CompressionMetadata:
    """The ``COMPRESSION_METADATA`` entry as TFLM's GetCompressionMetadata finds it.

    ``used`` is False when TFLM ignores the metadata (bad buffer, failed verification,
    newer schema). ``subgraphs`` holds, per subgraph, the (tensor, value_buffer,
    index_bitwidth) of its LutTensors; None stands for a vector absent from the
    flatbuffer (which TFLM's allocator refuses). ``messages`` are the lines TFLM prints
    while looking for the metadata."""

    used: bool
    subgraphs: Optional[List[Optional[List[Tuple[int, int, int]]]]] = None
    messages: List[str] = field(default_factory=list)

    @property
    def lut_entries(self) -> List[Tuple[int, int, int, int]]:
        """(subgraph, tensor, value_buffer, index_bitwidth) of every LutTensor."""
        out = []
        for s, luts in enumerate(self.subgraphs or []):
            for t, vb, bw in luts or ():
                out.append((s, t, vb, bw))
        return out


@dataclass
class TensorSpec:
    """A tensor as the flatbuffer describes it."""

    index: int
    name: str
    type: int                       #: schema TensorType
    shape: Tuple[int, ...]          #: () for a scalar
    buffer_index: int
    data: Optional[np.ndarray]      #: constant data (read-only view), else None
    is_variable: bool
    quantization: Optional[Quantization]   #: present when scale and zero_point are
    shape_signature: Optional[Tuple[int, ...]] = None
    #: False for a tensor a delegate keeps to itself: it takes no arena memory
    planned: bool = True
    #: set when COMPRESSION_METADATA lists the tensor: ``data`` then holds the packed
    #: index bytes (uint8), not the values
    lut: Optional[LutTensor] = None
    #: False when the flatbuffer has no shape vector (TFLM's compression refuses those)
    shape_present: bool = True

    @property
    def dtype(self) -> np.dtype:
        return schema.NUMPY_DTYPES.get(self.type, np.dtype(np.uint8))

    @property
    def type_name(self) -> str:
        return schema.tensor_type_name(self.type)

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    def describe(self) -> str:
        return f"tensor #{self.index} '{self.name}'"


@dataclass
class OperatorSpec:
    """An operator as the flatbuffer describes it."""

    index: int
    opcode_index: int
    builtin_code: int
    custom_code: Optional[str]
    version: int
    inputs: Tuple[int, ...]
    outputs: Tuple[int, ...]
    intermediates: Tuple[int, ...]
    params: OpParams
    custom_options: Optional[bytes]

    @property
    def name(self) -> str:
        return schema.op_name(self.builtin_code, self.custom_code)

    def describe(self) -> str:
        return f"operator #{self.index} ({self.name})"


@dataclass
class SubGraphSpec:
    index: int
    name: str
    tensors: List[TensorSpec]
    operators: List[OperatorSpec]
    inputs: Tuple[int, ...]
    outputs: Tuple[int, ...]


@dataclass
class OperatorCodeSpec:
    builtin_code: int
    custom_code: Optional[str]
    version: int

    @property
    def name(self) -> str:
        return schema.op_name(self.builtin_code, self.custom_code)


@dataclass
class BufferSpec:
    """A model buffer: ``data`` is a uint8 view on the file, or None when empty.
    ``external`` marks the large-model form (data at ``offset``/``size`` outside the
    flatbuffer), which TFLM does not read."""

    data: Optional[np.ndarray]
    offset: int = 0
    size: int = 0

    @property
    def external(self) -> bool:
        return self.offset > 1


@dataclass
class Model:
    """A checked, read-only view of a .tflite model."""

    raw: bytes
    version: int
    description: str
    operator_codes: List[OperatorCodeSpec]
    subgraphs: List[SubGraphSpec]
    buffers: List[BufferSpec]
    metadata: Dict[str, int] = field(default_factory=dict)   #: name -> buffer index
    source: str = "<bytes>"
    #: TFLM compression metadata (None when the model has no COMPRESSION_METADATA entry)
    compression: Optional[CompressionMetadata] = None

    # ------------------------------------------------------------------ helpers
    @property
    def main(self) -> SubGraphSpec:
        return self.subgraphs[0]

    def metadata_buffer(self, name: str) -> Optional[np.ndarray]:
        index = self.metadata.get(name)
        if index is None:
            return None
        return self.buffers[index].data

    def offline_planned_offsets(self) -> Optional[np.ndarray]:
        """int32 offsets of the ``OfflineMemoryAllocation`` metadata (one per tensor of
        every subgraph, -1 = online), or None when the model has no offline plan.

        The metadata buffer is ``[version, subgraph, tensor count, offsets...]``.
        """
        raw = self.metadata_buffer(OFFLINE_MEMORY_ALLOCATION)
        if OFFLINE_MEMORY_ALLOCATION not in self.metadata:
            return None
        if raw is None or raw.size < 12:
            raise ModelError("OfflineMemoryAllocation metadata: buffer is missing or shorter "
                             "than its 12-byte header")
        words = np.frombuffer(raw.tobytes(), dtype="<i4", count=raw.size // 4)
        count = int(words[2])
        total = sum(len(sg.tensors) for sg in self.subgraphs)
        if count != total:
            raise ModelError(f"OfflineMemoryAllocation metadata: Nbr of offline buffer offsets "
                             f"({count}) in metadata not equal nbr tensors ({total})")
        if words.size < 3 + count:
            raise ModelError(f"OfflineMemoryAllocation metadata: {count} offsets announced but "
                             f"only {words.size - 3} stored")
        return words[3:3 + count].astype(np.int32)

    def has_compression(self) -> bool:
        """True when COMPRESSION_METADATA is present and TFLM would use it."""
        return self.compression is not None and self.compression.used


# ---------------------------------------------------------------------- loading
#: no tensor shape may describe 2^63 bytes or more (its dimensions multiplied, a zero
#: dimension counted as 1, times the element size): numpy cannot shape such an array even
#: when a zero dimension makes it empty, and TFLM's int64 element count would overflow
MAX_SHAPE_BYTES = 1 << 63


def shape_span_bytes(shape: Sequence[int], itemsize: int) -> int:
    """Bytes ``shape`` spans with every zero (or negative) dimension counted as 1: what
    numpy checks against its limit even for an empty array."""
    span = max(int(itemsize), 1)
    for d in shape:
        span *= max(int(d), 1)
    return span


def check_shape_span(shape: Sequence[int], itemsize: int, what: str) -> Optional[str]:
    """None when ``shape`` is representable, else the reason (for a ModelError or an
    InputError raised by the caller)."""
    span = shape_span_bytes(shape, itemsize)
    if span < MAX_SHAPE_BYTES:
        return None
    empty = any(int(d) == 0 for d in shape)
    return (f"{what} shape {tuple(int(d) for d in shape)} spans 2^{span.bit_length() - 1} bytes or "
            f"more ({itemsize}-byte elements{', a zero dimension counted as 1' if empty else ''}): "
            "beyond the 2^63-byte limit of any array"
            + (" (the zero dimension makes the tensor empty, but numpy and TFLM's element "
               "count still multiply the others)" if empty else ""))


def load_model(source: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Model:
    """Read and check a model from a file path or from bytes.

    A path must name a regular file of at most 2^31 - 1 bytes (the flatbuffer limit;
    see :mod:`micro_runtime.files`). Raises :class:`ModelError` for anything malformed; the data are not copied
    (``bytes`` input is kept as is; other buffers are copied once into ``bytes``).
    """
    name = "<bytes>"
    if isinstance(source, (str, os.PathLike)):
        from .files import read_model_file
        name = os.fspath(source)
        raw = read_model_file(name)
    elif isinstance(source, bytes):
        raw = source
    elif isinstance(source, (bytearray, memoryview)):
        raw = bytes(source)
    else:
        raise ModelError(f"a model is a path or bytes, not {type(source).__name__}")
    return _Reader(raw, name).read()


class _Reader:
    def __init__(self, raw: bytes, source: str):
        self.raw = raw
        self.n = len(raw)
        self.source = source
        self.where = "model"

    # ----------------------------------------------------------- bound checks
    def fail(self, what: str) -> ModelError:
        return ModelError(f"{self.source}: {self.where}: {what}")

    def past_end(self, what: str) -> ModelError:
        """A reference beyond the last byte: what a cut-off download or copy produces."""
        return self.fail(f"{what} lies past the end of the file: the file looks truncated "
                         f"(it is {self.n} bytes long)")

    def check_table(self, obj, what: str) -> None:
        """Check a generated accessor object's table header and vtable."""
        tab = obj._tab
        pos = tab.Pos
        n = self.n
        if pos < 0:
            raise self.fail(f"{what} table at offset {pos} lies outside the file ({n} bytes)")
        if pos + 4 > n:
            raise self.past_end(f"{what} table at offset {pos}")
        vtable = pos - _I32.unpack_from(self.raw, pos)[0]
        if vtable < 0:
            raise self.fail(f"{what} table's vtable at offset {vtable} lies outside the file")
        if vtable + 4 > n:
            raise self.past_end(f"{what} table's vtable at offset {vtable}")
        vt_len = _U16.unpack_from(self.raw, vtable)[0]
        table_len = _U16.unpack_from(self.raw, vtable + 2)[0]
        if vt_len < 4 or vt_len % 2:
            raise self.fail(f"{what} table has a malformed vtable (length {vt_len})")
        if vtable + vt_len > n:
            raise self.past_end(f"{what} table's vtable (offset {vtable}, {vt_len} bytes)")
        if table_len < 4:
            raise self.fail(f"{what} table has a malformed size ({table_len})")
        if pos + table_len > n:
            raise self.past_end(f"{what} table (offset {pos}, {table_len} bytes)")
        for slot in range(4, vt_len, 2):
            off = _U16.unpack_from(self.raw, vtable + slot)[0]
            if off and off >= table_len:
                raise self.fail(f"{what} table has a field at {off} beyond its size {table_len}")

    def check_vector(self, obj, slot: int, elem_size: int, what: str) -> int:
        """Length of the vector at vtable ``slot`` of ``obj`` after a bounds check
        (0 when absent)."""
        tab = obj._tab
        o = tab.Offset(slot)
        if not o:
            return 0
        field_pos = tab.Pos + o
        if field_pos + 4 > self.n:
            raise self.past_end(f"{what}: offset field at {field_pos}")
        start = field_pos + _U32.unpack_from(self.raw, field_pos)[0]
        if start + 4 > self.n:
            raise self.past_end(f"{what}: vector at offset {start}")
        length = _U32.unpack_from(self.raw, start)[0]
        if start + 4 + length * elem_size > self.n:
            raise self.past_end(f"{what}: vector of {length} elements at offset {start} "
                                f"(ending at byte {start + 4 + length * elem_size})")
        return length

    def string(self, obj, slot: int, what: str) -> Optional[str]:
        tab = obj._tab
        o = tab.Offset(slot)
        if not o:
            return None
        length = self.check_vector(obj, slot, 1, what)
        start = tab.Vector(o)
        return self.raw[start:start + length].decode("utf-8", errors="replace")

    def int_vector(self, obj, slot: int, dtype: str, what: str) -> Tuple[int, ...]:
        size = np.dtype(dtype).itemsize
        length = self.check_vector(obj, slot, size, what)
        if not length:
            return ()
        start = obj._tab.Vector(obj._tab.Offset(slot))
        return tuple(int(v) for v in np.frombuffer(self.raw, dtype=dtype, count=length, offset=start))

    def array_vector(self, obj, slot: int, dtype: str, what: str) -> Optional[np.ndarray]:
        size = np.dtype(dtype).itemsize
        tab = obj._tab
        if not tab.Offset(slot):
            return None
        length = self.check_vector(obj, slot, size, what)
        start = tab.Vector(tab.Offset(slot))
        return np.frombuffer(self.raw, dtype=dtype, count=length, offset=start)

    def table_vector(self, obj, slot: int, cls, what: str) -> list:
        length = self.check_vector(obj, slot, 4, what)
        out = []
        if not length:
            return out
        start = obj._tab.Vector(obj._tab.Offset(slot))
        for j in range(length):
            pos = start + 4 * j
            target = pos + _U32.unpack_from(self.raw, pos)[0]
            item = cls()
            item.Init(self.raw, target)
            self.check_table(item, f"{what}[{j}]")
            out.append(item)
        return out

    # -------------------------------------------------------------------- read
    def read(self) -> Model:
        raw = self.raw
        if self.n < 8:
            raise ModelError(f"{self.source}: not a .tflite model: only {self.n} bytes")
        if raw[4:8] != FILE_IDENTIFIER:
            raise ModelError(f"{self.source}: not a .tflite model (file identifier "
                             f"{raw[4:8]!r}, expected {FILE_IDENTIFIER!r})")
        try:
            return self._read()
        except ModelError:
            raise
        except struct.error as e:
            raise self.fail(f"malformed flatbuffer: a read went past the end of the {self.n}-byte "
                            f"file ({e}); the file looks truncated or corrupt") from None
        except (IndexError, ValueError, TypeError, OverflowError,
                UnicodeDecodeError, RecursionError, MemoryError) as e:
            raise self.fail(f"malformed flatbuffer ({type(e).__name__}: {e})") from None

    def _read(self) -> Model:
        raw = self.raw
        root = _U32.unpack_from(raw, 0)[0]
        model = tflite.Model()
        model.Init(raw, root)
        self.where = "model"
        self.check_table(model, "Model")
        version = model.Version()
        description = self.string(model, 10, "description") or ""

        # Model fields: 4 version, 6 operator_codes, 8 subgraphs, 10 description,
        # 12 buffers, 14 metadata_buffer, 16 metadata, 18 signature_defs.
        buffers = self._read_buffers(model)
        opcodes = []
        for i, oc in enumerate(self.table_vector(model, 6, tflite.OperatorCode, "operator_codes")):
            self.where = f"operator code #{i}"
            # TFLM's GetBuiltinCode: the larger of builtin_code and deprecated_builtin_code.
            # (tflite's BuiltinCode() accessor falls back to the deprecated field for
            # codes below 127, so the int32 field is read directly.)
            slot = oc._tab.Offset(10)
            builtin = oc._tab.Get(flatbuffers.number_types.Int32Flags, slot + oc._tab.Pos) if slot else 0
            builtin = max(int(builtin), int(oc.DeprecatedBuiltinCode()))
            custom = self.string(oc, 6, "custom_code")
            opcodes.append(OperatorCodeSpec(builtin, custom, int(oc.Version())))

        metadata: Dict[str, int] = {}
        metadata_entries: List[Tuple[str, int]] = []
        for i, md in enumerate(self.table_vector(model, 16, tflite.Metadata, "metadata")):
            self.where = f"metadata #{i}"
            name = self.string(md, 4, "name")
            index = int(md.Buffer())
            if name is None:
                continue
            if not 0 <= index < len(buffers):
                raise self.fail(f"metadata '{name}' refers to buffer {index} but the model "
                                f"has {len(buffers)} buffers")
            metadata.setdefault(name, index)
            metadata_entries.append((name, index))

        self.where = "COMPRESSION_METADATA"
        compression = _read_compression_metadata(metadata_entries, buffers)
        self.luts = {}
        if compression is not None and compression.used:
            for s, t, vb, bw in compression.lut_entries:
                values = buffers[vb].data if vb < len(buffers) else None
                self.luts.setdefault((s, t), LutTensor(s, t, vb, bw, values))

        subgraphs = []
        sgs = self.table_vector(model, 8, tflite.SubGraph, "subgraphs")
        if not sgs:
            raise ModelError(f"{self.source}: the model has no subgraph")
        for si, sg in enumerate(sgs):
            subgraphs.append(self._read_subgraph(si, sg, buffers, opcodes, len(sgs)))
        self.where = "model"
        return Model(raw=raw, version=int(version), description=description,
                     operator_codes=opcodes, subgraphs=subgraphs, buffers=buffers,
                     metadata=metadata, source=self.source, compression=compression)

    def _read_buffers(self, model) -> List[BufferSpec]:
        out = []
        for i, b in enumerate(self.table_vector(model, 12, tflite.Buffer, "buffers")):
            self.where = f"buffer #{i}"
            data = self.array_vector(b, 4, "u1", "data")
            offset = int(b.Offset())
            size = int(b.Size())
            if offset > 1:
                if offset + size > self.n:
                    raise self.past_end(f"large-model buffer form: data at offset {offset} of "
                                        f"size {size}")
            if data is not None and data.size == 0:
                data = None
            out.append(BufferSpec(data, offset, size))
        return out

    def _read_subgraph(self, si: int, sg, buffers: List[BufferSpec],
                       opcodes: List[OperatorCodeSpec], n_subgraphs: int) -> SubGraphSpec:
        prefix = f"subgraph {si}" if n_subgraphs > 1 else ""
        self.where = prefix or "subgraph 0"
        name = self.string(sg, 12, "name") or ""
        tensors = []
        for ti, t in enumerate(self.table_vector(sg, 4, tflite.Tensor, "tensors")):
            self.where = (prefix + ": " if prefix else "") + f"tensor #{ti}"
            tensors.append(self._read_tensor(ti, t, buffers, self.luts.get((si, ti))))
        n_t = len(tensors)
        self.where = prefix or "subgraph 0"
        inputs = self.int_vector(sg, 6, "<i4", "inputs")
        outputs = self.int_vector(sg, 8, "<i4", "outputs")
        for kind, idxs in (("input", inputs), ("output", outputs)):
            for k, t in enumerate(idxs):
                if not 0 <= t < n_t:
                    raise self.fail(f"subgraph {kind} {k} refers to tensor {t} but the subgraph "
                                    f"has {n_t} tensors")
        operators = []
        for oi, op in enumerate(self.table_vector(sg, 10, tflite.Operator, "operators")):
            self.where = (prefix + ": " if prefix else "") + f"operator #{oi}"
            operators.append(self._read_operator(oi, op, opcodes, tensors))
        return SubGraphSpec(si, name, tensors, operators, inputs, outputs)

    def _read_tensor(self, ti: int, t, buffers: List[BufferSpec],
                     lut: Optional[LutTensor] = None) -> TensorSpec:
        name = self.string(t, 10, "name") or ""
        self.where += f" '{name}'" if name else ""
        shape = self.int_vector(t, 4, "<i4", "shape")
        ttype = int(t.Type())
        problem = check_shape_span(shape, max(schema.TYPE_SIZES.get(ttype) or 1,
                                              schema.NUMPY_DTYPES.get(ttype, np.dtype(np.uint8)).itemsize),
                                   "tensor")
        if problem:
            raise self.fail(problem)
        buffer_index = int(t.Buffer())
        if not 0 <= buffer_index < len(buffers):
            raise self.fail(f"refers to buffer {buffer_index} but the model has "
                            f"{len(buffers)} buffers")
        buf = buffers[buffer_index]
        data = None
        if buf.data is not None and lut is not None:
            data = buf.data   # packed LUT indices, decompressed by the kernels
        elif buf.data is not None:
            data = self._constant_view(buf.data, ttype, shape)
        elif buf.external and buffer_index != 0:
            raise self.fail(f"uses the large-model buffer form (data at file offset {buf.offset}); "
                            "TFLM does not read it and would treat the tensor as non-constant")
        quant = None
        if t._tab.Offset(12):
            q = tflite.QuantizationParameters()
            q.Init(self.raw, t._tab.Indirect(t._tab.Offset(12) + t._tab.Pos))
            self.check_table(q, "quantization")
            scales = self.array_vector(q, 8, "<f4", "quantization.scale")
            zps = self.array_vector(q, 10, "<i8", "quantization.zero_point")
            if scales is not None and zps is not None and scales.size and zps.size:
                if zps.size != scales.size and zps.size != 1:
                    raise self.fail(f"quantization has {scales.size} scales but {zps.size} "
                                    "zero points")
                qdim = int(q.QuantizedDimension())
                quant = Quantization(scales.astype(np.float32), zps.astype(np.int64), qdim)
        signature = self.int_vector(t, 18, "<i4", "shape_signature") if t._tab.Offset(18) else None
        return TensorSpec(ti, name, ttype, shape, buffer_index, data, bool(t.IsVariable()),
                          quant, signature, lut=lut, shape_present=bool(t._tab.Offset(4)))

    def _constant_view(self, data: np.ndarray, ttype: int, shape: Sequence[int]) -> np.ndarray:
        if ttype not in schema.TYPE_SIZES or ttype == tflite.TensorType.RESOURCE:
            return data  # raw bytes; the allocator rejects unsized types later
        count = 1
        for d in shape:
            if d < 0:
                raise self.fail(f"constant tensor has a negative dimension in shape {tuple(shape)}")
            count *= d
        if ttype == tflite.TensorType.INT4:
            need = (count + 1) // 2
            if data.size < need:
                raise self.fail(f"constant INT4 tensor of shape {tuple(shape)} needs {need} "
                                f"bytes but its buffer holds {data.size}")
            return data[:need]
        dtype = schema.NUMPY_DTYPES[ttype].newbyteorder("<")
        need = count * dtype.itemsize
        if data.size < need:
            raise self.fail(f"constant {schema.tensor_type_name(ttype)} tensor of shape "
                            f"{tuple(shape)} needs {need} bytes but its buffer holds {data.size}")
        view = np.frombuffer(data, dtype=dtype, count=count)
        return view.reshape(tuple(shape)) if shape else view.reshape(())

    def _read_operator(self, oi: int, op, opcodes: List[OperatorCodeSpec],
                       tensors: List[TensorSpec]) -> OperatorSpec:
        opcode_index = int(op.OpcodeIndex())
        if not 0 <= opcode_index < len(opcodes):
            raise self.fail(f"refers to operator code {opcode_index} but the model has "
                            f"{len(opcodes)} operator codes")
        oc = opcodes[opcode_index]
        self.where += f" ({oc.name})"
        inputs = self.int_vector(op, 6, "<i4", "inputs")
        outputs = self.int_vector(op, 8, "<i4", "outputs")
        intermediates = self.int_vector(op, 20, "<i4", "intermediates")
        n_t = len(tensors)
        for kind, idxs, optional in (("input", inputs, True), ("output", outputs, False),
                                     ("intermediate", intermediates, False)):
            for k, t in enumerate(idxs):
                if optional and t == -1:
                    continue
                if not 0 <= t < n_t:
                    raise self.fail(f"{kind} {k} refers to tensor {t} but the subgraph has "
                                    f"{n_t} tensors")
        custom_options = None
        if op._tab.Offset(14):
            arr = self.array_vector(op, 14, "u1", "custom_options")
            custom_options = arr.tobytes() if arr is not None else None
        options_type = int(op.BuiltinOptionsType())
        table = None
        if options_type and op._tab.Offset(12):
            cls = schema.BUILTIN_OPTIONS_CLASSES.get(options_type)
            if cls is not None:
                table = cls()
                table.Init(self.raw, op._tab.Indirect(op._tab.Offset(12) + op._tab.Pos))
                self.check_table(table, cls.__name__)
        options2_type = int(op.BuiltinOptions2Type()) if op._tab.Offset(26) else 0
        table2 = None
        if options2_type and op._tab.Offset(28):
            cls = schema.BUILTIN_OPTIONS2_CLASSES.get(options2_type)
            if cls is not None:
                table2 = cls()
                table2.Init(self.raw, op._tab.Indirect(op._tab.Offset(28) + op._tab.Pos))
                self.check_table(table2, cls.__name__)
        params = parse_builtin_options(oc.builtin_code, options_type, table, options2_type,
                                       table2, self)
        return OperatorSpec(oi, opcode_index, oc.builtin_code, oc.custom_code, oc.version,
                            inputs, outputs, intermediates, params, custom_options)


# ------------------------------------------------------------ COMPRESSION_METADATA
class _FlatTable:
    """A flatbuffer table inside ``buf`` read with bounds and alignment checks (what
    flatbuffers' Verifier checks); any violation raises ValueError."""

    def __init__(self, buf: bytes, pos: int):
        self.buf = buf
        n = len(buf)
        if pos % 4 or pos < 0 or pos + 4 > n:
            raise ValueError(f"table at {pos} is misaligned or outside the buffer")
        vtable = pos - _I32.unpack_from(buf, pos)[0]
        if vtable % 2 or vtable < 0 or vtable + 4 > n:
            raise ValueError(f"vtable at {vtable} is misaligned or outside the buffer")
        self.vt_len = _U16.unpack_from(buf, vtable)[0]
        self.table_len = _U16.unpack_from(buf, vtable + 2)[0]
        if self.vt_len < 4 or self.vt_len % 2 or vtable + self.vt_len > n or pos + self.table_len > n:
            raise ValueError("table or vtable runs past the buffer")
        self.pos, self.vtable = pos, vtable

    def _field(self, slot: int, size: int) -> Optional[int]:
        if 4 + 2 * slot >= self.vt_len:
            return None
        off = _U16.unpack_from(self.buf, self.vtable + 4 + 2 * slot)[0]
        if not off:
            return None
        if off + size > self.table_len or (self.pos + off) % size:
            raise ValueError(f"field {slot} lies outside its table or is misaligned")
        return self.pos + off

    def scalar(self, slot: int, fmt: str, default: int) -> int:
        at = self._field(slot, struct.calcsize(fmt))
        return default if at is None else struct.unpack_from(fmt, self.buf, at)[0]

    def tables(self, slot: int) -> Optional[List["_FlatTable"]]:
        at = self._field(slot, 4)
        if at is None:
            return None
        start = at + _U32.unpack_from(self.buf, at)[0]
        if start % 4 or start + 4 > len(self.buf):
            raise ValueError("vector outside the buffer")
        count = _U32.unpack_from(self.buf, start)[0]
        if start + 4 + 4 * count > len(self.buf):
            raise ValueError("vector runs past the buffer")
        out = []
        for k in range(count):
            p = start + 4 + 4 * k
            out.append(_FlatTable(self.buf, p + _U32.unpack_from(self.buf, p)[0]))
        return out


def _read_compression_metadata(entries: Sequence[Tuple[str, int]],
                               buffers: List[BufferSpec]) -> Optional[CompressionMetadata]:
    """TFLM's GetCompressionMetadata: the first COMPRESSION_METADATA entry with a usable
    buffer, verified; None when the model has no such entry."""
    found = [index for name, index in entries if name == COMPRESSION_METADATA]
    if not found:
        return None
    messages: List[str] = []
    for index in found:
        if index == 0 or index >= len(buffers):
            messages.append(f"Compression: Invalid buffer index {index}")
            continue
        data = buffers[index].data
        if data is None:
            messages.append(f"Compression: Invalid data for buffer index {index}")
            continue
        raw = data.tobytes()
        try:
            if len(raw) < 4:
                raise ValueError("too short")
            root = _FlatTable(raw, _U32.unpack_from(raw, 0)[0])
            version = root.scalar(0, "<I", 1)
            subgraphs = root.tables(1)
            parsed = None
            if subgraphs is not None:
                parsed = []
                for sg in subgraphs:
                    luts = sg.tables(0)
                    parsed.append(None if luts is None else [
                        (lt.scalar(0, "<i", 0), lt.scalar(1, "<I", 0), lt.scalar(2, "<B", 0))
                        for lt in luts])
        except (ValueError, struct.error):
            messages.append("Compression: verification failure")
            return CompressionMetadata(False, None, messages)
        if version > COMPRESSION_SCHEMA_VERSION:
            messages.append(f"Compression: schema version mismatch (using "
                            f"{COMPRESSION_SCHEMA_VERSION} got {version})")
            return CompressionMetadata(False, None, messages)
        return CompressionMetadata(True, parsed, messages)
    return CompressionMetadata(False, None, messages)
