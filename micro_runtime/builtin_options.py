"""Builtin operator options: reading them, and what TFLM's parser allocates for them.

Options tables are read generically through the ``tflite`` package's generated classes
(every accessor becomes a snake_case attribute of :class:`OpParams`; vectors become
tuples), so every op of the schema is covered without a hand-written parser.

TFLM's flatbuffer parsers copy an op's options into a C struct (``TfLiteConvParams``
...) allocated in the arena tail. :data:`BUILTIN_DATA` says which struct each builtin op
gets; its size comes from the target profile. When the options table is missing or of
another type, TFLM leaves that struct zero-filled: :class:`OpParams` then holds zeros and
``present`` is False.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import schema
from .errors import ModelError

# op name -> (options table class expected by TFLM's parser, C struct it allocates).
# Ops absent here have a parser that allocates nothing.
BUILTIN_DATA: Dict[str, Tuple[Optional[str], Optional[str]]] = {
    "ADD": ("AddOptions", "TfLiteAddParams"),
    "ARG_MAX": ("ArgMaxOptions", "TfLiteArgMaxParams"),
    "ARG_MIN": ("ArgMinOptions", "TfLiteArgMinParams"),
    "BATCH_MATMUL": ("BatchMatMulOptions", "TfLiteBatchMatMulParams"),
    "CALL_ONCE": ("CallOnceOptions", "TfLiteCallOnceParams"),
    "CAST": ("CastOptions", "TfLiteCastParams"),
    "CONCATENATION": ("ConcatenationOptions", "TfLiteConcatenationParams"),
    "CONV_2D": ("Conv2DOptions", "TfLiteConvParams"),
    "CUMSUM": ("CumsumOptions", "TfLiteCumsumParams"),
    "DEPTH_TO_SPACE": ("DepthToSpaceOptions", "TfLiteDepthToSpaceParams"),
    "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions", "TfLiteDepthwiseConvParams"),
    "DIV": ("DivOptions", "TfLiteDivParams"),
    "FULLY_CONNECTED": ("FullyConnectedOptions", "TfLiteFullyConnectedParams"),
    "GATHER": ("GatherOptions", "TfLiteGatherParams"),
    "IF": ("IfOptions", "TfLiteIfParams"),
    "L2_NORMALIZATION": ("L2NormOptions", "TfLiteL2NormParams"),
    "LEAKY_RELU": ("LeakyReluOptions", "TfLiteLeakyReluParams"),
    "LSTM": ("LSTMOptions", "TfLiteLSTMParams"),
    "MIRROR_PAD": ("MirrorPadOptions", "TfLiteMirrorPaddingParams"),
    "MUL": ("MulOptions", "TfLiteMulParams"),
    "PACK": ("PackOptions", "TfLitePackParams"),
    "AVERAGE_POOL_2D": ("Pool2DOptions", "TfLitePoolParams"),
    "MAX_POOL_2D": ("Pool2DOptions", "TfLitePoolParams"),
    "L2_POOL_2D": ("Pool2DOptions", "TfLitePoolParams"),
    "MEAN": ("ReducerOptions", "TfLiteReducerParams"),
    "SUM": ("ReducerOptions", "TfLiteReducerParams"),
    "REDUCE_MAX": ("ReducerOptions", "TfLiteReducerParams"),
    "REDUCE_MIN": ("ReducerOptions", "TfLiteReducerParams"),
    "REDUCE_PROD": ("ReducerOptions", "TfLiteReducerParams"),
    "REDUCE_ANY": ("ReducerOptions", "TfLiteReducerParams"),
    "REDUCE_ALL": ("ReducerOptions", "TfLiteReducerParams"),
    "RESHAPE": ("ReshapeOptions", "TfLiteReshapeParams"),
    "RESIZE_BILINEAR": ("ResizeBilinearOptions", "TfLiteResizeBilinearParams"),
    "RESIZE_NEAREST_NEIGHBOR": ("ResizeNearestNeighborOptions", "TfLiteResizeNearestNeighborParams"),
    "SHAPE": ("ShapeOptions", "TfLiteShapeParams"),
    "SOFTMAX": ("SoftmaxOptions", "TfLiteSoftmaxParams"),
    "SPACE_TO_DEPTH": ("SpaceToDepthOptions", "TfLiteSpaceToDepthParams"),
    "SPLIT": ("SplitOptions", "TfLiteSplitParams"),
    "SPLIT_V": ("SplitVOptions", "TfLiteSplitVParams"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("UnidirectionalSequenceLSTMOptions",
                                     "TfLiteUnidirectionalSequenceLSTMParams"),
    "SQUEEZE": ("SqueezeOptions", "TfLiteSqueezeParams"),
    "STRIDED_SLICE": ("StridedSliceOptions", "TfLiteStridedSliceParams"),
    "SUB": ("SubOptions", "TfLiteSubParams"),
    "SVDF": ("SVDFOptions", "TfLiteSVDFParams"),
    "TRANSPOSE_CONV": ("TransposeConvOptions", "TfLiteTransposeConvParams"),
    "UNPACK": ("UnpackOptions", "TfLiteUnpackParams"),
    "VAR_HANDLE": ("VarHandleOptions", "TfLiteVarHandleParams"),
    "WHILE": ("WhileOptions", "TfLiteWhileParams"),
}

#: TFLM copies these int vectors into fixed arrays of 8 and rejects longer ones.
_FIXED_ARRAYS = {"RESHAPE": ("new_shape", 8, "reshape"), "SQUEEZE": ("squeeze_dims", 8, "squeeze")}

_SKIP = {"Init"}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


@lru_cache(maxsize=None)
def options_fields(cls: type) -> Tuple[Tuple[str, str, bool], ...]:
    """(accessor, snake_case name, is_vector) for every field of an options class."""
    methods = {k for k, v in vars(cls).items() if callable(v) or isinstance(v, classmethod)}
    fields = []
    for name in sorted(methods):
        if (name in _SKIP or name.startswith("GetRootAs") or name.endswith("BufferHasIdentifier")
                or name.endswith("AsNumpy") or name.endswith("Length") or name.endswith("IsNone")
                or name.startswith("_")):
            continue
        is_vector = (name + "Length") in methods
        fields.append((name, _snake(name), is_vector))
    return tuple(fields)


class OpParams:
    """An operator's builtin options as attributes (``params.stride_w``).

    ``present`` is False when the model had no options table of the type TFLM expects
    (every field is then 0 / empty, like TFLM's zero-filled struct). ``struct`` names the
    C struct TFLM allocates for them (None when its parser allocates nothing).
    """

    def __init__(self, options_name: Optional[str], values: Dict[str, Any], present: bool,
                 struct: Optional[str]):
        self.options_name = options_name
        self.present = present
        self.struct = struct
        self._values = values
        self.__dict__.update(values)

    def as_dict(self) -> Dict[str, Any]:
        return dict(self._values)

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"OpParams({self.options_name}, present={self.present}, {inner})"


def read_options_table(table) -> Dict[str, Any]:
    """Every field of a generated options table object, as python values."""
    values: Dict[str, Any] = {}
    for accessor, name, is_vector in options_fields(type(table)):
        if is_vector:
            arr = getattr(table, accessor + "AsNumpy")()
            if isinstance(arr, np.ndarray):
                values[name] = tuple(arr.tolist())
            else:
                values[name] = ()
        else:
            try:
                value = getattr(table, accessor)()
            except TypeError:
                continue  # union/table accessors that need arguments: not used by TFLM
            if isinstance(value, (bool, int, float, bytes)):
                values[name] = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return values


def zero_options(cls: type) -> Dict[str, Any]:
    return {name: (() if is_vector else 0) for _, name, is_vector in options_fields(cls)}


def parse_builtin_options(builtin_code: int, options_type: int, table, options2_type: int,
                          table2, reader=None) -> OpParams:
    """Read an operator's options as TFLM's parser for that op sees them."""
    name = schema.op_name(builtin_code)
    expected, struct = BUILTIN_DATA.get(name, (None, None))
    if expected is None:
        # No TFLM parser reads options for this op; keep whatever the model has.
        chosen = table if table is not None else table2
        if chosen is None:
            return OpParams(None, {}, False, None)
        return OpParams(type(chosen).__name__, read_options_table(chosen), True, None)
    cls = getattr(__import__("tflite"), expected)
    if table is not None and type(table).__name__ == expected:
        values = read_options_table(table)
        present = True
    else:
        values = zero_options(cls)
        present = False
    fixed = _FIXED_ARRAYS.get(name)
    if fixed and present:
        field_name, limit, label = fixed
        if len(values.get(field_name, ())) > limit:
            where = f"{reader.source}: {reader.where}: " if reader is not None else ""
            raise ModelError(f"{where}{label}: found {len(values[field_name])} {field_name} "
                             f"but TFLM holds at most {limit}")
    return OpParams(expected, values, present, struct)
