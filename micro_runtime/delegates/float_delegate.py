"""A float "accelerator" delegate: what would a model lose on a float32 / float16 unit?

In the manner of TFLite's GPU delegate: :class:`FloatDelegate` claims every operator it
can run in float, and each claimed subset runs as a float model:

1. the subset's quantized inputs are dequantized (``real = scale * (q - zero_point)``,
   computed in double and stored as float32, as TFLM's DEQUANTIZE does);
2. the subset runs as a small float32 model — the same ops and options, float32
   tensors, weights and biases dequantized (per-channel aware, int4 unpacked) — in a
   nested :class:`~micro_runtime.interpreter.MicroInterpreter` with the float kernels of
   ``kernels/``;
3. the outputs are quantized back to the subset's output types as TFLM's QUANTIZE does
   (``round_half_away(x / scale) + zero_point`` in float32, clamped to the type's range).
   A boundary with a fixed scale (an int8 SOFTMAX output: 1/256, zero point -128)
   simply uses that tensor's parameters: probability 1.0 saturates to 127 as in TFLM.

``precision="fp16"`` emulates half-precision storage: weights, biases, the subset's
inputs and every op's outputs are rounded to numpy float16 (binary16, round to nearest
even; beyond 65504 becomes inf); arithmetic inside an op stays float32, as in GPU
delegates that store in FP16 and accumulate in FP32. Rounding accumulations to fp16 is
not modelled.

``clamp=True`` is a diagnostic: every float op's output is clamped to the real range its
quantized tensor can hold (``scale * (qmin - zero_point) .. scale * (qmax - zero_point)``),
as the integer kernels saturate. The difference between a clamped and an unclamped run
is the part of the drift that comes from values outside the int8 range (inputs outside
the calibration data), not from float precision.

What is claimed: builtin ops with a kernel in the op resolver, whose activations are
float32 or per-tensor quantized int8 / int16 / uint8, whose constants are float32,
quantized integers, or plain integer parameters (shapes, axes, paddings), without
variable tensors or intermediates, excluding QUANTIZE / DEQUANTIZE / CAST (type
conversions) — and for which a one-op float model actually prepares with the float
kernels (so an op whose kernel has no float path is left to the integer kernels).
``delegate.claimed`` / ``delegate.rejected`` (node index -> reason) tell what happened.

The delegate's memory is the accelerator's: tensors private to a subset leave the MCU
arena plan (the head shrinks); the subset's boundary tensors stay in the arena.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import schema
from .delegate import Delegate, DelegateContext
from ..errors import InputError, MicroRuntimeError, ModelError
from ..model import Model, OperatorSpec, Quantization, TensorSpec
from ..op_resolver import OpResolver, default_op_resolver

FLOAT32 = schema.TensorType.FLOAT32
_QUANTIZED_ACTIVATIONS = (schema.TensorType.INT8, schema.TensorType.INT16, schema.TensorType.UINT8)
_NOT_CLAIMED = ("QUANTIZE", "DEQUANTIZE", "CAST")
PRECISIONS = {"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16"}


def _silent(message: str) -> None:
    pass


def to_fp16_storage(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to binary16 and widened back to float32 (exact widening)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def dequantize(values: np.ndarray, q: Quantization) -> np.ndarray:
    """``scale * (q - zero_point)`` in double, as float32; per-channel along
    ``q.quantized_dimension``."""
    v = np.asarray(values).astype(np.float64)
    scales = q.scales.astype(np.float64)
    zps = q.zero_points.astype(np.float64)
    if scales.size > 1 and v.ndim:
        axis = q.quantized_dimension
        if not (0 <= axis < v.ndim and v.shape[axis] == scales.size):
            # e.g. a depthwise bias stored with the filter's quantized_dimension 3
            axes = [k for k, d in enumerate(v.shape) if d == scales.size]
            if len(axes) != 1:
                raise ModelError(f"per-channel quantization with {scales.size} scales on dimension "
                                 f"{q.quantized_dimension} does not fit a tensor of shape {v.shape}")
            axis = axes[0]
        shape = [1] * v.ndim
        shape[axis] = scales.size
        scales = scales.reshape(shape)
        zps = zps.reshape(shape) if zps.size == q.scales.size else zps[:1]
    else:
        scales, zps = scales[:1], zps[:1]
    out = scales * (v - zps)
    return out.astype(np.float32).reshape(v.shape)


def quantize(real: np.ndarray, scale: float, zero_point: int, dtype: np.dtype) -> np.ndarray:
    """TFLM's AffineQuantize: ``round_half_away(x / scale) + zero_point`` with a float32
    division, clamped to ``dtype``; NaN becomes the zero point."""
    from kernels.internal.quantization import round_half_away
    info = np.iinfo(dtype)
    x = np.asarray(real, np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        v = round_half_away(x / np.float32(scale)).astype(np.float64) + int(zero_point)
    v = np.where(np.isnan(v), float(zero_point), v)
    return np.clip(v, info.min, info.max).astype(dtype)


def _is_quantized(spec: TensorSpec) -> bool:
    return spec.quantization is not None and spec.quantization.scales.size > 0


def _constant_values(spec: TensorSpec) -> np.ndarray:
    data = spec.data
    if spec.type == schema.TensorType.INT4:
        from kernels.internal.tensor_utils import unpack_int4
        count = int(np.prod(spec.shape, dtype=np.int64)) if spec.shape else 1
        return unpack_int4(data, count).reshape(spec.shape)
    return np.asarray(data)


def _bias_quantization(model: Model, op: OperatorSpec, k: int) -> Optional[Quantization]:
    """A bias stored without quantization parameters: TFLM's kernels take its scale as
    input scale x filter scale(s)."""
    bias_slot = {"CONV_2D": 2, "DEPTHWISE_CONV_2D": 2, "FULLY_CONNECTED": 2, "TRANSPOSE_CONV": 3}
    slot = bias_slot.get(op.name)
    if slot is None or k != slot:
        return None
    tensors = model.main.tensors
    x = tensors[op.inputs[2 if op.name == "TRANSPOSE_CONV" else 0]]
    w = tensors[op.inputs[1]]
    if not (_is_quantized(x) and _is_quantized(w)):
        return None
    scales = (np.float64(x.quantization.scale) * w.quantization.scales.astype(np.float64)).astype(np.float32)
    return Quantization(scales, np.zeros(scales.size, np.int64), 0)


@dataclass
class FloatSubset:
    """A claimed subset as a float model: model bytes and how its boundary maps."""

    model: bytes
    runtime_inputs: List[int]          #: positions in the delegate node's inputs
    outputs: List[int]                 #: tensor indices (the delegate node's outputs)
    #: float-model tensor index -> (lowest, highest) real value its quantized original holds
    ranges: Dict[int, Tuple[float, float]] = field(default_factory=dict)


def build_float_model(model: Model, ops: Sequence[OperatorSpec], inputs: Sequence[int],
                      outputs: Sequence[int], precision: str = "fp32") -> FloatSubset:
    """The operators ``ops`` of ``model`` as a float32 model whose inputs are the
    non-constant tensors of ``inputs`` and whose outputs are ``outputs``."""
    from ..tools.model_writer import ModelBuilder
    tensors = model.main.tensors
    b = ModelBuilder(description=f"micro-runtime float subset ({precision})")
    g = b.subgraph("float_subset")
    index: Dict[int, int] = {}
    ranges: Dict[int, Tuple[float, float]] = {}
    bias_q: Dict[int, Quantization] = {}
    for op in ops:
        for k, t in enumerate(op.inputs):
            if t >= 0 and tensors[t].data is not None and not _is_quantized(tensors[t]):
                q = _bias_quantization(model, op, k)
                if q is not None and tensors[t].type in (schema.TensorType.INT32, schema.TensorType.INT64):
                    bias_q[t] = q

    def add(t: int) -> int:
        if t in index:
            return index[t]
        spec = tensors[t]
        name = spec.name or f"t{t}"
        if spec.data is not None:
            q = spec.quantization if _is_quantized(spec) else bias_q.get(t)
            if q is not None:
                values = dequantize(_constant_values(spec), q)
            elif spec.type == FLOAT32:
                values = np.asarray(spec.data, np.float32)
            else:   # plain integer parameters: shapes, axes, paddings
                index[t] = g.add_tensor(name, spec.shape, spec.type, data=np.asarray(spec.data))
                return index[t]
            if precision == "fp16":
                values = to_fp16_storage(values)
            index[t] = g.add_tensor(name, spec.shape, FLOAT32, data=values.reshape(spec.shape))
        else:
            ttype = FLOAT32 if (spec.type == FLOAT32 or _is_quantized(spec)) else spec.type
            index[t] = g.add_tensor(name, spec.shape, ttype)
            if _is_quantized(spec) and spec.type != FLOAT32 and np.issubdtype(spec.dtype, np.integer):
                info = np.iinfo(spec.dtype)
                scale, zp = float(spec.quantization.scale), spec.quantization.zero_point
                ranges[index[t]] = (scale * (int(info.min) - zp), scale * (int(info.max) - zp))
        return index[t]

    runtime_inputs = []
    for k, t in enumerate(inputs):
        add(t)
        if tensors[t].data is None:
            runtime_inputs.append(k)
    for op in ops:
        ins = [add(t) if t >= 0 else -1 for t in op.inputs]
        outs = [add(t) for t in op.outputs]
        options = op.params.as_dict() if op.params.present else {}
        g.add_operator(op.name, ins, outs, options_type=op.params.options_name if op.params.present else None,
                       version=op.version, **options)
    g.inputs = [index[inputs[k]] for k in runtime_inputs]
    g.outputs = [index[t] for t in outputs]
    return FloatSubset(b.build(), runtime_inputs, list(outputs), ranges)


class _FloatKernel:
    """Wraps a float kernel: after invoke, every float32 output is clamped to the range
    of its quantized original (``ranges``, when given) and rounded to binary16 (``fp16``)."""

    def __init__(self, inner, fp16: bool, ranges: Optional[Dict[int, Tuple[float, float]]]):
        self.inner = inner
        self.op = inner.op
        self.fp16 = fp16
        self.ranges = ranges or {}

    @property
    def name(self):
        return self.inner.name

    def init(self, ctx, node):
        return self.inner.init(ctx, node)

    def prepare(self, ctx, node):
        return self.inner.prepare(ctx, node)

    def invoke(self, ctx, node):
        self.inner.invoke(ctx, node)
        for t, arr in zip(node.outputs, node.output_arrays):
            if arr is None or arr.dtype != np.float32:
                continue
            bounds = self.ranges.get(t)
            if bounds is not None:
                np.clip(arr, np.float32(bounds[0]), np.float32(bounds[1]), out=arr)
            if self.fp16:
                arr[...] = to_fp16_storage(arr)

    def free(self, ctx, node):
        return self.inner.free(ctx, node)

    def reset(self, ctx, node):
        return self.inner.reset(ctx, node)


def _arena_for(model_bytes: bytes) -> int:
    from ..model import load_model
    from arena.allocator import tensor_bytes
    m = load_model(model_bytes)
    activations = sum(tensor_bytes(t) for t in m.main.tensors if t.data is None)
    return max(1 << 16, 2 * activations + (1 << 16))


def nested_interpreter(model_bytes: bytes, resolver: OpResolver):
    """A host-side interpreter for a float subset model, allocated."""
    from ..errors import ArenaTooSmallError
    from ..interpreter import MicroInterpreter
    size = _arena_for(model_bytes)
    for _ in range(6):
        it = MicroInterpreter(model_bytes, resolver, size, target="host64", error_reporter=_silent)
        try:
            it.allocate_tensors()
            return it
        except ArenaTooSmallError:
            size *= 4
    it.allocate_tensors()
    return it


@dataclass
class _NodeState:
    interpreter: object = None
    inputs: List[Tuple[int, Optional[Quantization], bool]] = field(default_factory=list)
    outputs: List[Tuple[float, int, np.dtype, bool]] = field(default_factory=list)


class FloatSubsetKernel:
    """The delegate kernel: one instance for all subsets, state per delegate node."""

    def __init__(self, delegate: "FloatDelegate"):
        self.delegate = delegate

    def init(self, ctx, node):
        return _NodeState()

    def prepare(self, ctx, node):
        p = node.params
        state = node.user_data
        tensors = ctx.model.main.tensors
        try:
            subset = build_float_model(ctx.model, p.operators, p.input_tensors, p.output_tensors,
                                       self.delegate.precision)
            state.interpreter = nested_interpreter(subset.model, self.delegate.resolver_for(subset))
        except MicroRuntimeError as e:
            raise ctx.error(f"the float subset (nodes {p.nodes_to_replace}) failed to prepare: {e}") from None
        state.inputs = []
        for k in subset.runtime_inputs:
            spec = tensors[p.input_tensors[k]]
            state.inputs.append((k, spec.quantization if _is_quantized(spec) else None,
                                 spec.type == FLOAT32 or _is_quantized(spec)))
        state.outputs = []
        for t in p.output_tensors:
            spec = tensors[t]
            if _is_quantized(spec) and spec.type != FLOAT32:
                state.outputs.append((spec.quantization.scale, spec.quantization.zero_point,
                                      spec.dtype, True))
            else:
                state.outputs.append((1.0, 0, spec.dtype, False))

    def invoke(self, ctx, node):
        state = node.user_data
        it = state.interpreter
        fp16 = self.delegate.precision == "fp16"
        for j, (k, q, is_float) in enumerate(state.inputs):
            x = node.input_arrays[k]
            if q is not None:
                x = dequantize(x, q)
            if is_float and fp16:
                x = to_fp16_storage(x)
            it.input(j)[...] = x
        it.invoke()
        for j, (scale, zp, dtype, quantized) in enumerate(state.outputs):
            y = it.output(j)
            out = node.output_arrays[j]
            if quantized:
                out[...] = quantize(y, scale, zp, dtype)
            else:
                out[...] = y

    def free(self, ctx, node):
        if node.user_data is not None:
            node.user_data.interpreter = None


class FloatDelegate(Delegate):
    """Runs every op it can in float32 (``precision="fp32"``) or with float16 storage
    (``"fp16"``) and quantizes the results back; see the module documentation."""

    def __init__(self, precision: str = "fp32", op_resolver: Optional[OpResolver] = None,
                 clamp: bool = False):
        if precision not in PRECISIONS:
            raise InputError(f"precision must be 'fp32' or 'fp16', not {precision!r}")
        self.precision = PRECISIONS[precision]
        self.clamp = bool(clamp)
        self.name = "float32" if self.precision == "fp32" else "float16"
        base = op_resolver if op_resolver is not None else default_op_resolver()
        #: the plain float kernels (used to decide what can be claimed)
        self.float_resolver = OpResolver()
        self.float_resolver._builtin = dict(base._builtin)
        self.kernel = FloatSubsetKernel(self)
        self.claimed: List[int] = []
        self.rejected: Dict[int, str] = {}
        self._probe_cache: Dict[tuple, Optional[str]] = {}

    def resolver_for(self, subset: FloatSubset) -> OpResolver:
        """The kernels a subset runs on: plain float kernels for fp32, wrapped to round
        outputs to binary16 (fp16) and / or clamp them to their int range (clamp)."""
        if self.precision == "fp32" and not self.clamp:
            return self.float_resolver
        ranges = subset.ranges if self.clamp else None
        resolver = OpResolver()
        for code, kernel in self.float_resolver._builtin.items():
            resolver._builtin[code] = _FloatKernel(kernel, self.precision == "fp16", ranges)
        return resolver

    # ------------------------------------------------------------- claiming
    def prepare(self, context: DelegateContext) -> None:
        self.claimed, self.rejected = [], {}
        for i in context.execution_plan:
            reason = self.why_not(context.model, context.node(i))
            if reason is None:
                self.claimed.append(i)
            else:
                self.rejected[i] = reason
        if self.claimed:
            context.replace_nodes(self.kernel, self.claimed)

    def why_not(self, model: Model, op: OperatorSpec) -> Optional[str]:
        """None when ``op`` can run in float here, else the reason it stays integer."""
        if op.builtin_code == schema.BuiltinOperator.CUSTOM:
            return "custom operator"
        if op.name in _NOT_CLAIMED:
            return f"{op.name} converts types; it stays on the integer kernels"
        if self.float_resolver.find(op.builtin_code) is None:
            return f"no {op.name} kernel"
        if op.intermediates:
            return "has intermediate tensors"
        tensors = model.main.tensors
        for t in list(op.inputs) + list(op.outputs):
            if t < 0:
                continue
            spec = tensors[t]
            if spec.is_variable:
                return f"{spec.describe()} is a variable tensor"
            if spec.data is None:
                if spec.type == FLOAT32:
                    continue
                if spec.type not in _QUANTIZED_ACTIVATIONS or not _is_quantized(spec):
                    return f"{spec.describe()} ({spec.type_name}) is neither float nor quantized"
                if spec.quantization.scales.size > 1:
                    return f"{spec.describe()} has per-channel activations"
        key = self._probe_key(model, op)
        if key not in self._probe_cache:
            self._probe_cache[key] = self._probe(model, op)
        return self._probe_cache[key]

    @staticmethod
    def _probe_key(model: Model, op: OperatorSpec) -> tuple:
        tensors = model.main.tensors
        sig = tuple((tensors[t].shape, tensors[t].type, tensors[t].data is not None) if t >= 0 else None
                    for t in list(op.inputs) + list(op.outputs))
        options = tuple(sorted(op.params.as_dict().items())) if op.params.present else ()
        return (op.builtin_code, op.version, sig, repr(options))

    def _probe(self, model: Model, op: OperatorSpec) -> Optional[str]:
        """Does a one-op float model of ``op`` prepare with the float kernels?"""
        inputs = [t for t in op.inputs if t >= 0]
        try:
            subset = build_float_model(model, [op], list(dict.fromkeys(inputs)), list(op.outputs), "fp32")
            nested_interpreter(subset.model, self.float_resolver)
        except MicroRuntimeError as e:
            return f"its float kernel rejects it: {e}"
        return None


__all__ = ["FloatDelegate", "FloatSubsetKernel", "build_float_model", "dequantize", "quantize",
           "to_fp16_storage"]
