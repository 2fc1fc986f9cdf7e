"""TFLite schema facts used everywhere: tensor types, their numpy dtypes and byte sizes,
builtin operator names and the builtin-options union.

Names come from the ``tflite`` schema package; nothing here parses flatbuffers.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite.TensorType import TensorType

#: TensorType value -> name, e.g. 9 -> "INT8".
TENSOR_TYPE_NAMES: Dict[int, str] = {
    v: k for k, v in vars(TensorType).items() if not k.startswith("_") and isinstance(v, int)
}

#: BuiltinOperator value -> name, e.g. 3 -> "CONV_2D".
BUILTIN_OP_NAMES: Dict[int, str] = {
    v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)
}
BUILTIN_OP_CODES: Dict[str, int] = {name: code for code, name in BUILTIN_OP_NAMES.items()}

#: Bytes per element as TFLM's TfLiteTypeSizeOf gives them. Types missing here make
#: TFLM fail to size the tensor (string, variant, int2, uint4, float8 ...).
#: INT4 counts one byte per element, as TFLM does when it sizes arena buffers.
TYPE_SIZES: Dict[int, int] = {
    TensorType.FLOAT16: 2, TensorType.BFLOAT16: 2, TensorType.FLOAT32: 4,
    TensorType.FLOAT64: 8, TensorType.INT16: 2, TensorType.INT32: 4, TensorType.UINT32: 4,
    TensorType.UINT8: 1, TensorType.UINT16: 2, TensorType.INT8: 1, TensorType.INT64: 8,
    TensorType.UINT64: 8, TensorType.BOOL: 1, TensorType.RESOURCE: 4,
    TensorType.COMPLEX64: 8, TensorType.COMPLEX128: 16, TensorType.INT4: 1,
}

#: numpy dtype used for a tensor's data (INT4 data is unpacked to int8 by the kernels;
#: RESOURCE handles are int32, as TFLM stores them).
NUMPY_DTYPES: Dict[int, np.dtype] = {
    TensorType.FLOAT16: np.dtype(np.float16), TensorType.FLOAT32: np.dtype(np.float32),
    TensorType.FLOAT64: np.dtype(np.float64), TensorType.INT16: np.dtype(np.int16),
    TensorType.INT32: np.dtype(np.int32), TensorType.UINT32: np.dtype(np.uint32),
    TensorType.UINT8: np.dtype(np.uint8), TensorType.UINT16: np.dtype(np.uint16),
    TensorType.INT8: np.dtype(np.int8), TensorType.INT64: np.dtype(np.int64),
    TensorType.UINT64: np.dtype(np.uint64), TensorType.BOOL: np.dtype(np.bool_),
    TensorType.RESOURCE: np.dtype(np.int32), TensorType.COMPLEX64: np.dtype(np.complex64),
    TensorType.COMPLEX128: np.dtype(np.complex128), TensorType.INT4: np.dtype(np.int8),
    TensorType.BFLOAT16: np.dtype(np.uint16),
}

DTYPE_TO_TENSOR_TYPE: Dict[np.dtype, int] = {
    np.dtype(np.float16): TensorType.FLOAT16, np.dtype(np.float32): TensorType.FLOAT32,
    np.dtype(np.float64): TensorType.FLOAT64, np.dtype(np.int16): TensorType.INT16,
    np.dtype(np.int32): TensorType.INT32, np.dtype(np.uint32): TensorType.UINT32,
    np.dtype(np.uint8): TensorType.UINT8, np.dtype(np.uint16): TensorType.UINT16,
    np.dtype(np.int8): TensorType.INT8, np.dtype(np.int64): TensorType.INT64,
    np.dtype(np.uint64): TensorType.UINT64, np.dtype(np.bool_): TensorType.BOOL,
    np.dtype(np.complex64): TensorType.COMPLEX64, np.dtype(np.complex128): TensorType.COMPLEX128,
}


def tensor_type_name(tensor_type: int) -> str:
    """Schema name of a tensor type (``"INT8"``), or ``"TYPE_<n>"`` for unknown values."""
    return TENSOR_TYPE_NAMES.get(tensor_type, f"TYPE_{tensor_type}")


def op_name(builtin_code: int, custom_code: Optional[str] = None) -> str:
    """Operator name as TFLM prints it: the builtin name, or the custom op's name."""
    if builtin_code == BuiltinOperator.CUSTOM:
        return custom_code if custom_code else "CUSTOM"
    return BUILTIN_OP_NAMES.get(builtin_code, f"BUILTIN_{builtin_code}")


def _union_classes(union_enum: type) -> Dict[int, type]:
    out = {}
    for name, value in vars(union_enum).items():
        if name.startswith("_") or not isinstance(value, int) or value == 0:
            continue
        cls = getattr(tflite, name, None)
        if isinstance(cls, type):
            out[value] = cls
    return out


#: BuiltinOptions union type -> generated options table class (tflite.Conv2DOptions ...).
BUILTIN_OPTIONS_CLASSES: Dict[int, type] = _union_classes(tflite.BuiltinOptions)
#: BuiltinOptions2 union type -> options table class (the schema's second union).
BUILTIN_OPTIONS2_CLASSES: Dict[int, type] = _union_classes(tflite.BuiltinOptions2)
#: options class name -> BuiltinOptions union value.
BUILTIN_OPTIONS_TYPES: Dict[str, int] = {cls.__name__: t for t, cls in BUILTIN_OPTIONS_CLASSES.items()}
BUILTIN_OPTIONS2_TYPES: Dict[str, int] = {cls.__name__: t for t, cls in BUILTIN_OPTIONS2_CLASSES.items()}
