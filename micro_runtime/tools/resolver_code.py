"""``ops MODEL --cpp``: the ``MicroMutableOpResolver`` a firmware needs for a model.

TFLM's ``MicroMutableOpResolver<N>`` registers each operator by its own method
(``AddConv2D()``, ``AddFullyConnected()``, ``AddWindow()`` for the signal library's
SignalWindow ...); N is the number of distinct operators. :data:`RESOLVER_METHODS` holds
the method of every operator of TFLM 90b983c2's micro_mutable_op_resolver.h. The kernel
each call registers is the build's: the reference kernel, or the optimized library's
(``OPTIMIZED_KERNEL_DIR=cmsis_nn``) where it has one, which the generated comments say.
"""
from __future__ import annotations

from typing import Dict, List

#: operator (builtin name, or custom op name) -> TFLM's MicroMutableOpResolver method
RESOLVER_METHODS: Dict[str, str] = {
    "ABS": "AddAbs", "ADD": "AddAdd", "ADD_N": "AddAddN", "ARG_MAX": "AddArgMax",
    "ARG_MIN": "AddArgMin", "ASSIGN_VARIABLE": "AddAssignVariable",
    "AVERAGE_POOL_2D": "AddAveragePool2D", "BATCH_MATMUL": "AddBatchMatMul",
    "BATCH_TO_SPACE_ND": "AddBatchToSpaceNd", "BROADCAST_ARGS": "AddBroadcastArgs",
    "BROADCAST_TO": "AddBroadcastTo", "CALL_ONCE": "AddCallOnce", "CAST": "AddCast",
    "CEIL": "AddCeil", "CIRCULAR_BUFFER": "AddCircularBuffer", "CONCATENATION": "AddConcatenation",
    "CONV_2D": "AddConv2D", "COS": "AddCos", "CUMSUM": "AddCumSum",
    "DEPTHWISE_CONV_2D": "AddDepthwiseConv2D", "DEPTH_TO_SPACE": "AddDepthToSpace",
    "DEQUANTIZE": "AddDequantize", "DIV": "AddDiv",
    "DYNAMIC_UPDATE_SLICE": "AddDynamicUpdateSlice", "ELU": "AddElu",
    "EMBEDDING_LOOKUP": "AddEmbeddingLookup", "EQUAL": "AddEqual", "EXP": "AddExp",
    "EXPAND_DIMS": "AddExpandDims", "FILL": "AddFill", "FLOOR": "AddFloor",
    "FLOOR_DIV": "AddFloorDiv", "FLOOR_MOD": "AddFloorMod", "FULLY_CONNECTED": "AddFullyConnected",
    "GATHER": "AddGather", "GATHER_ND": "AddGatherNd", "GREATER": "AddGreater",
    "GREATER_EQUAL": "AddGreaterEqual", "HARD_SWISH": "AddHardSwish", "IF": "AddIf",
    "L2_NORMALIZATION": "AddL2Normalization", "L2_POOL_2D": "AddL2Pool2D",
    "LEAKY_RELU": "AddLeakyRelu", "LESS": "AddLess", "LESS_EQUAL": "AddLessEqual", "LOG": "AddLog",
    "LOGICAL_AND": "AddLogicalAnd", "LOGICAL_NOT": "AddLogicalNot", "LOGICAL_OR": "AddLogicalOr",
    "LOGISTIC": "AddLogistic", "LOG_SOFTMAX": "AddLogSoftmax", "MAXIMUM": "AddMaximum",
    "MAX_POOL_2D": "AddMaxPool2D", "MEAN": "AddMean", "MINIMUM": "AddMinimum",
    "MIRROR_PAD": "AddMirrorPad", "MUL": "AddMul", "NEG": "AddNeg", "NOT_EQUAL": "AddNotEqual",
    "PACK": "AddPack", "PAD": "AddPad", "PADV2": "AddPadV2", "PRELU": "AddPrelu",
    "QUANTIZE": "AddQuantize", "READ_VARIABLE": "AddReadVariable", "REDUCE_ALL": "AddReduceAll",
    "REDUCE_MAX": "AddReduceMax", "REDUCE_MIN": "AddReduceMin", "RELU": "AddRelu",
    "RELU6": "AddRelu6", "RESHAPE": "AddReshape", "RESIZE_BILINEAR": "AddResizeBilinear",
    "RESIZE_NEAREST_NEIGHBOR": "AddResizeNearestNeighbor", "REVERSE_V2": "AddReverseV2",
    "ROUND": "AddRound", "RSQRT": "AddRsqrt", "SELECT_V2": "AddSelectV2", "SHAPE": "AddShape",
    "SIN": "AddSin", "SLICE": "AddSlice", "SOFTMAX": "AddSoftmax",
    "SPACE_TO_BATCH_ND": "AddSpaceToBatchNd", "SPACE_TO_DEPTH": "AddSpaceToDepth",
    "SPLIT": "AddSplit", "SPLIT_V": "AddSplitV", "SQRT": "AddSqrt", "SQUARE": "AddSquare",
    "SQUARED_DIFFERENCE": "AddSquaredDifference", "SQUEEZE": "AddSqueeze",
    "STRIDED_SLICE": "AddStridedSlice", "SUB": "AddSub", "SUM": "AddSum", "SVDF": "AddSvdf",
    "SignalDelay": "AddDelay", "SignalEnergy": "AddEnergy",
    "SignalFftAutoScale": "AddFftAutoScale", "SignalFilterBank": "AddFilterBank",
    "SignalFilterBankLog": "AddFilterBankLog",
    "SignalFilterBankSpectralSubtraction": "AddFilterBankSpectralSubtraction",
    "SignalFilterBankSquareRoot": "AddFilterBankSquareRoot", "SignalFramer": "AddFramer",
    "SignalIrfft": "AddIrfft", "SignalOverlapAdd": "AddOverlapAdd", "SignalPCAN": "AddPCAN",
    "SignalRfft": "AddRfft", "SignalStacker": "AddStacker", "SignalWindow": "AddWindow",
    "TANH": "AddTanh", "TFLM_DECODE": "AddDecode",
    "TFLite_Detection_PostProcess": "AddDetectionPostprocess", "TRANSPOSE": "AddTranspose",
    "TRANSPOSE_CONV": "AddTransposeConv",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "AddUnidirectionalSequenceLSTM", "UNPACK": "AddUnpack",
    "VAR_HANDLE": "AddVarHandle", "WHILE": "AddWhile", "ZEROS_LIKE": "AddZerosLike",}

#: what each kernel library is, in the generated comments
LIBRARY_NAMES = {"reference": "reference kernel", "cmsis-nn": "CMSIS-NN kernel"}


def operator_types(kernel, graph, op):
    """(the combination of tensor types ``op`` of ``graph`` uses (a TypeCombo, or None
    for an op without typed tensors), whether ``kernel`` runs it)."""
    from kernels.base import Kernel
    from ..schema import tensor_type_name

    def name(i):
        return None if i < 0 else tensor_type_name(graph.tensors[i].type).lower()
    cls = kernel if kernel is not None and hasattr(kernel, "types_used") else Kernel
    used = cls.types_used([name(i) for i in op.inputs], [name(i) for i in op.outputs])
    if kernel is None:
        return used, False
    if not getattr(kernel, "supported_types", ()):
        return used, True           # no declaration: nothing to check
    return used, used is not None and kernel.supports_types(used)


def resolver_code(model, target, model_name: str) -> str:
    """C++ declaring a ``MicroMutableOpResolver`` with exactly the operators of ``model``
    (first-use order) and a function registering them, each call commented with its
    uses, tensor types and the kernel ``target``'s build runs. Custom operators without
    a method get ``AddCustom(name, registration)`` to be completed by the user."""
    from ..op_resolver import library_kernel_class
    from ..schema import op_name
    uses: Dict[str, dict] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            name = op_name(op.builtin_code, op.custom_code)
            entry = uses.setdefault(name, {"count": 0, "types": []})
            entry["count"] += 1
            cls = library_kernel_class(name, target.kernel_library, target.co_processor)
            used, _ = operator_types(cls() if cls is not None else None, sg, op)
            key = used.key if used is not None else ""
            if key and key not in entry["types"]:
                entry["types"].append(key)
    build = ("OPTIMIZED_KERNEL_DIR=cmsis_nn" if target.kernel_library == "cmsis-nn"
             else "reference kernels")
    lines = [f"// Operators of {model_name} for TFLM built as target {target.name} ({build}).",
             "// The resolver names the operators; the kernel each one runs is the build's.",
             "#include \"tensorflow/lite/micro/micro_mutable_op_resolver.h\"",
             "",
             f"static tflite::MicroMutableOpResolver<{len(uses)}> op_resolver;",
             "",
             "TfLiteStatus RegisterOps() {"]
    calls: List[tuple] = []
    for name, entry in uses.items():
        method = RESOLVER_METHODS.get(name)
        cls = library_kernel_class(name, target.kernel_library, target.co_processor)
        library = getattr(cls, "library", None)
        kernel = LIBRARY_NAMES.get(library, f"{library} kernel") if cls is not None else "no kernel here"
        note = (f"{entry['count']} use{'s' if entry['count'] > 1 else ''}"
                + (f", {' / '.join(entry['types'])}" if entry["types"] else "") + f"; {kernel}")
        if method is not None:
            call = f"op_resolver.{method}()"
        else:
            call = f"op_resolver.AddCustom(\"{name}\", /* your TFLMRegistration* */ nullptr)"
            note = f"{entry['count']} use{'s' if entry['count'] > 1 else ''}; a custom operator: pass its registration"
        calls.append((f"  TF_LITE_ENSURE_STATUS({call});", note))
    width = max(len(c) for c, _ in calls) if calls else 0
    lines += [f"{c:<{width}}  // {n}" for c, n in calls]
    lines += ["  return kTfLiteOk;", "}"]
    return "\n".join(lines)


__all__ = ["RESOLVER_METHODS", "resolver_code"]
