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
        return COMPRESSION_METADATA in self.metadata


# ---------------------------------------------------------------------- loading
def load_model(source: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Model:
    """Read and check a model from a file path or from bytes.

    Raises :class:`ModelError` for anything malformed; the data are not copied
    (``bytes`` input is kept as is; other buffers are copied once into ``bytes``).
    """
    name = "<bytes>"
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        try:
            with open(name, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise ModelError(f"model file not found: {name}") from None
        except IsADirectoryError:
            raise ModelError(f"model path is a directory, not a .tflite file: {name}") from None
        except OSError as e:
            raise ModelError(f"cannot read model file {name}: {e.strerror or e}") from None
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

    def check_table(self, obj, what: str) -> None:
        """Check a generated accessor object's table header and vtable."""
        tab = obj._tab
        pos = tab.Pos
        n = self.n
        if pos < 0 or pos + 4 > n:
            raise self.fail(f"{what} table at offset {pos} lies outside the file ({n} bytes)")
        vtable = pos - _I32.unpack_from(self.raw, pos)[0]
        if vtable < 0 or vtable + 4 > n:
            raise self.fail(f"{what} table's vtable at offset {vtable} lies outside the file")
        vt_len = _U16.unpack_from(self.raw, vtable)[0]
        table_len = _U16.unpack_from(self.raw, vtable + 2)[0]
        if vt_len < 4 or vt_len % 2 or vtable + vt_len > n:
            raise self.fail(f"{what} table has a malformed vtable (length {vt_len})")
        if table_len < 4 or pos + table_len > n:
            raise self.fail(f"{what} table (size {table_len}) runs past the end of the file")
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
            raise self.fail(f"{what}: offset field outside the file")
        start = field_pos + _U32.unpack_from(self.raw, field_pos)[0]
        if start + 4 > self.n:
            raise self.fail(f"{what}: vector at {start} lies outside the file")
        length = _U32.unpack_from(self.raw, start)[0]
        if start + 4 + length * elem_size > self.n:
            raise self.fail(f"{what}: vector of {length} elements runs past the end of the file")
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
        except (struct.error, IndexError, ValueError, TypeError, OverflowError,
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
            builtin = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            custom = self.string(oc, 6, "custom_code")
            opcodes.append(OperatorCodeSpec(builtin, custom, int(oc.Version())))

        metadata: Dict[str, int] = {}
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

        subgraphs = []
        sgs = self.table_vector(model, 8, tflite.SubGraph, "subgraphs")
        if not sgs:
            raise ModelError(f"{self.source}: the model has no subgraph")
        for si, sg in enumerate(sgs):
            subgraphs.append(self._read_subgraph(si, sg, buffers, opcodes, len(sgs)))
        self.where = "model"
        return Model(raw=raw, version=int(version), description=description,
                     operator_codes=opcodes, subgraphs=subgraphs, buffers=buffers,
                     metadata=metadata, source=self.source)

    def _read_buffers(self, model) -> List[BufferSpec]:
        out = []
        for i, b in enumerate(self.table_vector(model, 12, tflite.Buffer, "buffers")):
            self.where = f"buffer #{i}"
            data = self.array_vector(b, 4, "u1", "data")
            offset = int(b.Offset())
            size = int(b.Size())
            if offset > 1:
                if offset + size > self.n:
                    raise self.fail(f"large-model buffer form: data at offset {offset} of size "
                                    f"{size} lies outside the file ({self.n} bytes)")
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
            tensors.append(self._read_tensor(ti, t, buffers))
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

    def _read_tensor(self, ti: int, t, buffers: List[BufferSpec]) -> TensorSpec:
        name = self.string(t, 10, "name") or ""
        self.where += f" '{name}'" if name else ""
        shape = self.int_vector(t, 4, "<i4", "shape")
        ttype = int(t.Type())
        buffer_index = int(t.Buffer())
        if not 0 <= buffer_index < len(buffers):
            raise self.fail(f"refers to buffer {buffer_index} but the model has "
                            f"{len(buffers)} buffers")
        buf = buffers[buffer_index]
        data = None
        if buf.data is not None:
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
                          quant, signature)

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
