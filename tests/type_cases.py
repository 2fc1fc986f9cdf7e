"""One small valid model per (operator, tensor-type combination), for the type-acceptance
test (tests/test_op_types.py): every registered op gets a builder that makes a minimal
model of the op for a given :class:`~kernels.base.TypeCombo` (data type, weights type,
output type), and the combinations to try (its candidates).

A builder makes the model a converter would write for that type: int8 / int16 / uint8 /
int4 tensors carry quantization (the op's fixed output scales where TFLM requires them),
indices / shapes / axes are int32 constants, inputs are small values (ones). Only the
combination's types change between the models of one op, so whether TFLM runs the model
says whether its kernel runs that combination.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import flatbuffers.flexbuffers as flex
import numpy as np

from kernels.base import TypeCombo
from micro_runtime.schema import NUMPY_DTYPES, TensorType
from micro_runtime.tools.model_writer import ModelBuilder
from tests.conv_helpers import pack_int4
from tests.helpers import TensorDef, single_op_model

#: the activation types every op is tried with
BASE = ("float32", "int8", "int16", "int32", "int64", "uint8", "bool")
#: BASE and the unsigned types of CAST and the signal-library ops
WIDE = BASE + ("uint32", "uint64")
#: the weights types tried with the ops that have weights (int4: packed constants)
WEIGHTS = ("float32", "int8", "int16", "int4")
#: activation types tried with every weights type
WEIGHTED_ACTIVATIONS = ("float32", "int8", "int16")

#: (scale, zero point) given to quantized tensors by default
DEFAULT_QUANT = {"int8": (0.5, 0), "int16": (0.5, 0), "uint8": (0.5, 128), "int4": (0.5, 0)}


@dataclass
class TypeCase:
    """A model and the values of its (non-constant) inputs."""
    model: bytes
    inputs: List[np.ndarray] = field(default_factory=list)


@dataclass
class OpCases:
    """How to build the models of one op: ``build(combo)`` and the combinations tried."""
    build: Callable[[TypeCombo], TypeCase]
    candidates: Sequence[str]

    def __post_init__(self):
        self.candidates = list(dict.fromkeys(self.candidates))


# ------------------------------------------------------------------ candidates
def same(types: Sequence[str] = WIDE) -> List[str]:
    """One data type at a time (every tensor of that type)."""
    return list(types)


def pairs(inputs: Sequence[str], outputs: Sequence[str]) -> List[str]:
    """Every input type -> output type."""
    return [f"{i}->{o}" for i in inputs for o in outputs]


def star(center_in: str, center_out: str, types: Sequence[str] = BASE) -> List[str]:
    """Input type varied with the usual output, output type varied with the usual input."""
    keys = [f"{t}->{center_out}" for t in types] + [f"{center_in}->{t}" for t in types]
    return list(dict.fromkeys(keys))


def weighted(activations: Sequence[str] = BASE) -> List[str]:
    """Every activation type with weights of its own type, and the main activation
    types with every other weights type."""
    keys = list(activations)
    keys += [f"{a} x {w}" for a in WEIGHTED_ACTIVATIONS for w in WEIGHTS if w != a]
    return keys


# ------------------------------------------------------------------ tensors
def quant_of(t: str, quant="auto"):
    return DEFAULT_QUANT.get(t) if quant == "auto" else quant


def tensor(shape, t: str, data=None, quant="auto", **kwargs) -> TensorDef:
    """A tensor of type ``t`` (a lower-case schema name); constant when ``data`` is given
    (converted to ``t``; int4 values are packed)."""
    if data is not None:
        data = np.asarray(data)
        data = pack_int4(data) if t == "int4" else data.astype(dtype_of(t))
    return TensorDef(shape, t.upper(), quant=quant_of(t, quant), data=data, **kwargs)


def dtype_of(t: str) -> np.dtype:
    return NUMPY_DTYPES[getattr(TensorType, t.upper())]


def values(shape, t: str, value=1) -> np.ndarray:
    """An input of ``shape`` filled with ``value`` (True for bool)."""
    return np.full(shape, value, dtype=dtype_of(t))


def const(values_, t: str = "int32") -> TensorDef:
    arr = np.asarray(values_)
    return tensor(arr.shape, t, data=arr, quant=None)


def scalar(value: int, t: str = "int32") -> TensorDef:
    return tensor((), t, data=np.array(value), quant=None)


def bias_type(activation: str) -> str:
    """The bias type converters give: float32 for float32, int64 for int16, else int32."""
    return {"float32": "float32", "int16": "int64"}.get(activation, "int32")


#: a combination's note naming one bias type: "bias int64"
BIAS_NOTE = re.compile(r"^bias (\w+)$")


def bias(n: int, combo: TypeCombo, in_scale: float = 0.5, w_scale: float = 0.5) -> TensorDef:
    """The bias of a weighted op: the type the combination's note names (``bias int64``),
    else the converters' :func:`bias_type`."""
    named = BIAS_NOTE.match(combo.note)
    t = named.group(1) if named else bias_type(combo.data)
    quant = None if t == "float32" else (in_scale * w_scale, 0)
    return tensor((n,), t, data=np.zeros(n), quant=quant)


def case(op: str, ins: Sequence[Optional[TensorDef]], outs: Sequence[TensorDef],
         inputs: Optional[List[np.ndarray]] = None, **options) -> TypeCase:
    """A one-op model; its runtime inputs are ones unless given."""
    model = single_op_model(op, ins, outs, **options)
    if inputs is None:
        inputs = [values(t.shape, t.dtype.lower()) for t in ins
                  if t is not None and t.data is None and not t.is_variable]
    return TypeCase(model, inputs)


def out_of(c: TypeCombo) -> str:
    return c.output or c.data


def weights_of(c: TypeCombo) -> str:
    return c.weights or c.data


# ------------------------------------------------------------------ builders
CASES: Dict[str, OpCases] = {}


def cases(*ops: str, candidates: Sequence[str]):
    def deco(fn):
        for op in ops:
            CASES[op] = OpCases(lambda combo, op=op: fn(op, combo), list(candidates))
        return fn
    return deco


#: output quantization TFLM requires of some ops: op -> type -> (scale, zero point)
FIXED_OUTPUT_QUANT = {
    "LOGISTIC": {"int8": (1 / 256, -128), "int16": (1 / 32768, 0)},
    "TANH": {"int8": (1 / 128, 0), "int16": (1 / 32768, 0)},
    "SOFTMAX": {"int8": (1 / 256, -128), "int16": (1 / 32768, 0)},   # int8 -> int16: below
    "LOG_SOFTMAX": {"int8": (16 / 256, 127)},
    "L2_NORMALIZATION": {"int8": (1 / 128, 0)},
}


@cases("ABS", "CEIL", "COS", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIN", "SQRT",
       "SQUARE", "RELU", "RELU6", "ELU", "HARD_SWISH", "LOGISTIC", "TANH", "LOG_SOFTMAX",
       "L2_NORMALIZATION", "ZEROS_LIKE", "LOGICAL_NOT", candidates=same())
def unary(op, c):
    out_quant = FIXED_OUTPUT_QUANT.get(op, {}).get(out_of(c), "auto")
    return case(op, [tensor((2, 3), c.data)], [tensor((2, 3), out_of(c), quant=out_quant)])


@cases("LEAKY_RELU", candidates=same())
def leaky_relu(op, c):
    return case(op, [tensor((2, 3), c.data)], [tensor((2, 3), c.data)], alpha=0.2)


@cases("SOFTMAX", candidates=star("int8", "int8") + star("float32", "float32")
       + star("int16", "int16"))
def softmax(op, c):
    out_quant = FIXED_OUTPUT_QUANT[op].get(out_of(c), "auto")
    if (c.data, out_of(c)) == ("int8", "int16"):
        out_quant = (1 / 65536, -32768)
    return case(op, [tensor((2, 3), c.data)], [tensor((2, 3), out_of(c), quant=out_quant)], beta=1.0)


@cases("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "FLOOR_DIV", "FLOOR_MOD",
       "SQUARED_DIFFERENCE", "LOGICAL_AND", "LOGICAL_OR", candidates=same())
def binary(op, c):
    return case(op, [tensor((2, 3), c.data), tensor((2, 3), c.data)], [tensor((2, 3), c.data)])


@cases("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL",
       candidates=pairs(BASE, ["bool"]))
def comparison(op, c):
    return case(op, [tensor((2, 3), c.data), tensor((2, 3), c.data)], [tensor((2, 3), out_of(c))])


@cases("ADD_N", candidates=same())
def add_n(op, c):
    return case(op, [tensor((2, 3), c.data)] * 3, [tensor((2, 3), c.data)])


@cases("PRELU", candidates=weighted())
def prelu(op, c):
    alpha = tensor((3,), weights_of(c), data=np.ones(3))
    return case(op, [tensor((2, 3), c.data), alpha], [tensor((2, 3), c.data)])


@cases("SELECT_V2", candidates=same())
def select_v2(op, c):
    return case(op, [tensor((2, 3), "bool"), tensor((2, 3), c.data), tensor((2, 3), c.data)],
                [tensor((2, 3), c.data)])


@cases("CAST", candidates=pairs(WIDE, WIDE))
def cast(op, c):
    return case(op, [tensor((2, 3), c.data, quant=None)], [tensor((2, 3), out_of(c), quant=None)])


@cases("QUANTIZE", candidates=pairs(BASE, BASE))
def quantize(op, c):
    # the output always carries quantization (its scale defines the op)
    return case(op, [tensor((2, 3), c.data)], [tensor((2, 3), out_of(c), quant=(0.25, 0))])


@cases("DEQUANTIZE", candidates=pairs(BASE, BASE))
def dequantize(op, c):
    return case(op, [tensor((2, 3), c.data, quant=(0.5, 0))], [tensor((2, 3), out_of(c))])


@cases("ARG_MAX", "ARG_MIN", candidates=star("float32", "int32"))
def arg_min_max(op, c):
    return case(op, [tensor((2, 3), c.data), const([1])], [tensor((2,), out_of(c), quant=None)])


@cases("SHAPE", candidates=star("float32", "int32"))
def shape(op, c):
    return case(op, [tensor((2, 3), c.data)], [tensor((2,), out_of(c), quant=None)])


@cases("CONCATENATION", candidates=same())
def concatenation(op, c):
    return case(op, [tensor((2, 3), c.data), tensor((2, 3), c.data)], [tensor((2, 6), c.data)],
                axis=1)


@cases("PACK", candidates=same())
def pack(op, c):
    return case(op, [tensor((3,), c.data), tensor((3,), c.data)], [tensor((2, 3), c.data)],
                values_count=2, axis=0)


@cases("UNPACK", candidates=same())
def unpack(op, c):
    return case(op, [tensor((2, 3), c.data)], [tensor((3,), c.data), tensor((3,), c.data)],
                num=2, axis=0)


@cases("SPLIT", candidates=same())
def split(op, c):
    return case(op, [scalar(1), tensor((2, 4), c.data)],
                [tensor((2, 2), c.data), tensor((2, 2), c.data)], num_splits=2)


@cases("SPLIT_V", candidates=same())
def split_v(op, c):
    return case(op, [tensor((2, 4), c.data), const([1, 3]), scalar(1)],
                [tensor((2, 1), c.data), tensor((2, 3), c.data)], num_splits=2)


@cases("RESHAPE", candidates=same())
def reshape(op, c):
    return case(op, [tensor((2, 3), c.data), const([3, 2])], [tensor((3, 2), c.data)],
                new_shape=[3, 2])


@cases("EXPAND_DIMS", candidates=same())
def expand_dims(op, c):
    return case(op, [tensor((2, 3), c.data), const([0])], [tensor((1, 2, 3), c.data)])


@cases("SQUEEZE", candidates=same())
def squeeze(op, c):
    return case(op, [tensor((1, 3), c.data)], [tensor((3,), c.data)], squeeze_dims=[0])


@cases("TRANSPOSE", candidates=same())
def transpose(op, c):
    return case(op, [tensor((2, 3), c.data), const([1, 0])], [tensor((3, 2), c.data)])


@cases("SLICE", candidates=same())
def slice_(op, c):
    return case(op, [tensor((2, 3), c.data), const([0, 1]), const([2, 2])], [tensor((2, 2), c.data)])


@cases("STRIDED_SLICE", candidates=same())
def strided_slice(op, c):
    return case(op, [tensor((2, 3), c.data), const([0, 1]), const([2, 3]), const([1, 1])],
                [tensor((2, 2), c.data)])


@cases("PAD", candidates=same())
def pad(op, c):
    return case(op, [tensor((2, 3), c.data), const([[1, 0], [0, 1]])], [tensor((3, 4), c.data)])


@cases("PADV2", candidates=same())
def padv2(op, c):
    return case(op, [tensor((2, 3), c.data), const([[1, 0], [0, 1]]),
                     tensor((), c.data, data=np.array(0))], [tensor((3, 4), c.data)])


@cases("MIRROR_PAD", candidates=same())
def mirror_pad(op, c):
    return case(op, [tensor((2, 3), c.data), const([[1, 0], [0, 1]])], [tensor((3, 4), c.data)],
                mode=0)


@cases("GATHER", candidates=same())
def gather(op, c):
    return case(op, [tensor((3, 2), c.data), const([2, 0])], [tensor((2, 2), c.data)], axis=0)


@cases("GATHER_ND", candidates=same())
def gather_nd(op, c):
    return case(op, [tensor((3, 2), c.data), const([[2], [0]])], [tensor((2, 2), c.data)])


@cases("EMBEDDING_LOOKUP", candidates=star("float32", "float32") + star("int8", "int8"))
def embedding_lookup(op, c):
    return case(op, [const([2, 0]), tensor((3, 2), c.data, data=np.ones((3, 2)))],
                [tensor((2, 2), out_of(c))])


@cases("FILL", candidates=same())
def fill(op, c):
    return case(op, [const([2, 3]), tensor((), c.data)], [tensor((2, 3), c.data)])


@cases("BROADCAST_TO", candidates=same())
def broadcast_to(op, c):
    return case(op, [tensor((1, 3), c.data), const([2, 3])], [tensor((2, 3), c.data)])


@cases("BROADCAST_ARGS", candidates=same())
def broadcast_args(op, c):
    return case(op, [tensor((2,), c.data, data=[2, 1], quant=None),
                     tensor((2,), c.data, data=[1, 3], quant=None)],
                [tensor((2,), c.data, quant=None)])


@cases("CUMSUM", candidates=same())
def cumsum(op, c):
    return case(op, [tensor((2, 3), c.data), scalar(1)], [tensor((2, 3), c.data)])


@cases("DYNAMIC_UPDATE_SLICE", candidates=same())
def dynamic_update_slice(op, c):
    return case(op, [tensor((2, 3), c.data), tensor((1, 2), c.data), const([1, 1])],
                [tensor((2, 3), c.data)])


@cases("REVERSE_V2", candidates=same())
def reverse_v2(op, c):
    return case(op, [tensor((2, 3), c.data), const([1])], [tensor((2, 3), c.data)])


@cases("DEPTH_TO_SPACE", candidates=same())
def depth_to_space(op, c):
    return case(op, [tensor((1, 1, 1, 4), c.data)], [tensor((1, 2, 2, 1), c.data)], block_size=2)


@cases("SPACE_TO_DEPTH", candidates=same())
def space_to_depth(op, c):
    return case(op, [tensor((1, 2, 2, 1), c.data)], [tensor((1, 1, 1, 4), c.data)], block_size=2)


@cases("BATCH_TO_SPACE_ND", candidates=same())
def batch_to_space_nd(op, c):
    return case(op, [tensor((4, 1, 1, 1), c.data), const([2, 2]), const([[0, 0], [0, 0]])],
                [tensor((1, 2, 2, 1), c.data)])


@cases("SPACE_TO_BATCH_ND", candidates=same())
def space_to_batch_nd(op, c):
    return case(op, [tensor((1, 2, 2, 1), c.data), const([2, 2]), const([[0, 0], [0, 0]])],
                [tensor((4, 1, 1, 1), c.data)])


@cases("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", candidates=same())
def resize(op, c):
    return case(op, [tensor((1, 2, 2, 1), c.data), const([4, 4])], [tensor((1, 4, 4, 1), c.data)])


@cases("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D", candidates=same())
def pool(op, c):
    return case(op, [tensor((1, 2, 2, 1), c.data)], [tensor((1, 1, 1, 1), c.data)],
                padding=1, stride_w=1, stride_h=1, filter_width=2, filter_height=2)


@cases("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL", candidates=same())
def reduce(op, c):
    return case(op, [tensor((2, 3), c.data), const([1])], [tensor((2,), c.data)], keep_dims=False)


@cases("CONV_2D", candidates=weighted())
def conv_2d(op, c):
    w = weights_of(c)
    return case(op, [tensor((1, 3, 3, 2), c.data), tensor((2, 2, 2, 2), w, data=np.ones((2, 2, 2, 2))),
                     bias(2, c)],
                [tensor((1, 2, 2, 2), c.data)], padding=1, stride_w=1, stride_h=1)


@cases("DEPTHWISE_CONV_2D", candidates=weighted())
def depthwise_conv_2d(op, c):
    w = weights_of(c)
    return case(op, [tensor((1, 3, 3, 2), c.data), tensor((1, 2, 2, 2), w, data=np.ones((1, 2, 2, 2))),
                     bias(2, c)],
                [tensor((1, 2, 2, 2), c.data)], padding=1, stride_w=1, stride_h=1,
                depth_multiplier=1)


@cases("FULLY_CONNECTED", candidates=weighted())
def fully_connected(op, c):
    w = weights_of(c)
    return case(op, [tensor((1, 4), c.data), tensor((3, 4), w, data=np.ones((3, 4))), bias(3, c)],
                [tensor((1, 3), c.data)])


@cases("TRANSPOSE_CONV", candidates=weighted())
def transpose_conv(op, c):
    w = weights_of(c)
    return case(op, [const([1, 4, 4, 2]), tensor((2, 2, 2, 2), w, data=np.ones((2, 2, 2, 2))),
                     tensor((1, 3, 3, 2), c.data), bias(2, c)],
                [tensor((1, 4, 4, 2), c.data)], padding=1, stride_w=1, stride_h=1)


@cases("BATCH_MATMUL", candidates=same())
def batch_matmul(op, c):
    return case(op, [tensor((2, 3), c.data), tensor((3, 4), c.data)], [tensor((2, 4), c.data)])


@cases("SVDF", candidates=weighted())
def svdf(op, c):
    # batch 1, input 3, 2 filters (units 2, rank 1), memory 2; time weights and the state
    # int16 with int8 activations (TFLM also takes int8 ones), else the activation type
    state = "int16" if c.data == "int8" else c.data
    return case(op, [tensor((1, 3), c.data), tensor((2, 3), weights_of(c), data=np.ones((2, 3))),
                     tensor((2, 2), state, data=np.ones((2, 2))), bias(2, c),
                     tensor((1, 4), state, is_variable=True)],
                [tensor((1, 2), c.data)], rank=1)


@cases("UNIDIRECTIONAL_SEQUENCE_LSTM", candidates=weighted())
def lstm(op, c):
    n_in, n_state, w = 2, 2, weights_of(c)
    integer = c.data in ("int8", "int16")
    ins: List[Optional[TensorDef]] = [None] * 24
    ins[0] = tensor((1, 1, n_in), c.data)
    for i in range(1, 5):
        ins[i] = tensor((n_state, n_in), w, data=np.ones((n_state, n_in)))
    for i in range(5, 9):
        ins[i] = tensor((n_state, n_state), w, data=np.ones((n_state, n_state)))
    for i in range(12, 16):
        ins[i] = bias(n_state, c)
    ins[18] = tensor((1, n_state), c.data, is_variable=True)
    ins[19] = tensor((1, n_state), "int16" if integer else c.data,
                     quant=(1 / 2048, 0) if integer else "auto", is_variable=True)
    return case(op, ins, [tensor((1, 1, n_state), c.data)], fused_activation_function=4,
                cell_clip=0.0, proj_clip=0.0, time_major=False)


@cases("TFLite_Detection_PostProcess", candidates=same())
def detection_postprocess(op, c):
    n = 4
    anchors = np.array([[0.5, 0.5, 0.2, 0.2]] * n, np.float32)
    opts = flex.Dumps(dict(max_detections=3, max_classes_per_detection=1, num_classes=2,
                           nms_score_threshold=0.1, nms_iou_threshold=0.5, y_scale=10.0,
                           x_scale=10.0, h_scale=5.0, w_scale=5.0))
    return case(op, [tensor((1, n, 4), c.data), tensor((1, n, 3), c.data),
                     tensor((n, 4), c.data, data=anchors)],
                [tensor((1, 3, 4), "float32"), tensor((1, 3), "float32"), tensor((1, 3), "float32"),
                 tensor((1,), "float32")], custom_options=opts)


@cases("CIRCULAR_BUFFER", candidates=same())
def circular_buffer(op, c):
    return case(op, [tensor((1, 1, 1, 4), c.data)],
                [tensor((1, 3, 1, 4), c.data, is_variable=True)], custom_options=None)


@cases("TFLM_DECODE", candidates=same())
def decode(op, c):
    # LUT decoding (DCM: type 0, version 1, LUT version 1, 2-bit indices, 4 values):
    # four indices 0..3 in one byte, the value table in the output's type
    table = values((4,), c.data).tobytes()
    dcm = bytes([0, 1, 0, 0, 1, 2, 4] + [0] * 9) + table
    b = ModelBuilder()
    g = b.subgraph()
    enc = g.add_tensor("enc", (1,), "UINT8", data=np.array([0x1B], np.uint8))
    anc = g.add_tensor("anc", (len(dcm),), "UINT8", data=np.frombuffer(dcm, np.uint8))
    dec = g.add_tensor("dec", (4,), c.data.upper(), quantization=quant_of(c.data))
    g.add_operator(op, [enc, anc], [dec], custom_options=b"")
    g.inputs, g.outputs = [], [dec]
    return TypeCase(b.build())


# ------------------------------------------------------------------ signal library
def signal_options(**kwargs) -> bytes:
    return flex.Dumps(kwargs)


def type_code(t: str) -> int:
    return int(getattr(TensorType, t.upper()))


@cases("SignalWindow", candidates=same(WIDE))
def signal_window(op, c):
    return case(op, [tensor((4,), c.data, quant=None), tensor((4,), c.data, data=np.ones(4), quant=None)],
                [tensor((4,), c.data, quant=None)], custom_options=signal_options(shift=1))


@cases("SignalDelay", candidates=same(WIDE))
def signal_delay(op, c):
    return case(op, [tensor((4,), c.data, quant=None)], [tensor((4,), c.data, quant=None)],
                custom_options=signal_options(delay_length=1))


@cases("SignalFftAutoScale", candidates=same(WIDE))
def signal_fft_auto_scale(op, c):
    return case(op, [tensor((4,), c.data, quant=None)],
                [tensor((4,), c.data, quant=None), TensorDef((), "INT32")],
                custom_options=signal_options())


@cases("SignalRfft", "SignalIrfft", candidates=same(WIDE))
def signal_fft(op, c):
    n = 8
    ins, outs = ((n,), (n + 2,)) if op == "SignalRfft" else ((n + 2,), (n,))
    return case(op, [tensor(ins, c.data, quant=None)], [tensor(outs, c.data, quant=None)],
                custom_options=signal_options(T=type_code(c.data), fft_length=n))


@cases("SignalOverlapAdd", candidates=same(WIDE))
def signal_overlap_add(op, c):
    return case(op, [tensor((2, 4), c.data, quant=None)], [tensor((4,), c.data, quant=None)],
                custom_options=signal_options(T=type_code(c.data), frame_step=2))


@cases("SignalFramer", candidates=same(WIDE))
def signal_framer(op, c):
    return case(op, [tensor((4,), c.data, quant=None)],
                [tensor((1, 4), c.data, quant=None), TensorDef((), "BOOL")],
                custom_options=signal_options(frame_size=4, frame_step=4, prefill=False))


@cases("SignalStacker", candidates=same(WIDE))
def signal_stacker(op, c):
    return case(op, [tensor((4,), c.data, quant=None)],
                [tensor((8,), c.data, quant=None), TensorDef((), "BOOL")],
                custom_options=signal_options(num_channels=4, stacker_left_context=1,
                                              stacker_right_context=0, stacker_step=1))


@cases("SignalEnergy", candidates=star("int16", "uint32", WIDE))
def signal_energy(op, c):
    return case(op, [tensor((8,), c.data, quant=None)], [tensor((4,), out_of(c), quant=None)],
                custom_options=signal_options(end_index=4, start_index=0))


@cases("SignalFilterBank", candidates=star("uint32", "uint64", WIDE))
def signal_filter_bank(op, c):
    # 2 channels over a 4-bin spectrum: band k starts at bin k + 1, width 1
    tables = [np.ones(3), np.zeros(3), np.array([1, 2, 3]), np.array([0, 1, 2]), np.array([1, 1, 1])]
    return case(op, [tensor((4,), c.data, quant=None)]
                + [tensor(t.shape, "int16", data=t, quant=None) for t in tables],
                [tensor((2,), out_of(c), quant=None)], custom_options=signal_options(num_channels=2))


@cases("SignalFilterBankLog", candidates=star("uint32", "int16", WIDE))
def signal_filter_bank_log(op, c):
    return case(op, [tensor((4,), c.data, quant=None)], [tensor((4,), out_of(c), quant=None)],
                custom_options=signal_options(input_correction_bits=3, output_scale=1600))


@cases("SignalFilterBankSquareRoot", candidates=star("uint64", "uint32", WIDE))
def signal_filter_bank_square_root(op, c):
    return case(op, [tensor((4,), c.data, quant=None), scalar(1)],
                [tensor((4,), out_of(c), quant=None)], custom_options=signal_options())


@cases("SignalFilterBankSpectralSubtraction", candidates=same(WIDE))
def signal_spectral_subtraction(op, c):
    opts = dict(num_channels=4, smoothing=655, one_minus_smoothing=64881, alternate_smoothing=655,
                alternate_one_minus_smoothing=64881, smoothing_bits=0, min_signal_remaining=3277,
                clamping=False, spectral_subtraction_bits=14)
    return case(op, [tensor((4,), c.data, quant=None)],
                [tensor((4,), c.data, quant=None), tensor((4,), c.data, quant=None)],
                custom_options=signal_options(**opts))


@cases("SignalPCAN", candidates=same(WIDE))
def signal_pcan(op, c):
    lut = np.ones(125, np.int16)
    return case(op, [tensor((4,), c.data, quant=None), tensor((4,), c.data, data=np.ones(4), quant=None),
                     tensor(lut.shape, "int16", data=lut, quant=None)],
                [tensor((4,), c.data, quant=None)], custom_options=signal_options(snr_shift=6))


# ------------------------------------------------------------------ control flow, variables
def _pass_through_subgraph(b: ModelBuilder, name: str, shape, t: str, n: int = 1):
    """A subgraph whose outputs are its inputs (no operators)."""
    g = b.subgraph(name)
    ts = [g.add_tensor(f"x{k}", shape, t.upper(), quantization=quant_of(t)) for k in range(n)]
    g.inputs, g.outputs = ts, ts
    return g


@cases("IF", candidates=same())
def if_op(op, c):
    b = ModelBuilder()
    m = b.subgraph("main")
    cond = m.add_tensor("cond", (), "BOOL")
    x = m.add_tensor("x", (2, 3), c.data.upper(), quantization=quant_of(c.data))
    o = m.add_tensor("o", (2, 3), c.data.upper(), quantization=quant_of(c.data))
    m.add_operator(op, [cond, x], [o], then_subgraph_index=1, else_subgraph_index=2)
    m.inputs, m.outputs = [cond, x], [o]
    _pass_through_subgraph(b, "then", (2, 3), c.data)
    _pass_through_subgraph(b, "else", (2, 3), c.data)
    return TypeCase(b.build(), [values((), "bool"), values((2, 3), c.data)])


@cases("WHILE", candidates=same())
def while_op(op, c):
    """The loop condition is a constant false: the body (pass-through) never runs."""
    b = ModelBuilder()
    m = b.subgraph("main")
    x = m.add_tensor("x", (2, 3), c.data.upper(), quantization=quant_of(c.data))
    o = m.add_tensor("o", (2, 3), c.data.upper(), quantization=quant_of(c.data))
    m.add_operator(op, [x], [o], cond_subgraph_index=1, body_subgraph_index=2)
    m.inputs, m.outputs = [x], [o]
    g = b.subgraph("cond")
    xi = g.add_tensor("x", (2, 3), c.data.upper(), quantization=quant_of(c.data))
    zero = g.add_tensor("zero", (), "INT32", data=np.zeros((), np.int32))
    flag = g.add_tensor("flag", (), "BOOL")
    g.add_operator("CAST", [zero], [flag])
    g.inputs, g.outputs = [xi], [flag]
    _pass_through_subgraph(b, "body", (2, 3), c.data)
    return TypeCase(b.build(), [values((2, 3), c.data)])


def variable_model(t: str, call_once: bool = False) -> TypeCase:
    """VAR_HANDLE, ASSIGN_VARIABLE (the input, of type ``t``), READ_VARIABLE -> output;
    with ``call_once`` a CALL_ONCE first runs an (empty) init subgraph."""
    b = ModelBuilder()
    m = b.subgraph("main")
    x = m.add_tensor("x", (2, 3), t.upper(), quantization=quant_of(t))
    h = m.add_tensor("h", (), "RESOURCE")
    r = m.add_tensor("r", (2, 3), t.upper(), quantization=quant_of(t))
    if call_once:
        m.add_operator("CALL_ONCE", [], [], init_subgraph_index=1)
    m.add_operator("VAR_HANDLE", [], [h], container="", shared_name="v")
    m.add_operator("ASSIGN_VARIABLE", [h, x], [])
    m.add_operator("READ_VARIABLE", [h], [r])
    m.inputs, m.outputs = [x], [r]
    if call_once:
        g = b.subgraph("init")
        g.inputs, g.outputs = [], []
    return TypeCase(b.build(), [values((2, 3), t)])


@cases("ASSIGN_VARIABLE", "READ_VARIABLE", candidates=same())
def variables(op, c):
    return variable_model(c.data)


@cases("VAR_HANDLE", candidates=["resource"])
def var_handle(op, c):
    return variable_model("float32")


#: ops without typed tensors: the one model each that both must run
UNTYPED: Dict[str, Callable[[], TypeCase]] = {
    "CALL_ONCE": lambda: variable_model("float32", call_once=True),
}
