"""Which code esp-tflite-micro's ESP-NN kernels run for an operator, from the model alone
(``micro-runtime ops``): the ESP-NN routine, or TFLM's reference code and why."""
from __future__ import annotations

from typing import Optional

from micro_runtime import schema

from .common import FUNCTION_SETS

INT8, INT4, INT16, FLOAT32 = (schema.TensorType.INT8, schema.TensorType.INT4,
                              schema.TensorType.INT16, schema.TensorType.FLOAT32)


def tensor(graph, op, i: int, output: bool = False):
    """The TensorSpec of the operator's input (or output) ``i``, None when absent."""
    indices = op.outputs if output else op.inputs
    if 0 <= i < len(indices) and indices[i] >= 0:
        return graph.tensors[indices[i]]
    return None


#: routines ESP-NN's generic optimised set (esp_nn_generic_opt.h) maps to the plain C ones
OPT_IS_ANSI = ("esp_nn_add_elementwise_s8", "esp_nn_mul_elementwise_s8", "esp_nn_avg_pool_s8",
               "esp_nn_max_pool_s8", "esp_nn_fully_connected_s8", "esp_nn_fully_connected_per_ch_s8")


def esp_nn(target, routine: str) -> str:
    """``ESP-NN <routine>: <the function set that provides it>``."""
    if target.esp_nn == "opt" and routine in OPT_IS_ANSI:
        return (f"ESP-NN {routine}: ESP-NN's plain C (the generic optimised set maps it to "
                f"{routine}_ansi)")
    return f"ESP-NN {routine}: {FUNCTION_SETS.get(target.esp_nn, target.esp_nn)}"


def reference(why: str) -> str:
    return f"TFLM reference code: {why}"


def type_name(spec) -> str:
    return schema.tensor_type_name(spec.type).lower() if spec is not None else "none"


def int8_only(kind: str, spec, weights=None) -> Optional[str]:
    """The reason an operator falls back to the reference code because of its types, or
    None for int8 activations (with int8 weights)."""
    if spec is None:
        return "no input"
    if spec.type != INT8:
        return f"{type_name(spec)} input (ESP-NN's {kind} takes int8)"
    if weights is not None and weights.type != INT8:
        return f"{type_name(weights)} weights (ESP-NN's {kind} takes int8 weights)"
    return None


def broadcasts(a, b) -> bool:
    """TFLM's ProcessBroadcastShapes: whether two shapes differ once extended to one rank."""
    if a is None or b is None:
        return False
    n = max(len(a.shape), len(b.shape))
    return (1,) * (n - len(a.shape)) + tuple(a.shape) != (1,) * (n - len(b.shape)) + tuple(b.shape)


def convolution(target, graph, op, kind: str, routine: str) -> str:
    """The route of a (depthwise) convolution: ESP-NN's ``routine`` for int8 input and
    weights without dilation, TFLM's reference kernel otherwise (``kind`` names it)."""
    inp, flt = tensor(graph, op, 0), tensor(graph, op, 1)
    why = int8_only(kind, inp, flt)
    if why:
        return reference(why)
    dilation = (int(op.params.get("dilation_h_factor", 1)), int(op.params.get("dilation_w_factor", 1)))
    if dilation != (1, 1):
        return reference(f"dilation {dilation[0]}x{dilation[1]} (ESP-NN's {kind} takes none)")
    return esp_nn(target, routine)
