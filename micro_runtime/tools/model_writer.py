"""Writing .tflite models with flatbuffers.Builder and the ``tflite`` schema package.

Used by the tests (one-op models drawn by hypothesis), by the optimizer (a copy of a
model with an offline memory plan or a new operator order) and by users building
small models by hand::

    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "INT8", quantization=(0.5, -3))
    w = g.add_tensor("w", (2, 4), "INT8", data=np.ones((2, 4), np.int8), quantization=(0.1, 0))
    y = g.add_tensor("y", (1, 2), "INT8", quantization=(0.25, 1))
    g.add_operator("FULLY_CONNECTED", [x, w, -1], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    model_bytes = b.build()

Builtin options are given as keyword arguments named like the reader's
:class:`~micro_runtime.builtin_options.OpParams` fields; the options table type is the
one TFLM expects for the op (or ``options_type=``).
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import flatbuffers
import numpy as np
import tflite

from .. import schema
from ..builtin_options import BUILTIN_DATA, options_fields
from ..errors import InputError
from ..model import FILE_IDENTIFIER, Model

QuantSpec = Union[None, Tuple[Any, Any], Tuple[Any, Any, int]]


@dataclass
class _Tensor:
    name: str
    shape: Tuple[int, ...]
    type: int
    buffer: int
    quantization: Optional[Tuple[np.ndarray, np.ndarray, int]]
    is_variable: bool = False
    shape_signature: Optional[Tuple[int, ...]] = None


@dataclass
class _Operator:
    opcode_index: int
    inputs: Tuple[int, ...]
    outputs: Tuple[int, ...]
    intermediates: Tuple[int, ...]
    options_name: Optional[str]
    options: Dict[str, Any]
    custom_options: Optional[bytes]


def _tensor_type(t: Union[int, str, np.dtype, type]) -> int:
    if isinstance(t, str) and t.upper() in vars(schema.TensorType):
        return getattr(schema.TensorType, t.upper())
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
        return int(t)
    try:
        return schema.DTYPE_TO_TENSOR_TYPE[np.dtype(t)]
    except (TypeError, KeyError):
        raise InputError(f"unknown tensor type {t!r}") from None


class SubgraphBuilder:
    def __init__(self, model: "ModelBuilder", name: str = ""):
        self._model = model
        self.name = name
        self.tensors: List[_Tensor] = []
        self.operators: List[_Operator] = []
        self.inputs: List[int] = []
        self.outputs: List[int] = []

    def add_tensor(self, name: str, shape: Sequence[int], type, data: Optional[np.ndarray] = None,
                   quantization: QuantSpec = None, is_variable: bool = False,
                   buffer: Optional[int] = None, shape_signature: Optional[Sequence[int]] = None) -> int:
        """Add a tensor; ``data`` makes it constant (stored little-endian in a new buffer).
        ``quantization`` is ``(scale(s), zero_point(s)[, quantized_dimension])``."""
        ttype = _tensor_type(type)
        if buffer is None:
            if data is not None:
                arr = np.asarray(data)
                if ttype != schema.TensorType.INT4:
                    arr = arr.astype(schema.NUMPY_DTYPES[ttype].newbyteorder("<"), copy=False)
                buffer = self._model.add_buffer(arr.tobytes())
            else:
                buffer = self._model.empty_buffer()
        q = None
        if quantization is not None:
            scales = np.atleast_1d(np.asarray(quantization[0], dtype=np.float32))
            zps = np.atleast_1d(np.asarray(quantization[1], dtype=np.int64))
            qdim = int(quantization[2]) if len(quantization) > 2 else 0
            q = (scales, zps, qdim)
        self.tensors.append(_Tensor(name, tuple(int(d) for d in shape), ttype, buffer, q,
                                    bool(is_variable),
                                    None if shape_signature is None else tuple(shape_signature)))
        return len(self.tensors) - 1

    def add_operator(self, op: str, inputs: Sequence[int], outputs: Sequence[int],
                     intermediates: Sequence[int] = (), custom_options: Optional[bytes] = None,
                     options_type: Optional[str] = None, version: int = 1, **options) -> int:
        """Add an operator. ``op`` is a builtin name (``"CONV_2D"``) or, with
        ``custom_options`` or an unknown name, a custom op name."""
        if op in schema.BUILTIN_OP_CODES:
            opcode = self._model.opcode(schema.BUILTIN_OP_CODES[op], None, version)
            name = options_type or BUILTIN_DATA.get(op, (None, None))[0] or _guess_options(op)
        else:
            opcode = self._model.opcode(schema.BuiltinOperator.CUSTOM, op, version)
            name = options_type
        if options and name is None:
            raise InputError(f"{op}: options given but no options table is known for it")
        self.operators.append(_Operator(opcode, tuple(inputs), tuple(outputs), tuple(intermediates),
                                        name, dict(options), custom_options))
        return len(self.operators) - 1


def _guess_options(op: str) -> Optional[str]:
    camel = "".join(part.capitalize() for part in op.split("_")) + "Options"
    for candidate in (camel, camel.replace("2d", "2D")):
        if candidate in schema.BUILTIN_OPTIONS_TYPES or candidate in schema.BUILTIN_OPTIONS2_TYPES:
            return candidate
    return None


class ModelBuilder:
    """Builds a model: buffers, operator codes, subgraphs, metadata."""

    def __init__(self, description: str = "micro-runtime", version: int = 3):
        self.description = description
        self.version = version
        self.buffers: List[Optional[bytes]] = [None]   # buffer 0: the empty sentinel
        self.opcodes: List[Tuple[int, Optional[str], int]] = []
        self.subgraphs: List[SubgraphBuilder] = []
        self.metadata: List[Tuple[str, int]] = []

    def subgraph(self, name: str = "") -> SubgraphBuilder:
        sg = SubgraphBuilder(self, name)
        self.subgraphs.append(sg)
        return sg

    def add_buffer(self, data: Optional[bytes]) -> int:
        self.buffers.append(data if data else None)
        return len(self.buffers) - 1

    def empty_buffer(self) -> int:
        return self.add_buffer(None)

    def opcode(self, builtin_code: int, custom_code: Optional[str], version: int = 1) -> int:
        key = (builtin_code, custom_code, version)
        if key not in self.opcodes:
            self.opcodes.append(key)
        return self.opcodes.index(key)

    def add_metadata(self, name: str, data: bytes) -> int:
        index = self.add_buffer(bytes(data))
        self.metadata.append((name, index))
        return index

    # ------------------------------------------------------------------ build
    def build(self) -> bytes:
        b = flatbuffers.Builder(1024)
        buffer_offsets = []
        for data in self.buffers:
            vec = None
            if data:
                b.StartVector(1, len(data), 16)
                b.head = b.head - len(data)
                b.Bytes[b.head:b.head + len(data)] = data
                vec = b.EndVector(len(data)) if _END_VECTOR_TAKES_LEN else b.EndVector()
            tflite.BufferStart(b)
            if vec is not None:
                tflite.BufferAddData(b, vec)
            buffer_offsets.append(tflite.BufferEnd(b))
        subgraph_offsets = [self._build_subgraph(b, sg) for sg in self.subgraphs]
        opcode_offsets = []
        for builtin, custom, version in self.opcodes:
            custom_off = b.CreateString(custom) if custom is not None else None
            tflite.OperatorCodeStart(b)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(builtin, 127))
            if custom_off is not None:
                tflite.OperatorCodeAddCustomCode(b, custom_off)
            tflite.OperatorCodeAddVersion(b, version)
            tflite.OperatorCodeAddBuiltinCode(b, builtin)
            opcode_offsets.append(tflite.OperatorCodeEnd(b))
        metadata_offsets = []
        for name, index in self.metadata:
            name_off = b.CreateString(name)
            tflite.MetadataStart(b)
            tflite.MetadataAddName(b, name_off)
            tflite.MetadataAddBuffer(b, index)
            metadata_offsets.append(tflite.MetadataEnd(b))
        description = b.CreateString(self.description)
        vec_buffers = _offset_vector(b, tflite.ModelStartBuffersVector, buffer_offsets)
        vec_subgraphs = _offset_vector(b, tflite.ModelStartSubgraphsVector, subgraph_offsets)
        vec_opcodes = _offset_vector(b, tflite.ModelStartOperatorCodesVector, opcode_offsets)
        vec_metadata = (_offset_vector(b, tflite.ModelStartMetadataVector, metadata_offsets)
                        if metadata_offsets else None)
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, self.version)
        tflite.ModelAddOperatorCodes(b, vec_opcodes)
        tflite.ModelAddSubgraphs(b, vec_subgraphs)
        tflite.ModelAddDescription(b, description)
        tflite.ModelAddBuffers(b, vec_buffers)
        if vec_metadata is not None:
            tflite.ModelAddMetadata(b, vec_metadata)
        root = tflite.ModelEnd(b)
        b.Finish(root, file_identifier=FILE_IDENTIFIER)
        return bytes(b.Output())

    def _build_subgraph(self, b, sg: SubgraphBuilder) -> int:
        tensor_offsets = []
        for t in sg.tensors:
            name = b.CreateString(t.name)
            shape = _int_vector(b, tflite.TensorStartShapeVector, t.shape)
            signature = (_int_vector(b, tflite.TensorStartShapeSignatureVector, t.shape_signature)
                         if t.shape_signature is not None else None)
            quant = None
            if t.quantization is not None:
                scales, zps, qdim = t.quantization
                tflite.QuantizationParametersStartScaleVector(b, len(scales))
                for v in reversed(scales.tolist()):
                    b.PrependFloat32(v)
                scale_vec = _end_vector(b, len(scales))
                tflite.QuantizationParametersStartZeroPointVector(b, len(zps))
                for v in reversed(zps.tolist()):
                    b.PrependInt64(v)
                zp_vec = _end_vector(b, len(zps))
                tflite.QuantizationParametersStart(b)
                tflite.QuantizationParametersAddScale(b, scale_vec)
                tflite.QuantizationParametersAddZeroPoint(b, zp_vec)
                tflite.QuantizationParametersAddQuantizedDimension(b, qdim)
                quant = tflite.QuantizationParametersEnd(b)
            tflite.TensorStart(b)
            tflite.TensorAddShape(b, shape)
            tflite.TensorAddType(b, t.type)
            tflite.TensorAddBuffer(b, t.buffer)
            tflite.TensorAddName(b, name)
            if quant is not None:
                tflite.TensorAddQuantization(b, quant)
            if t.is_variable:
                tflite.TensorAddIsVariable(b, True)
            if signature is not None:
                tflite.TensorAddShapeSignature(b, signature)
            tensor_offsets.append(tflite.TensorEnd(b))
        op_offsets = []
        for op in sg.operators:
            inputs = _int_vector(b, tflite.OperatorStartInputsVector, op.inputs)
            outputs = _int_vector(b, tflite.OperatorStartOutputsVector, op.outputs)
            intermediates = (_int_vector(b, tflite.OperatorStartIntermediatesVector, op.intermediates)
                             if op.intermediates else None)
            custom = None
            if op.custom_options is not None:
                tflite.OperatorStartCustomOptionsVector(b, len(op.custom_options))
                b.head = b.head - len(op.custom_options)
                b.Bytes[b.head:b.head + len(op.custom_options)] = op.custom_options
                custom = _end_vector(b, len(op.custom_options))
            options_off, options_type, is_second = None, 0, False
            if op.options_name is not None:
                options_off = write_options_table(b, op.options_name, op.options)
                if op.options_name in schema.BUILTIN_OPTIONS_TYPES:
                    options_type = schema.BUILTIN_OPTIONS_TYPES[op.options_name]
                else:
                    options_type = schema.BUILTIN_OPTIONS2_TYPES[op.options_name]
                    is_second = True
            tflite.OperatorStart(b)
            tflite.OperatorAddOpcodeIndex(b, op.opcode_index)
            tflite.OperatorAddInputs(b, inputs)
            tflite.OperatorAddOutputs(b, outputs)
            if options_off is not None:
                if is_second:
                    tflite.OperatorAddBuiltinOptions2Type(b, options_type)
                    tflite.OperatorAddBuiltinOptions2(b, options_off)
                else:
                    tflite.OperatorAddBuiltinOptionsType(b, options_type)
                    tflite.OperatorAddBuiltinOptions(b, options_off)
            if custom is not None:
                tflite.OperatorAddCustomOptions(b, custom)
            if intermediates is not None:
                tflite.OperatorAddIntermediates(b, intermediates)
            op_offsets.append(tflite.OperatorEnd(b))
        vec_tensors = _offset_vector(b, tflite.SubGraphStartTensorsVector, tensor_offsets)
        vec_ops = _offset_vector(b, tflite.SubGraphStartOperatorsVector, op_offsets)
        vec_in = _int_vector(b, tflite.SubGraphStartInputsVector, sg.inputs)
        vec_out = _int_vector(b, tflite.SubGraphStartOutputsVector, sg.outputs)
        name = b.CreateString(sg.name)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, vec_tensors)
        tflite.SubGraphAddInputs(b, vec_in)
        tflite.SubGraphAddOutputs(b, vec_out)
        tflite.SubGraphAddOperators(b, vec_ops)
        tflite.SubGraphAddName(b, name)
        return tflite.SubGraphEnd(b)

    # ------------------------------------------------------------- from model
    @classmethod
    def from_model(cls, model: Model) -> "ModelBuilder":
        """A builder holding a loaded model's content (buffers kept by index, options
        re-written from their parsed values), ready to be modified and re-built."""
        mb = cls(description=model.description, version=model.version)
        mb.buffers = [None if b.data is None else b.data.tobytes() for b in model.buffers]
        mb.opcodes = [(oc.builtin_code, oc.custom_code, oc.version) for oc in model.operator_codes]
        mb.metadata = list(model.metadata.items())
        for sg in model.subgraphs:
            g = mb.subgraph(sg.name)
            for t in sg.tensors:
                q = None
                if t.quantization is not None:
                    q = (t.quantization.scales, t.quantization.zero_points, t.quantization.quantized_dimension)
                g.tensors.append(_Tensor(t.name, tuple(t.shape), t.type, t.buffer_index, q,
                                         t.is_variable, t.shape_signature))
            for op in sg.operators:
                if op.params.present:
                    name, options = op.params.options_name, op.params.as_dict()
                else:
                    name, options = None, {}
                g.operators.append(_Operator(op.opcode_index, op.inputs, op.outputs, op.intermediates,
                                             name, options, op.custom_options))
            g.inputs, g.outputs = list(sg.inputs), list(sg.outputs)
        return mb


_END_VECTOR_TAKES_LEN = "vectorNumElems" in inspect.signature(flatbuffers.Builder.EndVector).parameters


def _end_vector(b, n: int) -> int:
    return b.EndVector(n) if _END_VECTOR_TAKES_LEN else b.EndVector()


def _int_vector(b, start_fn, values: Sequence[int]) -> int:
    start_fn(b, len(values))
    for v in reversed(list(values)):
        b.PrependInt32(int(v))
    return _end_vector(b, len(values))


def _offset_vector(b, start_fn, offsets: Sequence[int]) -> int:
    start_fn(b, len(offsets))
    for off in reversed(list(offsets)):
        b.PrependUOffsetTRelative(off)
    return _end_vector(b, len(offsets))


@lru_cache(maxsize=None)
def _vector_element_size(options_name: str, accessor: str) -> int:
    fn = getattr(tflite, f"{options_name}Start{accessor}Vector")
    match = re.search(r"StartVector\((\d+)", inspect.getsource(fn))
    return int(match.group(1)) if match else 4


_PREPEND = {1: "PrependInt8", 2: "PrependInt16", 4: "PrependInt32", 8: "PrependInt64"}


def write_options_table(b, options_name: str, values: Dict[str, Any]) -> int:
    """Write an options table from snake_case field values (unknown fields are an error)."""
    cls = getattr(tflite, options_name)
    fields = {name: (accessor, is_vector) for accessor, name, is_vector in options_fields(cls)}
    unknown = set(values) - set(fields)
    if unknown:
        raise InputError(f"{options_name} has no field(s) {sorted(unknown)}; "
                         f"known: {sorted(fields)}")
    vectors = {}
    for name, value in values.items():
        accessor, is_vector = fields[name]
        if is_vector:
            seq = list(value)
            size = _vector_element_size(options_name, accessor)
            getattr(tflite, f"{options_name}Start{accessor}Vector")(b, len(seq))
            for v in reversed(seq):
                getattr(b, _PREPEND[size])(int(v))
            vectors[name] = _end_vector(b, len(seq))
        elif isinstance(value, str):
            vectors[name] = b.CreateString(value)
    getattr(tflite, f"{options_name}Start")(b)
    for name, value in values.items():
        accessor, is_vector = fields[name]
        adder = getattr(tflite, f"{options_name}Add{accessor}")
        adder(b, vectors[name] if name in vectors else value)
    return getattr(tflite, f"{options_name}End")(b)
