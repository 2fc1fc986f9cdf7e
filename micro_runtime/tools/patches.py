"""Patch-based rewriting of the high-resolution stage, for stock TFLM (MCUNetV2-style).

In MobileNet-like models the first layers hold the largest activations. This module
rewrites a *stage* of the graph -- a run of spatial operators from the stage input to a
small *exit* tensor -- so that it runs one spatial patch at a time and the
full-resolution tensors never exist: for each patch of the exit tensor, SLICE the part
of the stage input its receptive field needs, run a copy of every stage operator on
the patch, and CONCATENATE the patch outputs into the exit tensor. The result is an
ordinary .tflite model that unmodified TFLM runs.

Why the outputs are bit-identical (every output pixel sees the same inputs, weights and
requantization as in the original):

* A convolution (CONV_2D, DEPTHWISE_CONV_2D) with implicit padding skips the taps that
  fall outside the image; each skipped tap would have added ``filter * (x - zp_in)``.
  An explicit PAD of the input with the input zero point (PAD's int8 pad value is its
  output zero point, and the padded tensor keeps the input's quantization) adds
  ``filter * (zp_in - zp_in) = 0`` at those taps: the same sum, so the same output (for
  float32 the added terms are +-0.0, which never change a sum that starts at +0.0; for
  int16 the zero point is 0 and PAD pads 0).
* MAX_POOL_2D skips outside taps and starts from the type's lowest value; an explicit
  PADV2 with that lowest value cannot change a maximum.
* AVERAGE_POOL_2D (and L2_POOL_2D) divide by the number of taps inside the image: an
  explicit pad would be counted, so these never get one. Their patch copies keep an
  implicit padding that lands exactly on the image border, or need none; a grid where
  that is impossible is refused.
* A patch operator may also keep SAME padding on the patch when TFLM's SAME arithmetic
  on the patch shape puts the padding exactly where the image border is; where it puts
  padding inside the image, the affected output pixels are wrong ("garbage") and the
  planner only allows that when no pixel the rest of the stage needs depends on them.
  Exactness is tracked per tensor as a box of exact pixels, interval by interval.
* Element-wise operators (ADD, MUL, activations, QUANTIZE, ...) and channel
  CONCATENATION compute each pixel from the same pixel of their inputs; a constant
  operand is only allowed when it does not vary over height and width.
* All patch outputs carry the exit tensor's quantization, so the CONCATENATION that
  assembles them is a pure copy (TFLM's kernel does not requantize int8 anyway).

What the rewrite costs is counted exactly by running the rewritten model through our
allocator (:mod:`micro_runtime.tools.sizing`): every new operator's NodeAndRegistration,
builtin options and OpData (a convolution copy re-allocates its per-channel multipliers
and shifts), every new tensor's TfLiteEvalTensor, and the slices', pads' and patch
tensors' buffers in the plan. The search minimises the minimum arena after the
offline-plan optimizer (:mod:`micro_runtime.tools.optimizer`) has planned the result.
"""
from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from kernels.internal.padding import compute_padding_height_width, padding_mode, SAME, VALID

from .. import schema
from ..errors import InputError, ModelError
from ..model import OFFLINE_MEMORY_ALLOCATION, Model, load_model
from ..op_resolver import OpResolver
from ..targets import DEFAULT_TARGET, Target, get_target
from .model_writer import ModelBuilder, _Operator, _Tensor

#: schema Padding values written into the options of patch operators
_SCHEMA_SAME, _SCHEMA_VALID = 0, 1

#: window operators -> how an explicit pad must be filled ("zero_point": PAD,
#: "lowest": PADV2 with the type's lowest value, None: never padded explicitly)
WINDOW_OPS: Dict[str, Optional[str]] = {
    "CONV_2D": "zero_point", "DEPTHWISE_CONV_2D": "zero_point", "MAX_POOL_2D": "lowest",
    "AVERAGE_POOL_2D": None, "L2_POOL_2D": None,
}
#: operators computing each output pixel from the same pixel of their single input
UNARY_OPS = frozenset({
    "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU", "LOGISTIC", "TANH",
    "HARD_SWISH", "QUANTIZE", "DEQUANTIZE", "ABS", "NEG", "ELU", "FLOOR", "CEIL", "ROUND",
    "SQRT", "RSQRT", "SQUARE", "EXP", "LOG", "SIN", "COS",
})
#: element-wise operators with two operands (both stage activations of one shape, or
#: one activation and a constant that does not vary over height and width)
BINARY_OPS = frozenset({"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE",
                        "PRELU", "DIV"})
#: the types an explicit pad is written for
_LOWEST = {schema.TensorType.INT8: -128, schema.TensorType.INT16: -32768,
           schema.TensorType.FLOAT32: float(np.finfo(np.float32).min)}
_PAD_TYPES = (schema.TensorType.INT8, schema.TensorType.INT16, schema.TensorType.FLOAT32)
#: activation types both TFLM's SLICE and CONCATENATION take (patch inputs, crops, exits)
_SLICE_TYPES = (schema.TensorType.INT8, schema.TensorType.INT16, schema.TensorType.FLOAT32,
                schema.TensorType.INT32, schema.TensorType.BOOL)
#: TFLM's CONCATENATION takes at most this many inputs
MAX_CONCAT_INPUTS = 10

Box = Tuple[int, int, int, int]  #: (h0, h1, w0, w1): rows [h0, h1), columns [w0, w1)
COMPRESSED_REFUSAL = ("the model carries TFLM compression metadata, which refers to tensors by "
                      "index: it is not rewritten")


class PatchError(InputError):
    """The stage or grid cannot be rewritten exactly (the message says why)."""


# ---------------------------------------------------------------- geometry
@dataclass(frozen=True)
class AxisGeometry:
    """One spatial axis of a window operator, in the original model (sizes in pixels)."""

    kernel: int       #: effective extent of the window ((filter - 1) * dilation + 1)
    stride: int
    pad_before: int   #: TFLM's computed padding before the first pixel
    pad_after: int    #: padding after the last pixel (total - before, >= 0)
    in_size: int
    out_size: int

    def needed_input(self, n0: int, n1: int) -> Tuple[int, int]:
        """Input pixels [a, b) (clipped to the image) read by outputs [n0, n1)."""
        return (max(0, n0 * self.stride - self.pad_before),
                min(self.in_size, (n1 - 1) * self.stride - self.pad_before + self.kernel))


@dataclass(frozen=True)
class AxisChoice:
    """How a patch operator covers one axis: explicit pads (pixels) and the output
    pixels it materialises [out0, out1), of which [exact0, exact1) are exact."""

    pad_before: int
    pad_after: int
    out0: int
    out1: int
    exact0: int
    exact1: int

    @property
    def size(self) -> int:
        return self.out1 - self.out0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@functools.lru_cache(maxsize=1 << 16)
def axis_choices(g: AxisGeometry, same: bool, a: int, b: int, xa: int, xb: int, n0: int, n1: int,
                 explicit: bool) -> Tuple[AxisChoice, ...]:
    """Every way a patch copy of a window operator can cover outputs [n0, n1) exactly
    along one axis, given its input materialised over [a, b) with exact pixels [xa, xb)
    (original coordinates, within the image). ``same``: the copy keeps SAME padding
    (TFLM recomputes it from the patch shape), else VALID. ``explicit``: explicit pads
    are allowed; they are only ever placed outside the image (a == 0 / b == in_size)."""
    out = []
    befores = range(g.pad_before + 1) if explicit and a == 0 else (0,)
    afters = range(g.pad_after + 1) if explicit and b == g.in_size else (0,)
    k, s = g.kernel, g.stride
    for eb in befores:
        for ea in afters:
            n = b - a + eb + ea
            if same:
                count = _ceil_div(n, s)
                implicit_before = max((count - 1) * s + k - n, 0) // 2
            else:
                if n < k:
                    continue
                count = (n - k) // s + 1
                implicit_before = 0
            # the patch's first window starts at original pixel a - eb - implicit_before,
            # which must be the start of an original window
            start = a - eb - implicit_before + g.pad_before
            if start % s:
                continue
            o0 = start // s
            o1 = o0 + count
            if o0 < 0 or o1 > g.out_size:
                continue
            # an output is exact iff its window's pixels inside the image are exact pixels
            lo = o0 if xa == 0 else max(o0, _ceil_div(xa + g.pad_before, s))
            hi = o1 if xb == g.in_size else min(o1, (xb + g.pad_before - k) // s + 1)
            if lo > n0 or hi < n1:
                continue
            out.append(AxisChoice(eb, ea, o0, o1, lo, hi))
    return tuple(out)


# ------------------------------------------------------------------- stage
@dataclass
class StageOp:
    """One operator of a stage, as the rewrite sees it."""

    index: int                    #: operator index in the main subgraph
    name: str
    kind: str                     #: "window", "pointwise" or "pad"
    activations: Tuple[int, ...]  #: input positions holding stage activations
    output: int                   #: output tensor index
    geometry: Tuple[Optional[AxisGeometry], Optional[AxisGeometry]] = (None, None)
    fill: Optional[str] = None    #: explicit pad fill of a window op (see WINDOW_OPS)
    macs_per_pixel: int = 0       #: multiply-accumulates per output pixel (conv / depthwise)


@dataclass
class Stage:
    """A run of operators [start, end] of the main subgraph with one activation input
    (``input``) from outside and one tensor (``exit``) used after it."""

    start: int
    end: int
    input: int
    exit: int
    ops: List[StageOp]


def _shape4(model: Model, t: int, what: str) -> Tuple[int, int, int, int]:
    spec = model.main.tensors[t]
    if len(spec.shape) != 4:
        raise PatchError(f"{what} {spec.describe()} has shape {tuple(spec.shape)}: only NHWC "
                         f"(4-D) tensors can be cut into patches")
    return tuple(int(d) for d in spec.shape)


def _spatially_constant(shape: Sequence[int]) -> bool:
    """A constant operand broadcast against NHWC that does not vary over H and W."""
    shape = tuple(shape)
    if len(shape) > 4:
        return False
    padded = (1,) * (4 - len(shape)) + shape
    return padded[1] == 1 and padded[2] == 1


def _stage_op(model: Model, index: int) -> StageOp:
    sg = model.main
    op = sg.operators[index]
    name = op.name
    where = f"operator #{index} ({name})"
    if op.custom_code is not None or name == "CUSTOM":
        raise PatchError(f"{where}: custom operators cannot be cut into patches")
    if len(op.outputs) != 1:
        raise PatchError(f"{where}: has {len(op.outputs)} outputs")
    out = op.outputs[0]
    out_shape = _shape4(model, out, f"{where}: output")
    if sg.tensors[out].type not in _SLICE_TYPES:
        raise PatchError(f"{where}: output type {sg.tensors[out].type_name}: TFLM's SLICE and "
                         f"CONCATENATION do not take it")
    if op.intermediates:
        raise PatchError(f"{where}: has intermediate tensors")
    params = op.params

    def activation_inputs():
        return tuple(i for i, t in enumerate(op.inputs)
                     if t >= 0 and not sg.tensors[t].is_constant)

    for t in list(op.inputs) + [out]:
        if t >= 0 and sg.tensors[t].is_variable:
            raise PatchError(f"{where}: uses variable tensor {sg.tensors[t].describe()}")
    if name in WINDOW_OPS:
        acts = activation_inputs()
        if acts != (0,):
            raise PatchError(f"{where}: only its first input may be an activation "
                             f"(filters and biases must be constant)")
        in_shape = _shape4(model, op.inputs[0], f"{where}: input")
        mode = padding_mode(params)
        if mode not in (SAME, VALID):
            raise PatchError(f"{where}: padding is neither SAME nor VALID")
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            fshape = sg.tensors[op.inputs[1]].shape
            if len(fshape) != 4:
                raise PatchError(f"{where}: filter of shape {tuple(fshape)} is not 4-D")
            kh, kw = int(fshape[1]), int(fshape[2])
            dh, dw = int(params.dilation_h_factor or 1), int(params.dilation_w_factor or 1)
            macs = kh * kw * (int(fshape[3]) if name == "CONV_2D" else 1)
        else:
            kh, kw = int(params.filter_height), int(params.filter_width)
            dh = dw = 1
            macs = 0
        sh, sw = int(params.stride_h), int(params.stride_w)
        if min(kh, kw, sh, sw, dh, dw) <= 0:
            raise PatchError(f"{where}: filter {kh}x{kw}, stride {sh}x{sw}, dilation {dh}x{dw} "
                             f"is not a valid window")
        pads, oh, ow = compute_padding_height_width(sh, sw, dh, dw, in_shape[1], in_shape[2],
                                                    kh, kw, mode)
        if (oh, ow) != out_shape[1:3]:
            raise PatchError(f"{where}: output {out_shape} does not have the {oh}x{ow} pixels "
                             f"its window arithmetic gives")
        geoms = []
        for k, d, s, n_in, n_out, pb in ((kh, dh, sh, in_shape[1], oh, pads.height),
                                         (kw, dw, sw, in_shape[2], ow, pads.width)):
            eff = (k - 1) * d + 1
            pa = max((n_out - 1) * s + eff - n_in - pb, 0)
            geoms.append(AxisGeometry(eff, s, pb, pa, n_in, n_out))
        fill = WINDOW_OPS[name]
        if fill is not None and sg.tensors[op.inputs[0]].type not in _PAD_TYPES:
            fill = None
        return StageOp(index, name, "window", acts, out, tuple(geoms), fill, macs)
    if name in ("PAD", "PADV2"):
        if activation_inputs() != (0,) or op.inputs[1] < 0 or not sg.tensors[op.inputs[1]].is_constant:
            raise PatchError(f"{where}: paddings (and the pad value) must be constant")
        in_shape = _shape4(model, op.inputs[0], f"{where}: input")
        pads = np.asarray(sg.tensors[op.inputs[1]].data).astype(np.int64).reshape(-1)
        if pads.size != 8:
            raise PatchError(f"{where}: paddings tensor does not hold 4x2 values")
        pads = pads.reshape(4, 2)
        if (pads < 0).any() or pads[0].any() or pads[3].any():
            raise PatchError(f"{where}: only non-negative padding of height and width is supported")
        if sg.tensors[op.inputs[0]].type not in _PAD_TYPES:
            raise PatchError(f"{where}: type {sg.tensors[op.inputs[0]].type_name} not supported")
        geoms = tuple(AxisGeometry(1, 1, int(pads[a, 0]), int(pads[a, 1]), in_shape[a], out_shape[a])
                      for a in (1, 2))
        if any(g.in_size + g.pad_before + g.pad_after != g.out_size for g in geoms):
            raise PatchError(f"{where}: output shape does not match its paddings")
        return StageOp(index, name, "pad", (0,), out, geoms)
    if name in UNARY_OPS or name in BINARY_OPS or name == "CONCATENATION":
        acts = activation_inputs()
        if not acts:
            raise PatchError(f"{where}: has no activation input")
        if name in UNARY_OPS and acts != (0,):
            raise PatchError(f"{where}: unexpected inputs")
        for i, t in enumerate(op.inputs):
            if t < 0:
                continue
            spec = sg.tensors[t]
            if i in acts:
                if tuple(spec.shape[:3]) != out_shape[:3] or len(spec.shape) != 4:
                    raise PatchError(f"{where}: input {spec.describe()} of shape {tuple(spec.shape)} "
                                     f"is not aligned pixel by pixel with the output {out_shape}")
                if name != "CONCATENATION" and tuple(spec.shape) != out_shape:
                    raise PatchError(f"{where}: input {spec.describe()} is broadcast")
            elif not _spatially_constant(spec.shape):
                raise PatchError(f"{where}: constant operand {spec.describe()} of shape "
                                 f"{tuple(spec.shape)} varies over height or width")
        if name == "CONCATENATION":
            axis = int(params.axis)
            if axis not in (3, -1):
                raise PatchError(f"{where}: concatenates along axis {axis}, not the channels")
            if len(acts) != len(op.inputs):
                raise PatchError(f"{where}: constant inputs")
        return StageOp(index, name, "pointwise", acts, out)
    raise PatchError(f"{where}: {name} is not a spatial operator the rewrite supports "
                     f"(supported: {', '.join(sorted(WINDOW_OPS))}, PAD, PADV2, CONCATENATION "
                     f"along channels and element-wise operators)")


def analyse_stage(model: Model, start: int, end: int) -> Stage:
    """Check that operators [start, end] of the main subgraph form a stage that can be
    cut into patches; raise :class:`PatchError` with the reason otherwise."""
    sg = model.main
    n = len(sg.operators)
    if not 0 <= start <= end < n:
        raise PatchError(f"stage [{start}, {end}] is outside the {n} operators of the main subgraph")
    produced: set = set()
    ops = []
    external: List[int] = []
    for i in range(start, end + 1):
        op = _stage_op(model, i)
        for pos in op.activations:
            t = sg.operators[i].inputs[pos]
            if t not in produced and t not in external:
                external.append(t)
        produced.add(op.output)
        ops.append(op)
    if len(external) != 1:
        names = ", ".join(sg.tensors[t].describe() for t in external)
        raise PatchError(f"stage [{start}, {end}] has {len(external)} activation inputs from "
                         f"outside ({names}); exactly one is supported")
    used_after = set(sg.outputs)
    for op in sg.operators[end + 1:]:
        used_after.update(t for t in op.inputs if t >= 0)
    leaving = [t for t in produced if t in used_after]
    if len(leaving) != 1:
        raise PatchError(f"stage [{start}, {end}]: {len(leaving)} of its tensors are used after it "
                         f"({', '.join(sg.tensors[t].describe() for t in leaving) or 'none'}); "
                         f"exactly one (the exit) is supported")
    consumers = {t: 0 for t in produced}
    for op in sg.operators[start:end + 1]:
        for t in op.inputs:
            if t in consumers:
                consumers[t] += 1
    for t, c in consumers.items():
        if c == 0 and t not in leaving:
            raise PatchError(f"stage [{start}, {end}]: {sg.tensors[t].describe()} is never used")
    stage = Stage(start, end, external[0], leaving[0], ops)
    _shape4(model, stage.input, "the stage input")
    if sg.tensors[stage.input].type not in _SLICE_TYPES:
        raise PatchError(f"the stage input {sg.tensors[stage.input].describe()} has type "
                         f"{sg.tensors[stage.input].type_name}, which TFLM's SLICE does not take")
    return stage


# ------------------------------------------------------------ needed regions
def _box_union(a: Optional[Box], b: Box) -> Box:
    if a is None:
        return b
    return (min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3]))


def needed_boxes(model: Model, stage: Stage, exit_box: Box) -> Dict[int, Box]:
    """For one patch (the exit pixels ``exit_box``), the pixels of every stage tensor
    (and of the stage input) it needs: the union of what its consumers' windows read."""
    sg = model.main
    need: Dict[int, Box] = {stage.exit: exit_box}
    for op in reversed(stage.ops):
        box = need.get(op.output)
        if box is None:
            continue
        inputs = sg.operators[op.index].inputs
        for pos in op.activations:
            if op.kind == "pointwise":
                in_box = box
            else:
                gh, gw = op.geometry
                if op.kind == "pad":
                    h = (max(0, box[0] - gh.pad_before), min(gh.in_size, box[1] - gh.pad_before))
                    w = (max(0, box[2] - gw.pad_before), min(gw.in_size, box[3] - gw.pad_before))
                else:
                    h, w = gh.needed_input(box[0], box[1]), gw.needed_input(box[2], box[3])
                if h[0] >= h[1] or w[0] >= w[1]:
                    raise PatchError(f"a patch lies entirely in the padding of operator "
                                     f"#{op.index} ({op.name}); use fewer patches")
                in_box = (h[0], h[1], w[0], w[1])
            t = inputs[pos]
            need[t] = _box_union(need.get(t), in_box)
    return need


def split_axis(size: int, parts: int) -> List[Tuple[int, int]]:
    """[0, size) cut into ``parts`` near-equal ranges (larger ones first)."""
    if not 1 <= parts <= size:
        raise PatchError(f"cannot cut {size} pixels into {parts} patches")
    base, extra = divmod(size, parts)
    bounds, pos = [], 0
    for i in range(parts):
        step = base + (1 if i < extra else 0)
        bounds.append((pos, pos + step))
        pos += step
    return bounds


# ----------------------------------------------------------------- rewrite
@dataclass
class _PatchTensor:
    """A tensor of one patch: its index, and the pixels it holds / holds exactly
    (original coordinates)."""

    index: int
    box: Box
    exact: Box


# ----------------------------------------------------------------- program
@dataclass
class _NewTensor:
    """A tensor the rewrite adds: a patch activation (type and quantization of the
    original tensor ``proto``) or a constant (``data``)."""

    name: str
    shape: Tuple[int, ...]
    proto: int                        #: original tensor whose type / quantization it takes
    data: Optional[np.ndarray] = None
    ttype: Optional[int] = None       #: type of a constant without quantization


@dataclass
class _NewOp:
    name: str
    inputs: Tuple[int, ...]
    outputs: Tuple[int, ...]
    copy_of: Optional[int] = None     #: original operator whose opcode and options are copied
    options: Dict[str, object] = field(default_factory=dict)


@dataclass
class PatchReport:
    """One patch: its exit pixels (rows h0:h1, columns w0:w1) and what was written for it."""

    row: int
    col: int
    exit_box: Box
    operators: int
    pads: int
    crops: int
    first_op: int = 0   #: index of its first operator in the program


@dataclass
class PatchProgram:
    """The rewrite of one stage, before it is written: new tensors (indexed after the
    model's own) and the operators replacing the stage, in execution order."""

    model: Model
    stage: Stage
    row_ranges: List[Tuple[int, int]]
    col_ranges: List[Tuple[int, int]]
    policy: Union[str, Dict[int, str]]
    tensors: List[_NewTensor] = field(default_factory=list)
    ops: List[_NewOp] = field(default_factory=list)
    patches: List[PatchReport] = field(default_factory=list)
    patched_macs: int = 0
    base: int = -1                     #: index of the first new tensor (after the model's, and
    #: after the new tensors of the rewrites applied before this one)
    hoist: int = -1                    #: patches from this one on take their SLICEs of the stage
    #: input before it runs (then the input dies); -1: each patch slices when it starts
    _consts: Dict[Tuple, int] = field(default_factory=dict)

    def __post_init__(self):
        if self.base < 0:
            self.base = len(self.model.main.tensors)

    @property
    def grid(self) -> Tuple[int, int]:
        return len(self.row_ranges), len(self.col_ranges)

    @property
    def stage_macs(self) -> int:
        sg = self.model.main
        return sum(int(np.prod(sg.tensors[op.output].shape)) * op.macs_per_pixel for op in self.stage.ops)

    @property
    def extra_macs(self) -> int:
        """Multiply-accumulates the halos (and discarded pixels) add per invoke."""
        return self.patched_macs - self.stage_macs

    def describe(self) -> str:
        rows = "/".join(str(b - a) for a, b in self.row_ranges)
        cols = "/".join(str(b - a) for a, b in self.col_ranges)
        policy = self.policy if isinstance(self.policy, str) else "mixed"
        hoist = ("" if self.hoist < 0 else "; all input slices first" if self.hoist == 0 else
                 f"; input slices of patches {self.hoist + 1}.. before patch {self.hoist + 1}")
        return (f"operators {self.stage.start}..{self.stage.end} in {len(self.row_ranges)}x"
                f"{len(self.col_ranges)} patches (exit rows {rows}, columns {cols}; {policy}{hoist})")

    # ------------------------------------------------------------ tensors
    @property
    def end(self) -> int:
        """One past the index of the last new tensor."""
        return self.base + len(self.tensors)

    def tensor_shape(self, t: int) -> Tuple[int, ...]:
        if t < len(self.model.main.tensors):
            return tuple(self.model.main.tensors[t].shape)
        return self.tensors[t - self.base].shape

    def proto(self, t: int) -> int:
        return t if t < len(self.model.main.tensors) else self.tensors[t - self.base].proto

    def like(self, t: int, name: str, shape: Sequence[int]) -> int:
        self.tensors.append(_NewTensor(name, tuple(int(d) for d in shape), self.proto(t)))
        return self.end - 1

    def const(self, name: str, values: np.ndarray, ttype: int, proto: Optional[int] = None) -> int:
        """A constant (shared by every operator that needs the same values); ``proto``
        gives it that tensor's quantization."""
        values = np.ascontiguousarray(values)
        key = (ttype, values.shape, values.tobytes(), proto)
        if key not in self._consts:
            self.tensors.append(_NewTensor(name, tuple(values.shape), -1 if proto is None else proto,
                                           values, ttype))
            self._consts[key] = self.end - 1
        return self._consts[key]

    # ---------------------------------------------------------- operators
    def crop(self, src: _PatchTensor, box: Box, name: str) -> _PatchTensor:
        """SLICE ``box`` out of ``src``."""
        if box == src.box:
            return src
        b, _, _, c = self.tensor_shape(src.index)
        out = self.like(src.index, name, (b, box[1] - box[0], box[3] - box[2], c))
        begin = self.const("patch/begin", np.array([0, box[0] - src.box[0], box[2] - src.box[2], 0],
                                                   np.int32), schema.TensorType.INT32)
        size = self.const("patch/size", np.array([b, box[1] - box[0], box[3] - box[2], c], np.int32),
                          schema.TensorType.INT32)
        self.ops.append(_NewOp("SLICE", (src.index, begin, size), (out,)))
        exact = (max(src.exact[0], box[0]), min(src.exact[1], box[1]),
                 max(src.exact[2], box[2]), min(src.exact[3], box[3]))
        return _PatchTensor(out, box, exact)

    def pad(self, src: _PatchTensor, pads: Tuple[int, int, int, int], fill: str, name: str) -> int:
        """PAD (zero point) or PADV2 (the type's lowest value) of ``src`` by (top,
        bottom, left, right) pixels."""
        b, h, w, c = self.tensor_shape(src.index)
        out = self.like(src.index, name, (b, h + pads[0] + pads[1], w + pads[2] + pads[3], c))
        paddings = self.const("patch/paddings", np.array(
            [[0, 0], [pads[0], pads[1]], [pads[2], pads[3]], [0, 0]], np.int32), schema.TensorType.INT32)
        if fill == "zero_point":
            self.ops.append(_NewOp("PAD", (src.index, paddings), (out,)))
        else:
            proto = self.proto(src.index)
            ttype = self.model.main.tensors[proto].type
            value = self.const("patch/lowest", np.array([_LOWEST[ttype]], schema.NUMPY_DTYPES[ttype]),
                               ttype, proto)
            self.ops.append(_NewOp("PADV2", (src.index, paddings, value), (out,)))
        return out

    def concat(self, parts: List[int], target: int, axis: int) -> None:
        """CONCATENATION of ``parts`` along ``axis`` into ``target``, in groups of at
        most MAX_CONCAT_INPUTS (the groups concatenated again)."""
        while len(parts) > MAX_CONCAT_INPUTS:
            merged = []
            for i in range(0, len(parts), MAX_CONCAT_INPUTS):
                group = parts[i:i + MAX_CONCAT_INPUTS]
                if len(group) == 1:
                    merged.append(group[0])
                    continue
                shape = list(self.tensor_shape(group[0]))
                shape[axis] = sum(self.tensor_shape(t)[axis] for t in group)
                name = f"{self.model.main.tensors[self.proto(target)].name}/group"
                t = self.like(target, name, shape)
                self.ops.append(_NewOp("CONCATENATION", tuple(group), (t,),
                                       options={"axis": axis, "fused_activation_function": 0}))
                merged.append(t)
            parts = merged
        self.ops.append(_NewOp("CONCATENATION", tuple(parts), (target,),
                               options={"axis": axis, "fused_activation_function": 0}))


#: how a window operator's patch copy is chosen: "tight" keeps patch tensors smallest
#: (explicit pads allowed), "nopad" avoids PAD operators (SAME on the patch where it
#: stays exact), "-cut" also lets it take a wider / narrower SLICE of its input
POLICIES = ("tight", "nopad", "tight-cut", "nopad-cut")
#: the policies every stage and grid is first tried with (refinement tries all, per operator)
SEARCH_POLICIES = ("tight", "nopad", "nopad-cut")


def _op_policy(policy, index: int, row: int, col: int) -> str:
    """The policy of operator ``index`` in patch (row, col): ``policy`` is one name, or
    a dict keyed by (index, row, col) or index (default "tight")."""
    if isinstance(policy, str):
        return policy
    return policy.get((index, row, col), policy.get(index, "tight"))


def _choose(op: StageOp, src: _PatchTensor, need_in: Box, need: Box, policy: str, cut: bool = False):
    """How the patch copy of a window operator covers output pixels ``need``:
    (input box, same, choice_h, choice_w), or None. The input is ``src`` as it is, or,
    with ``cut``, a SLICE of it: the needed input pixels ``need_in`` widened by up to
    kernel - 1 pixels each side (a wider cut can let TFLM's SAME arithmetic line up,
    saving a PAD). "tight" prefers the smallest output (explicit pads allowed), "nopad"
    avoids a PAD operator when SAME on the patch stays exact where needed."""
    best = None
    ranges = []
    for axis, g in enumerate(op.geometry):
        lo, hi = src.box[2 * axis], src.box[2 * axis + 1]
        if cut:
            n0, n1 = need_in[2 * axis], need_in[2 * axis + 1]
            ranges.append([(a, b) for a in range(n0, max(lo, n0 - g.kernel + 1) - 1, -1)
                           for b in range(n1, min(hi, n1 + g.kernel - 1) + 1)])
        else:
            ranges.append([(lo, hi)])
    for same in (False, True):
        per_axis = []
        for axis, g in enumerate(op.geometry):
            xlo, xhi = src.exact[2 * axis], src.exact[2 * axis + 1]
            options = []
            for a, b in ranges[axis]:
                for c in axis_choices(g, same, a, b, max(a, xlo), min(b, xhi),
                                      need[2 * axis], need[2 * axis + 1], op.fill is not None):
                    padded = c.pad_before + c.pad_after > 0
                    key = (c.size, padded, b - a) if policy == "tight" else (padded, c.size, b - a)
                    options.append((key, (a, b), c))
            if not options:
                break
            per_axis.append(min(options, key=lambda o: o[0]))
        if len(per_axis) != 2:
            continue
        (_, (h0, h1), ch), (_, (w0, w1), cw) = per_axis
        padded = any((ch.pad_before, ch.pad_after, cw.pad_before, cw.pad_after))
        area, cut_area = ch.size * cw.size, (h1 - h0) * (w1 - w0)
        key = (area, padded, cut_area) if policy == "tight" else (padded, area, cut_area)
        if best is None or key < best[0]:
            best = (key, (h0, h1, w0, w1), same, ch, cw)
    return None if best is None else best[1:]


def _intersect(a: Box, b: Box) -> Box:
    return (max(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), min(a[3], b[3]))


def _covers(outer: Box, inner: Box) -> bool:
    return outer[0] <= inner[0] and outer[1] >= inner[1] and outer[2] <= inner[2] and outer[3] >= inner[3]


def _plan_patch(prog: PatchProgram, r: int, c: int, exit_box: Box, readers: Dict[int, int]) -> int:
    """Append the operators of patch (r, c) (exit pixels ``exit_box``) to ``prog``;
    return the tensor holding its exit pixels."""
    model, stage, policy = prog.model, prog.stage, prog.policy
    sg = model.main
    in_shape = sg.tensors[stage.input].shape
    whole_input = _PatchTensor(stage.input, (0, in_shape[1], 0, in_shape[2]), (0, in_shape[1], 0, in_shape[2]))
    tag = f"patch_r{r}c{c}"
    need = needed_boxes(model, stage, exit_box)
    ops_before = len(prog.ops)
    pads = crops = 0
    tensors: Dict[int, _PatchTensor] = {}

    def source(t: int) -> _PatchTensor:
        """A patch tensor; the stage input's default slice is made on first use."""
        nonlocal crops
        if t not in tensors:
            tensors[t] = prog.crop(whole_input, need[t], f"{sg.tensors[t].name}/{tag}")
            crops += tensors[t] is not whole_input
        return tensors[t]

    for op in stage.ops:
        src_op = sg.operators[op.index]
        out_spec = sg.tensors[op.output]
        out_name = f"{out_spec.name}/{tag}"
        batch, channels = out_spec.shape[0], out_spec.shape[3]
        if op.kind == "window":
            t_in = src_op.inputs[0]
            pol = _op_policy(policy, op.index, r, c)
            cut = pol.endswith("-cut")
            pol = pol[:-4] if cut else pol
            if cut and t_in == stage.input and readers[t_in] == 1:
                # the only reader of the stage input: its slice is cut to suit it
                src, chosen = whole_input, _choose(op, whole_input, need[t_in], need[op.output],
                                                   pol, cut=True)
            else:
                src = source(t_in)
                chosen = _choose(op, src, need[t_in], need[op.output], pol, cut=cut)
                if chosen is None:
                    # a SLICE of its input that lines up (of the whole stage input if that is it)
                    if t_in == stage.input:
                        src = whole_input
                    chosen = _choose(op, src, need[t_in], need[op.output], pol, cut=True)
            if chosen is None:
                raise PatchError(
                    f"operator #{op.index} ({op.name}): no patch copy computes output pixels "
                    f"{need[op.output]} exactly in patch ({r}, {c})"
                    + ("; it divides by the number of pixels inside the image, so it cannot "
                       "be padded explicitly, and TFLM's SAME arithmetic on this patch does not "
                       "put the padding on the image border" if op.fill is None else ""))
            box, same, ch, cw = chosen
            if box != src.box:
                src = prog.crop(src, box, f"{out_name}/input" if src is whole_input
                                else f"{out_name}/crop_in")
                crops += 1
            x = src.index
            explicit = (ch.pad_before, ch.pad_after, cw.pad_before, cw.pad_after)
            if any(explicit):
                x = prog.pad(src, explicit, op.fill, f"{out_name}/pad_in")
                pads += 1
            out = prog.like(op.output, out_name, (batch, ch.size, cw.size, channels))
            inputs = list(src_op.inputs)
            inputs[0] = x
            prog.ops.append(_NewOp(op.name, tuple(inputs), (out,), copy_of=op.index,
                                   options={"padding": _SCHEMA_SAME if same else _SCHEMA_VALID}))
            prog.patched_macs += batch * ch.size * cw.size * channels * op.macs_per_pixel
            tensors[op.output] = _PatchTensor(out, (ch.out0, ch.out1, cw.out0, cw.out1),
                                              (ch.exact0, ch.exact1, cw.exact0, cw.exact1))
        elif op.kind == "pad":
            tensors[op.output], wrote = _plan_pad_copy(prog, op, source(src_op.inputs[0]),
                                                       need[op.output], out_name, (r, c))
            pads += wrote
        else:
            srcs = [source(src_op.inputs[pos]) for pos in op.activations]
            common = srcs[0].box
            for s in srcs[1:]:
                common = _intersect(common, s.box)
            inputs = list(src_op.inputs)
            exact = common
            for pos, s in zip(op.activations, srcs):
                if s.box != common:
                    s = prog.crop(s, common, f"{out_name}/crop_in{pos}")
                    crops += 1
                inputs[pos] = s.index
                exact = _intersect(exact, s.exact)
            out = prog.like(op.output, out_name,
                            (batch, common[1] - common[0], common[3] - common[2], channels))
            prog.ops.append(_NewOp(op.name, tuple(inputs), (out,), copy_of=op.index))
            tensors[op.output] = _PatchTensor(out, common, exact)
        needed = need.get(op.output)
        if needed is not None and not _covers(tensors[op.output].exact, needed):
            raise PatchError(f"internal: operator #{op.index} in patch ({r}, {c}) computes exact "
                             f"pixels {tensors[op.output].exact}, not the needed {needed}")
    result = tensors[stage.exit]
    if result.box != exit_box:
        result = prog.crop(result, exit_box, f"{sg.tensors[stage.exit].name}/{tag}/crop")
        crops += 1
    prog.patches.append(PatchReport(r, c, exit_box, len(prog.ops) - ops_before, pads, crops, ops_before))
    return result.index


def _stage_readers(model: Model, stage: Stage) -> Dict[int, int]:
    readers: Dict[int, int] = {}
    for op in stage.ops:
        for pos in op.activations:
            t = model.main.operators[op.index].inputs[pos]
            readers[t] = readers.get(t, 0) + 1
    return readers


def plan_rewrite(model: Model, stage: Union[Stage, Tuple[int, int]],
                 grid: Optional[Tuple[int, int]] = None, policy: Union[str, Dict[int, str]] = "tight",
                 splits: Optional[Tuple[Sequence[Tuple[int, int]], Sequence[Tuple[int, int]]]] = None,
                 base: int = -1, hoist: int = -1) -> PatchProgram:
    """Plan the rewrite of ``stage`` into ``grid`` = (rows, columns) patches of its exit
    tensor (near-equal cuts), or the exit ``splits`` (row ranges, column ranges).
    ``policy``: "tight", "nopad" (see :func:`_choose`) or one per operator index.
    ``base``: index of its first new tensor (default: after the model's tensors; use
    :func:`slot_base` when several stages are rewritten together). ``hoist``: see
    :func:`hoisted`.
    Raises :class:`PatchError` when it cannot be exact."""
    if not isinstance(stage, Stage):
        stage = analyse_stage(model, *stage)
    sg = model.main
    exit_shape = sg.tensors[stage.exit].shape
    if splits is None:
        if grid is None:
            raise InputError("give a grid or splits")
        rows, cols = int(grid[0]), int(grid[1])
        row_ranges, col_ranges = split_axis(exit_shape[1], rows), split_axis(exit_shape[2], cols)
    else:
        row_ranges, col_ranges = [tuple(r) for r in splits[0]], [tuple(c) for c in splits[1]]
        for ranges, size, what in ((row_ranges, exit_shape[1], "row"), (col_ranges, exit_shape[2], "column")):
            ends = [0] + [r[1] for r in ranges]
            if not ranges or any(r[0] != e for r, e in zip(ranges, ends)) or ends[-1] != size or \
                    any(r[1] <= r[0] for r in ranges):
                raise PatchError(f"{what} ranges {ranges} do not cut [0, {size}) in order")
    for p in ([policy] if isinstance(policy, str) else list(policy.values())):
        if p not in POLICIES:
            raise InputError(f"policy must be one of {POLICIES}, not {p!r}")
    rows, cols = len(row_ranges), len(col_ranges)
    if rows * cols == 1:
        raise PatchError("a 1x1 grid is the original stage")
    prog = PatchProgram(model, stage, list(row_ranges), list(col_ranges), policy, base=base)
    readers = _stage_readers(model, stage)
    row_outputs: List[int] = []
    for r, (h0, h1) in enumerate(row_ranges):
        row_tensors = []
        for c, (w0, w1) in enumerate(col_ranges):
            row_tensors.append(_plan_patch(prog, r, c, (h0, h1, w0, w1), readers))
        if cols > 1:
            target = stage.exit if rows == 1 else prog.like(
                stage.exit, f"{sg.tensors[stage.exit].name}/row{r}",
                (exit_shape[0], h1 - h0, exit_shape[2], exit_shape[3]))
            prog.concat(row_tensors, target, axis=2)
            row_outputs.append(target)
        else:
            row_outputs.extend(row_tensors)
    if rows > 1:
        prog.concat(row_outputs, stage.exit, axis=1)
    return hoisted(prog, hoist) if hoist >= 0 else prog


def hoisted(prog: PatchProgram, k: int) -> PatchProgram:
    """The program with the SLICEs of the stage input of patches k, k+1, ... moved to
    just before patch k runs: the stage input then dies there, and while patch k and the
    later ones run only their slices stay alive (worth it when those are smaller than
    the input). k = -1 (or the last patch): each patch slices as it starts."""
    import copy
    n_patches = len(prog.patches)
    if k < 0 or k >= n_patches - 1:
        out = copy.copy(prog)
        out.hoist = -1
        return out
    input_slices = {j for j, op in enumerate(prog.ops)
                    if op.name == "SLICE" and op.inputs[0] == prog.stage.input}
    reports = sorted(prog.patches, key=lambda r: r.first_op)
    moved = [j for r in reports[k:] for j in range(r.first_op, r.first_op + r.operators)
             if j in input_slices]
    order, new_reports = [], []
    for idx, r in enumerate(reports):
        first = len(order)
        if idx == k:
            order += moved
        order += [j for j in range(r.first_op, r.first_op + r.operators) if j not in moved]
        gap_end = reports[idx + 1].first_op if idx + 1 < len(reports) else len(prog.ops)
        new_reports.append(PatchReport(r.row, r.col, r.exit_box, len(order) - first, r.pads, r.crops, first))
        order += list(range(r.first_op + r.operators, gap_end))   # row concatenations
    out = copy.copy(prog)
    out.ops = [prog.ops[j] for j in order]
    out.patches = new_reports
    out.hoist = k
    return out


def _plan_pad_copy(prog: PatchProgram, op: StageOp, src: _PatchTensor, need_out: Box, name: str,
                   where: Tuple[int, int]) -> Tuple[_PatchTensor, bool]:
    """A graph PAD / PADV2 in a patch: the padding that falls inside the patch, written
    by a copy of the operator (or nothing, when none does and the types match)."""
    sg = prog.model.main
    box, exact, explicit = [], [], []
    for axis, g in enumerate(op.geometry):
        a, b = src.box[2 * axis], src.box[2 * axis + 1]
        xa, xb = src.exact[2 * axis], src.exact[2 * axis + 1]
        n0, n1 = need_out[2 * axis], need_out[2 * axis + 1]
        eb = max(0, g.pad_before - n0) if a == 0 else 0
        ea = max(0, n1 - (g.in_size + g.pad_before)) if b == g.in_size else 0
        o0, o1 = a + g.pad_before - eb, b + g.pad_before + ea
        e0 = o0 if xa == 0 else xa + g.pad_before
        e1 = o1 if xb == g.in_size else xb + g.pad_before
        if not (o0 <= n0 and o1 >= n1 and e0 <= n0 and e1 >= n1):
            raise PatchError(f"operator #{op.index} ({op.name}): patch {where} does not cover the "
                             f"pixels it needs")
        box += [o0, o1]
        exact += [e0, e1]
        explicit += [eb, ea]
    src_spec = sg.tensors[prog.proto(src.index)]
    out_spec = sg.tensors[op.output]
    same_quant = (src_spec.type == out_spec.type and _quant_key(src_spec.quantization) ==
                  _quant_key(out_spec.quantization))
    if not any(explicit) and same_quant:
        # no padding inside this patch: the operator would only copy, so it is left out
        return _PatchTensor(src.index, tuple(box), tuple(exact)), False
    src_op = sg.operators[op.index]
    out = prog.like(op.output, name, (out_spec.shape[0], box[1] - box[0], box[3] - box[2], out_spec.shape[3]))
    paddings = prog.const("patch/paddings", np.array([[0, 0], explicit[0:2], explicit[2:4], [0, 0]], np.int32),
                          schema.TensorType.INT32)
    inputs = list(src_op.inputs)
    inputs[0], inputs[1] = src.index, paddings
    prog.ops.append(_NewOp(op.name, tuple(inputs), (out,), copy_of=op.index))
    return _PatchTensor(out, tuple(box), tuple(exact)), True


def _quant_key(q) -> Optional[Tuple]:
    if q is None:
        return None
    return (np.asarray(q.scales, np.float32).tobytes(), np.asarray(q.zero_points, np.int64).tobytes(),
            int(q.quantized_dimension))


def model_macs(model: Model) -> int:
    """Multiply-accumulates of the main subgraph per invoke (as ``micro-runtime info``
    counts them)."""
    from .info import operator_macs
    sg = model.main
    return sum(operator_macs(sg, op) or 0 for op in sg.operators)


# ------------------------------------------------------------------- write
#: spacing of the new tensor indices of rewrites planned to be combined
_SLOT_STRIDE = 1 << 20


def slot_base(model: Model, slot: int) -> int:
    """The first new tensor index of the ``slot``-th of several combined rewrites."""
    return len(model.main.tensors) + slot * _SLOT_STRIDE


def _as_list_unchecked(programs) -> List[PatchProgram]:
    return [programs] if isinstance(programs, PatchProgram) else list(programs)


def _as_list(programs) -> List[PatchProgram]:
    programs = _as_list_unchecked(programs)
    if not programs:
        raise InputError("no rewrite given")
    model = programs[0].model
    expected = len(model.main.tensors)
    last_end = -1
    for p in sorted(programs, key=lambda p: p.stage.start):
        if p.model is not model:
            raise InputError("rewrites of different models cannot be combined")
        if p.stage.start <= last_end:
            raise InputError("the stages of combined rewrites overlap")
        last_end = p.stage.end
    expected = len(model.main.tensors)
    for p in sorted(programs, key=lambda p: p.base):
        if p.base < expected:
            raise InputError("combined rewrites need disjoint new tensor indices (see slot_base)")
        expected = p.end
    return programs


def _op_sequence(programs: List[PatchProgram]):
    """(inputs, outputs, copy_of / original index, new op or None) of the rewritten main
    subgraph, in execution order."""
    sg = programs[0].model.main
    by_start = {p.stage.start: p for p in programs}
    i = 0
    while i < len(sg.operators):
        p = by_start.get(i)
        if p is None:
            op = sg.operators[i]
            yield op.inputs, op.outputs, i, None
            i += 1
        else:
            for op in p.ops:
                yield op.inputs, op.outputs, op.copy_of, op
            i = p.stage.end + 1


def build_model(programs: Union[PatchProgram, Sequence[PatchProgram]]) -> bytes:
    """The rewritten model as .tflite bytes, without an offline memory plan; tensors no
    operator uses any more are removed. Several programs (disjoint stages, consecutive
    tensor bases) are written together."""
    programs = _as_list(programs)
    model = programs[0].model
    if model.has_compression():
        raise PatchError(COMPRESSED_REFUSAL)
    builder = ModelBuilder.from_model(model)
    builder.metadata = [(name, index) for name, index in builder.metadata
                        if name != OFFLINE_MEMORY_ALLOCATION]
    g = builder.subgraphs[0]
    index: Dict[int, int] = {}
    for prog in programs:
        for k, t in enumerate(prog.tensors):
            index[prog.base + k] = len(g.tensors)
            if t.data is not None:
                quant = g.tensors[t.proto].quantization if t.proto >= 0 else None
                g.tensors.append(_Tensor(t.name, t.shape, t.ttype, builder.add_buffer(t.data.tobytes()),
                                         quant))
            else:
                proto = g.tensors[t.proto]
                g.tensors.append(_Tensor(t.name, t.shape, proto.type, builder.empty_buffer(),
                                         proto.quantization))
    from ..builtin_options import BUILTIN_DATA

    def m(ts):
        return tuple(index.get(t, t) for t in ts)

    original = list(g.operators)
    operators = []
    for _, _, op_index, new in _op_sequence(programs):
        if new is None:
            operators.append(original[op_index])
        elif new.copy_of is not None:
            src = original[new.copy_of]
            options = dict(src.options)
            options.update(new.options)
            operators.append(_Operator(src.opcode_index, m(new.inputs), m(new.outputs), src.intermediates,
                                       src.options_name, options, src.custom_options))
        else:
            opcode = builder.opcode(schema.BUILTIN_OP_CODES[new.name], None, 1)
            options_name = BUILTIN_DATA.get(new.name, (None, None))[0] if new.options else None
            operators.append(_Operator(opcode, m(new.inputs), m(new.outputs), (), options_name,
                                       dict(new.options), None))
    g.operators = operators
    _drop_unused_tensors(g)
    return builder.build()


def _drop_unused_tensors(g) -> None:
    """Remove tensors no operator or subgraph input/output refers to (TFLM allocates a
    TfLiteEvalTensor for every tensor of a subgraph), renumbering the rest."""
    used = set(g.inputs) | set(g.outputs)
    for op in g.operators:
        used.update(t for t in op.inputs + op.outputs + op.intermediates if t >= 0)
    keep = [i for i in range(len(g.tensors)) if i in used]
    remap = {old: new for new, old in enumerate(keep)}
    g.tensors = [g.tensors[i] for i in keep]

    def m(ts):
        return tuple(remap[t] if t >= 0 else t for t in ts)

    for op in g.operators:
        op.inputs, op.outputs, op.intermediates = m(op.inputs), m(op.outputs), m(op.intermediates)
    g.inputs, g.outputs = list(m(g.inputs)), list(m(g.outputs))


def rewrite_stage(model: Union[Model, bytes, str], stage: Union[Stage, Tuple[int, int]],
                  grid: Optional[Tuple[int, int]] = None, policy: Union[str, Dict[int, str]] = "tight",
                  splits=None) -> Tuple[bytes, PatchProgram]:
    """Plan and write the rewrite of one stage (see :func:`plan_rewrite`): (model bytes,
    program)."""
    model = model if isinstance(model, Model) else load_model(model)
    prog = plan_rewrite(model, stage, grid, policy, splits)
    return build_model(prog), prog


# ---------------------------------------------------------------- estimate
@dataclass
class ModelProfile:
    """What a model costs on a target, per operator, from one allocation by our
    interpreter: the basis of :func:`estimate`. Bytes."""

    model: Model
    target: Target
    tail_bytes: int
    op_tail_bytes: List[int]           #: NodeAndRegistration + options + OpData of each operator
    op_scratch: List[List[int]]        #: scratch buffers (planned sizes) of each operator
    new_op_tail_bytes: Dict[str, int]  #: the same for the operators the rewrite adds
    tensor_bytes: Dict[int, int] = field(default_factory=dict)  #: planned size of each arena tensor
    used_tensors: int = 0              #: tensors the main subgraph refers to

    def __post_init__(self):
        sg = self.model.main
        self.tensor_bytes = {t: _align(_tensor_nbytes(s.shape, s.type), 16) for t, s in enumerate(sg.tensors)
                             if not s.is_constant and not s.is_variable}
        used = set(sg.inputs) | set(sg.outputs)
        for op in sg.operators:
            used.update(t for t in op.inputs + op.outputs if t >= 0)
        self.used_tensors = len(used)

    @classmethod
    def measure(cls, model: Model, target: Union[str, Target],
                op_resolver: Optional[OpResolver] = None) -> "ModelProfile":
        from .optimizer import _run
        target = get_target(target)
        it = _run(model, target, op_resolver)
        node = target.sizeof("NodeAndRegistration")
        nodes = it.subgraphs[0].nodes
        costs = [node + n.tail_bytes["builtin_data"] + n.tail_bytes["persistent"] for n in nodes]
        scratch: List[List[int]] = [[] for _ in nodes]
        for pb in it.allocator.plan:
            if pb.kind == "scratch":
                req = it.allocator.scratch_requests[pb.index]
                if req.subgraph_idx == 0:
                    scratch[req.node_idx].append(pb.size)

        def persistent(struct):
            return _align(target.sizeof(struct), 16)

        new = {"SLICE": node,
               "PAD": node + persistent("pad.OpData"),
               "PADV2": node + persistent("pad.OpData"),
               "CONCATENATION": node + _align(target.sizeof("TfLiteConcatenationParams"), 16)
               + persistent("concatenation.OpData")}
        return cls(model, target, it.arena.persistent_used_bytes, costs, scratch, new)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _tensor_nbytes(shape, ttype) -> int:
    return math.prod(int(d) for d in shape) * schema.TYPE_SIZES.get(ttype, 1)


@dataclass
class Estimate:
    """Predicted figures of a rewrite (bytes): the tail, and the live-memory lower bound
    of the head, which the offline-plan optimizer usually reaches. ``live`` is the live
    memory at each step; ``regions`` the steps [first, last] of each rewritten stage."""

    tail_bytes: int
    head_bound_bytes: int
    live: np.ndarray = field(repr=False, default=None)
    regions: List[Tuple[int, int]] = field(default_factory=list)

    @property
    def min_arena_bytes(self) -> int:
        return self.tail_bytes + self.head_bound_bytes

    def region_peak(self, k: int = 0) -> int:
        first, last = self.regions[k]
        return int(self.live[first:last + 1].max())


def live_by_step(model: Model, op_seq: Sequence[Tuple[Sequence[int], Sequence[int], Sequence[int]]],
                 sizes: Dict[int, int]) -> np.ndarray:
    """Planned bytes alive at each step (index 0: before the first operator, step k:
    while operator k-1 runs) when the main subgraph runs ``op_seq`` = [(inputs,
    outputs, scratch sizes)], with TFLM's lifetime rules (model inputs from the start,
    model outputs to the end)."""
    sg = model.main
    first: Dict[int, int] = {t: 0 for t in sg.inputs}
    last: Dict[int, int] = {t: 0 for t in sg.inputs}
    steps = len(op_seq)
    live = np.zeros(steps + 2, dtype=np.int64)
    for step, (ins, outs, scratch) in enumerate(op_seq, start=1):
        for t in outs:
            first.setdefault(t, step)
        for t in list(ins) + list(outs):
            if t in sizes:
                last[t] = step
        for s in scratch:
            live[step] += s
            live[step + 1] -= s
    for t in sg.outputs:
        first.setdefault(t, steps)
        last[t] = steps
    for t, size in sizes.items():
        if t in first:
            live[first[t]] += size
            live[last.get(t, first[t]) + 1] -= size
    return np.cumsum(live)[:steps + 1]


def estimate(programs: Union[PatchProgram, Sequence[PatchProgram]], profile: ModelProfile) -> Estimate:
    """Predicted tail and head bound of the rewritten model, without writing it."""
    programs = _as_list(programs)
    model = programs[0].model
    sg = model.main
    n = len(sg.tensors)
    new_tensors: Dict[int, _NewTensor] = {}
    for p in programs:
        new_tensors.update({p.base + k: t for k, t in enumerate(p.tensors)})
    tail = profile.tail_bytes
    used_after = set(sg.inputs) | set(sg.outputs)
    seq, regions, step = [], [], 0
    by_start = {p.stage.start: p for p in programs}
    for inputs, outputs, index, new in _op_sequence(programs):
        step += 1
        used_after.update(t for t in inputs + outputs if t >= 0)
        if new is None:
            seq.append((inputs, outputs, profile.op_scratch[index]))
            continue
        tail += (profile.op_tail_bytes[new.copy_of] if new.copy_of is not None
                 else profile.new_op_tail_bytes[new.name])
        seq.append((inputs, outputs, profile.op_scratch[new.copy_of] if new.copy_of is not None else []))
    for p in programs:
        tail -= sum(profile.op_tail_bytes[i] for i in range(p.stage.start, p.stage.end + 1))
    tail += (len(used_after) - profile.used_tensors) * profile.target.sizeof("TfLiteEvalTensor")
    sizes: Dict[int, int] = {}
    for t in used_after:
        if t < n:
            if t in profile.tensor_bytes:
                sizes[t] = profile.tensor_bytes[t]
        elif new_tensors[t].data is None:
            nt = new_tensors[t]
            sizes[t] = _align(_tensor_nbytes(nt.shape, sg.tensors[nt.proto].type), 16)
    live = live_by_step(model, seq, sizes)
    # steps of each rewritten stage
    offset = 0
    for p in sorted(programs, key=lambda p: p.stage.start):
        first = p.stage.start + offset + 1
        regions.append((first, first + len(p.ops) - 1))
        offset += len(p.ops) - (p.stage.end - p.stage.start + 1)
    order = sorted(range(len(programs)), key=lambda k: programs[k].stage.start)
    regions = [regions[order.index(k)] for k in range(len(programs))]
    return Estimate(tail, int(live.max()) if len(live) else 0, live, regions)


# ------------------------------------------------------------------ search
@dataclass
class Candidate:
    """One rewrite the search considered (one or several stages): the programs, the
    estimate and, for the few measured, the minimum arena and head after the
    offline-plan optimizer (bytes)."""

    programs: List[PatchProgram]
    estimate: Estimate
    model: Optional[bytes] = None
    min_arena_bytes: Optional[int] = None
    head_bytes: Optional[int] = None

    def describe(self) -> str:
        return "; ".join(p.describe() for p in self.programs)


def _grids(exit_shape, max_patches: int, max_side: int) -> List[Tuple[int, int]]:
    out = []
    for r in range(1, min(exit_shape[1], max_side) + 1):
        for c in range(1, min(exit_shape[2], max_side) + 1):
            if 1 < r * c <= max_patches:
                out.append((r, c))
    return sorted(out, key=lambda g: (g[0] * g[1], g))


def _replan(programs: List[PatchProgram], k: int, policy=None, splits=None,
            hoist: Optional[int] = None) -> Optional[List[PatchProgram]]:
    """The programs with the k-th re-planned (other policy / cuts / hoist)."""
    p = programs[k]
    try:
        q = plan_rewrite(p.model, p.stage, None, p.policy if policy is None else policy,
                         (p.row_ranges, p.col_ranges) if splits is None else splits, base=p.base,
                         hoist=p.hoist if hoist is None else hoist)
    except PatchError:
        return None
    return programs[:k] + [q] + programs[k + 1:]


def _policy_moves(prog: PatchProgram, patch: Optional[Tuple[int, int]] = None):
    """Policies differing from ``prog``'s in one window operator: in one ``patch``
    (row, col) if given, else in all patches."""
    windows = [op.index for op in prog.stage.ops if op.kind == "window"]
    base = dict(prog.policy) if isinstance(prog.policy, dict) else {i: prog.policy for i in windows}
    for index in windows:
        current = _op_policy(base, index, *(patch or (-1, -1)))
        for p in POLICIES:
            if p == current:
                continue
            if patch is None:
                moved = {k: v for k, v in base.items() if not (isinstance(k, tuple) and k[0] == index)}
                moved[index] = p
            else:
                moved = dict(base)
                moved[(index,) + tuple(patch)] = p
            yield moved


def _boundary_moves(prog: PatchProgram, patch: Optional[Tuple[int, int]] = None):
    """Cuts moved by 1 or 2 pixels (only the cuts next to ``patch`` if given)."""
    for axis in (0, 1):
        ranges = prog.row_ranges if axis == 0 else prog.col_ranges
        for j in range(len(ranges) - 1):
            if patch is not None and patch[axis] not in (j, j + 1):
                continue
            for delta in (-1, 1, -2, 2):
                cut = ranges[j][1] + delta
                if ranges[j][0] < cut < ranges[j + 1][1]:
                    new = list(ranges)
                    new[j], new[j + 1] = (ranges[j][0], cut), (cut, ranges[j + 1][1])
                    yield (new, prog.col_ranges) if axis == 0 else (prog.row_ranges, new)


def _peak_patch(cand: Candidate) -> Optional[Tuple[int, Tuple[int, int]]]:
    """(program, (row, col)) of the patch running when live memory peaks, if any."""
    est = cand.estimate
    step = int(np.argmax(est.live))
    for k, (first, last) in enumerate(est.regions):
        if first <= step <= last:
            j = step - first
            for p in cand.programs[k].patches:
                if p.first_op <= j < p.first_op + p.operators:
                    return k, (p.row, p.col)
            return k, None
    return None


def _local_live(ops: Sequence[_NewOp], sizes: Dict[int, int], stage_input: int, input_bytes: int,
                input_dies: bool) -> np.ndarray:
    """Bytes alive at each of ``ops`` counting only the tensors they produce (alive until
    their last reader among ``ops``, or to the end when none reads them) and the stage
    input (alive throughout, or until its last reader when it ``input_dies`` here)."""
    steps = len(ops)
    first: Dict[int, int] = {}
    last_use: Dict[int, int] = {}
    input_last = 0
    for j, op in enumerate(ops):
        for t in op.outputs:
            first.setdefault(t, j)
        for t in op.inputs:
            if t in first:
                last_use[t] = j
            if t == stage_input:
                input_last = j
    live = np.zeros(steps + 1, dtype=np.int64)
    for t, j in first.items():
        live[j] += sizes.get(t, 0)
        live[last_use.get(t, steps - 1) + 1] -= sizes.get(t, 0)
    live = np.cumsum(live)[:steps]
    live[:(input_last + 1) if input_dies else steps] += input_bytes
    return live


def _new_tensor_sizes(prog: PatchProgram) -> Dict[int, int]:
    sg = prog.model.main
    return {prog.base + k: _align(_tensor_nbytes(t.shape, sg.tensors[t.proto].type), 16)
            for k, t in enumerate(prog.tensors) if t.data is None}


def _patch_options(prog: PatchProgram, r: int, c: int, readers: Dict[int, int], profile: ModelProfile,
                   assignments: Sequence[Dict[int, str]], input_dies: bool):
    """For each policy assignment (window operator index -> policy) of patch (r, c),
    planned alone: (local peak bytes, tail bytes, assignment) -- see :func:`_local_live`."""
    model, stage = prog.model, prog.stage
    exit_box = (prog.row_ranges[r][0], prog.row_ranges[r][1], prog.col_ranges[c][0], prog.col_ranges[c][1])
    input_bytes = profile.tensor_bytes.get(stage.input, 0)
    eval_bytes = profile.target.sizeof("TfLiteEvalTensor")
    out = []
    for assignment in assignments:
        tmp = PatchProgram(model, stage, prog.row_ranges, prog.col_ranges, assignment, base=prog.base)
        try:
            _plan_patch(tmp, r, c, exit_box, readers)
        except PatchError:
            continue
        tail = sum(profile.op_tail_bytes[op.copy_of] if op.copy_of is not None
                   else profile.new_op_tail_bytes[op.name] for op in tmp.ops)
        tail += len(tmp.tensors) * eval_bytes
        live = _local_live(tmp.ops, _new_tensor_sizes(tmp), stage.input, input_bytes, input_dies)
        out.append((int(live.max()), tail, assignment))
    return out


def _assignments(prog: PatchProgram, limit: int = 256) -> List[Dict[int, str]]:
    windows = [op.index for op in prog.stage.ops if op.kind == "window"]
    for choices in (POLICIES, SEARCH_POLICIES):
        if len(choices) ** len(windows) <= limit:
            return [dict(zip(windows, combo)) for combo in itertools.product(choices, repeat=len(windows))]
    return [{i: p for i in windows} for p in POLICIES]


def _tune_patches(cand: Candidate, profile: ModelProfile) -> Candidate:
    """Choose each patch's policies on its own: every assignment of policies to the
    window operators is planned per patch, giving its local peak and tail; then for a
    head budget H each patch takes its smallest-tail assignment whose local peak plus
    its background (what else is alive meanwhile, taken from the current estimate) fits
    in H, and H is chosen to minimise tail + max(H, the peak outside the stage)."""
    best = cand
    for k in range(len(cand.programs)):
        prog = best.programs[k]
        readers = _stage_readers(prog.model, prog.stage)
        assignments = _assignments(prog)
        est = best.estimate
        first_step = est.regions[k][0]
        patch_steps = np.zeros(len(est.live), dtype=bool)
        per_patch = []
        n_patches = len(prog.patches)
        sizes = _new_tensor_sizes(prog)
        input_bytes = profile.tensor_bytes.get(prog.stage.input, 0)
        for idx, report in enumerate(sorted(prog.patches, key=lambda r: r.first_op)):
            # the stage input dies in the last patch, or where the later patches' slices
            # are hoisted to (it is not alive at all after that)
            dies = idx == (n_patches - 1 if prog.hoist < 0 else prog.hoist)
            gone = prog.hoist >= 0 and idx > prog.hoist
            ops = prog.ops[report.first_op:report.first_op + report.operators]
            current = _local_live(ops, sizes, prog.stage.input, 0 if gone else input_bytes, dies)
            s0 = first_step + report.first_op
            span = slice(s0, s0 + report.operators)
            patch_steps[span] = True
            background = int((est.live[span] - current).max())
            options = _patch_options(prog, report.row, report.col, readers, profile, assignments,
                                     dies or gone)
            pareto, best_tail = [], None
            for peak, tail, assignment in sorted(options, key=lambda o: (o[0], o[1])):
                if best_tail is None or tail < best_tail:
                    pareto.append((peak + background, tail, assignment))
                    best_tail = tail
            per_patch.append((report, pareto))
        outside = int(est.live[~patch_steps].max()) if (~patch_steps).any() else 0
        budgets = sorted({peak for _, pareto in per_patch for peak, _, _ in pareto})
        choice, choice_value = None, None
        for H in budgets:
            total, picks = 0, []
            for report, pareto in per_patch:
                fitting = [o for o in pareto if o[0] <= H]
                if not fitting:
                    break
                pick = min(fitting, key=lambda o: o[1])
                total += pick[1]
                picks.append((report, pick[2]))
            else:
                value = total + max(H, outside)
                if choice_value is None or value < choice_value:
                    choice, choice_value = picks, value
        if choice is None:
            continue
        policy: Dict = {}
        for report, assignment in choice:
            for index, p in assignment.items():
                policy[(index, report.row, report.col)] = p
        programs = _replan(best.programs, k, policy)
        if programs is None:
            continue
        tuned = estimate(programs, profile)
        if tuned.min_arena_bytes < best.estimate.min_arena_bytes:
            best = Candidate(programs, tuned)
    return best


def plan_offline(model, target, op_resolver: Optional[OpResolver] = None, budget_s: float = 5.0,
                 recording: bool = True, attempts: int = 3):
    """The offline-plan optimizer on ``model``; its search is randomised and
    time-bounded, so while the head stays above the live-memory bound it is run again
    with another seed (up to ``attempts`` times) and the best result is kept."""
    from .optimizer import optimize_model
    best = None
    for seed in range(attempts):
        result = optimize_model(model, target, op_resolver, budget_s=budget_s, seed=seed, recording=recording)
        if best is None or result.optimized_min_arena_bytes < best.optimized_min_arena_bytes:
            best = result
        if best.optimized_head_bytes <= best.lower_bound_bytes:
            break
    return best


class _Budget:
    """How many more estimates a search step may make (deterministic), with a time
    limit as a safety net (``time.perf_counter()`` deadline)."""

    def __init__(self, estimates: int, seconds: float):
        self.left = estimates
        self.deadline = time.perf_counter() + seconds
        self.used = 0

    def spend(self) -> bool:
        if self.left <= 0 or time.perf_counter() > self.deadline:
            return False
        self.left -= 1
        self.used += 1
        return True


def _refine(cand: Candidate, profile: ModelProfile, budget: _Budget) -> Candidate:
    """Descent on the estimate until nothing improves or the ``budget`` is spent. Moves: first those touching the patch where live memory
    peaks (a window operator's policy in that patch, the cuts next to it), then every
    stage's hoist point (:func:`hoisted`), cuts and per-operator policies, then each
    operator's policy in each patch; the first move that lowers the estimated minimum
    arena is kept."""
    best = cand

    def moves():
        peak = _peak_patch(best)
        if peak is not None and peak[1] is not None:
            k, patch = peak
            for policy in _policy_moves(best.programs[k], patch):
                yield k, policy, None, None
            for splits in _boundary_moves(best.programs[k], patch):
                yield k, None, splits, None
        for k, prog in enumerate(best.programs):
            for hoist in range(-1, len(prog.patches) - 1):
                if hoist != prog.hoist:
                    yield k, None, None, hoist
            for splits in _boundary_moves(prog):
                yield k, None, splits, None
            for policy in _policy_moves(prog):
                yield k, policy, None, None
        for k, prog in enumerate(best.programs):
            for patch in itertools.product(range(len(prog.row_ranges)), range(len(prog.col_ranges))):
                for policy in _policy_moves(prog, patch):
                    yield k, policy, None, None

    improved = True
    while improved:
        improved = False
        for k, policy, splits, hoist in moves():
            if not budget.spend():
                return best
            programs = _replan(best.programs, k, policy, splits, hoist)
            if programs is None:
                continue
            est = estimate(programs, profile)
            if est.min_arena_bytes < best.estimate.min_arena_bytes:
                best, improved = Candidate(programs, est), True
                break
    return best


def _plausible(model: Model, stage: Stage, valid: Dict[Tuple[int, int], Stage]) -> bool:
    """A stage is worth trying unless one operator more at either end gives a strictly
    smaller input / exit tensor (the extended stage is then at least as good)."""
    sg = model.main

    def nbytes(t):
        return _tensor_nbytes(sg.tensors[t].shape, sg.tensors[t].type)

    longer = valid.get((stage.start, stage.end + 1))
    if longer is not None and nbytes(longer.exit) < nbytes(stage.exit):
        return False
    earlier = valid.get((stage.start - 1, stage.end))
    if earlier is not None and nbytes(earlier.input) < nbytes(stage.input):
        return False
    return True


def _cover_sets(singles: List[Candidate], live: np.ndarray, base_tail: int, n_ops: int,
                max_stages: int, keep: int) -> List[Tuple[int, List[Candidate]]]:
    """Sets of disjoint single-stage rewrites, chosen by a separable estimate: for a head
    budget T every operator whose live memory exceeds T must lie in a chosen stage whose
    own peak is at most T; the tail grows by the sum of the stages' tail growth. A
    dynamic programme over operator positions per T; returns (estimate, set), best first."""
    op_live = [int(live[i + 1]) for i in range(n_ops)]
    # per stage, only the rewrites no other beats on both own peak and tail growth
    by_interval: Dict[Tuple[int, int], List] = {}
    for c in singles:
        st = c.programs[0].stage
        by_interval.setdefault((st.start, st.end), []).append(
            (c.estimate.region_peak(0), c.estimate.tail_bytes - base_tail, c))
    own = []
    for (s, e), entries in by_interval.items():
        entries.sort(key=lambda x: (x[0], x[1]))
        best_tail = None
        for peak, dtail, c in entries:
            if best_tail is None or dtail < best_tail:
                own.append((s, e, peak, dtail, c))
                best_tail = dtail
    thresholds = sorted({o[2] for o in own})
    results: Dict[Tuple, Tuple[int, List[Candidate]]] = {}
    inf = float("inf")
    for T in thresholds:
        best_for: Dict[Tuple[int, int], Tuple[int, Candidate]] = {}
        for s, e, peak, dtail, c in own:
            if peak <= T and ((s, e) not in best_for or dtail < best_for[(s, e)][0]):
                best_for[(s, e)] = (dtail, c)
        by_start: Dict[int, List[Tuple[int, int, Candidate]]] = {}
        for (s, e), (dtail, c) in best_for.items():
            by_start.setdefault(s, []).append((e, dtail, c))
        # f[i][k]: least tail growth covering every operator < i above T with k stages
        f = [[inf] * (max_stages + 1) for _ in range(n_ops + 1)]
        back: Dict[Tuple[int, int], Tuple[int, int, Optional[Candidate]]] = {}
        f[0][0] = 0
        for i in range(n_ops):
            for k in range(max_stages + 1):
                if f[i][k] == inf:
                    continue
                if op_live[i] <= T and f[i][k] < f[i + 1][k]:
                    f[i + 1][k] = f[i][k]
                    back[(i + 1, k)] = (i, k, None)
                if k < max_stages:
                    for e, dtail, c in by_start.get(i, []):
                        if f[i][k] + dtail < f[e + 1][k + 1]:
                            f[e + 1][k + 1] = f[i][k] + dtail
                            back[(e + 1, k + 1)] = (i, k, c)
        k_best = min(range(1, max_stages + 1), key=lambda k: f[n_ops][k])
        if f[n_ops][k_best] == inf:
            continue
        chosen, pos, k = [], n_ops, k_best
        while pos > 0:
            pos, k, c = back[(pos, k)]
            if c is not None:
                chosen.append(c)
        chosen.reverse()
        uncovered = max([op_live[i] for i in range(n_ops)
                         if not any(c.programs[0].stage.start <= i <= c.programs[0].stage.end for c in chosen)]
                        or [0])
        head = max([uncovered] + [c.estimate.region_peak(0) for c in chosen])
        key = tuple((c.programs[0].stage.start, c.programs[0].describe(), str(c.programs[0].policy)) for c in chosen)
        value = base_tail + int(f[n_ops][k_best]) + head
        if key not in results or value < results[key][0]:
            results[key] = (value, chosen)
    return sorted(results.values(), key=lambda r: r[0])[:keep]


@dataclass
class SearchResult:
    """Outcome of :func:`search`: candidates measured exactly (best first), how many
    rewrites were estimated, and why stages or grids were refused."""

    measured: List[Candidate]
    estimated: int
    refusals: List[str]
    stages: int = 0                         #: valid stages considered
    best_estimate: Optional[Candidate] = None  #: the best estimate of all, helpful or not


def search(model: Model, target: Union[str, Target], grid: Optional[Tuple[int, int]] = None,
           stage_end: Optional[int] = None, op_resolver: Optional[OpResolver] = None,
           max_patches: int = 16, max_side: int = 6, max_stages: int = 3, measure_top: int = 3,
           budget_s: float = 1.0, refine_moves: int = 1000, max_estimates: int = 30000,
           time_limit_s: float = 300.0) -> SearchResult:
    """Find the rewrite with the smallest minimum arena on ``target`` after the
    offline-plan optimizer. Every plausible stage (or every stage ending at operator
    ``stage_end``) in every grid up to ``max_patches`` patches (or ``grid``) with each
    of SEARCH_POLICIES is estimated; with neither ``grid`` nor ``stage_end`` given, up
    to ``max_stages`` disjoint stages are combined (:func:`_cover_sets`). The best are
    refined with up to ``refine_moves`` estimates (:func:`_tune_patches`,
    :func:`_refine`; stages are scanned shortest first, up to ``max_estimates``; both
    steps also stop at ``time_limit_s`` seconds, a safety net that makes the result
    depend on the machine's speed when it is reached), and the
    ``measure_top`` best are written, planned by the optimizer (``budget_s`` seconds)
    and measured exactly."""
    target = get_target(target)
    if model.has_compression():
        return SearchResult([], 0, [COMPRESSED_REFUSAL])
    profile = ModelProfile.measure(model, target, op_resolver)
    sg = model.main
    n = len(sg.operators)
    live = live_by_step(model, [(op.inputs, op.outputs, profile.op_scratch[i])
                                for i, op in enumerate(sg.operators)],
                        {t: _align(_tensor_nbytes(s.shape, s.type), 16) for t, s in enumerate(sg.tensors)
                         if not s.is_constant and not s.is_variable})
    refusals: List[str] = []

    def refuse(text):
        if text not in refusals and len(refusals) < 100:
            refusals.append(text)

    spatial = []
    for i in range(n):
        try:
            _stage_op(model, i)
            spatial.append(True)
        except PatchError as e:
            refuse(str(e))
            spatial.append(False)
    valid: Dict[Tuple[int, int], Stage] = {}
    for start in range(n):
        for end in range(start, n):
            if not spatial[end]:
                break   # no stage reaches past an operator that cannot be cut
            if stage_end is not None and end != stage_end:
                continue
            try:
                valid[(start, end)] = analyse_stage(model, start, end)
            except PatchError as e:
                refuse(str(e))
    if stage_end is not None:
        stages = list(valid.values())
        if not stages:
            raise PatchError(f"no stage can end at operator #{stage_end}: " + "; ".join(refusals[:3]))
    else:
        stages = [s for s in valid.values() if _plausible(model, s, valid)]
    singles: List[Candidate] = []
    estimated = 0
    base_live = int(live.max())
    best_known = base_live + profile.tail_bytes
    cover_every = 4   # re-run the cover search when this many more operators are reached
    policies = SEARCH_POLICIES if grid is None else POLICIES
    best_any: Optional[Candidate] = None
    stages.sort(key=lambda st: (st.end - st.start, st.start))
    scan = _Budget(max_estimates, time_limit_s)
    for k, stage in enumerate(stages):
        if scan.left <= 0 or time.perf_counter() > scan.deadline:
            refuse(f"search stopped after {k} of {len(stages)} stages (estimate or time limit); "
                   f"longer stages were not tried")
            break
        length = stage.end - stage.start + 1
        if grid is None and stage_end is None and max_stages > 1 and length > cover_every and singles:
            cover_every *= 2
            covers = _cover_sets(singles, live, profile.tail_bytes, n, max_stages, 1)
            if covers:
                best_known = min(best_known, covers[0][0])
        exit_shape = sg.tensors[stage.exit].shape
        stage_cost = sum(profile.op_tail_bytes[i] for i in range(stage.start, stage.end + 1))
        exit_bytes = _align(_tensor_nbytes(exit_shape, sg.tensors[stage.exit].type), 16)
        grids = [tuple(grid)] if grid is not None else _grids(exit_shape, max_patches, max_side)
        for g in grids:
            # the tail grows by a copy of the stage per extra patch at least, and the last
            # CONCATENATION holds the exit twice: no better than the best known, skip it
            if grid is None and profile.tail_bytes + (g[0] * g[1] - 1) * stage_cost + 2 * exit_bytes \
                    >= best_known:
                continue
            for policy in policies:
                estimated += 1
                scan.spend()
                try:
                    prog = plan_rewrite(model, stage, g, policy)
                except PatchError as e:
                    refuse(f"operators {stage.start}..{stage.end} in {g[0]}x{g[1]} ({policy}): {e}")
                    continue
                for k in range(-1, len(prog.patches) - 1):
                    variant = prog if k < 0 else hoisted(prog, k)
                    c = Candidate([variant], estimate(variant, profile))
                    if best_any is None or c.estimate.min_arena_bytes < best_any.estimate.min_arena_bytes:
                        best_any = c
                    if c.estimate.region_peak(0) >= base_live:
                        continue   # does not lower the stage's own peak: useless alone and combined
                    singles.append(c)
                    best_known = min(best_known, c.estimate.min_arena_bytes)
    if not singles:
        return SearchResult([], estimated, refusals, len(stages), best_any)
    singles.sort(key=lambda c: c.estimate.min_arena_bytes)
    pool = list(singles[:measure_top])
    if grid is None and stage_end is None and max_stages > 1:
        for value, chosen in _cover_sets(singles, live, profile.tail_bytes, n, max_stages, 2 * measure_top):
            if len(chosen) < 2:
                continue
            programs = []
            for slot, c in enumerate(chosen):
                p = c.programs[0]
                programs.append(plan_rewrite(model, p.stage, None, p.policy, (p.row_ranges, p.col_ranges),
                                             base=slot_base(model, slot), hoist=p.hoist))
            estimated += 1
            pool.append(Candidate(programs, estimate(programs, profile)))
    pool.sort(key=lambda c: c.estimate.min_arena_bytes)
    refined = []
    refine = _Budget(refine_moves, time_limit_s)
    for c in pool[:2 * measure_top]:
        r = _tune_patches(_refine(_tune_patches(c, profile), profile, refine), profile)
        if all(r.describe() != o.describe() or
               [p.policy for p in r.programs] != [p.policy for p in o.programs] for o in refined):
            refined.append(r)
    estimated += refine.used
    refined.sort(key=lambda c: c.estimate.min_arena_bytes)
    measured = []
    for c in refined[:measure_top]:
        written = plan_offline(build_model(c.programs), target, op_resolver, budget_s)
        c.model = written.model
        c.min_arena_bytes = written.optimized_min_arena_bytes
        c.head_bytes = written.optimized_head_bytes
        measured.append(c)
    measured.sort(key=lambda c: c.min_arena_bytes)
    return SearchResult(measured, estimated, refusals, len(stages), best_any)


# ------------------------------------------------------------------ driver
@dataclass
class PatchResult:
    """Outcome of :func:`optimize_with_patches` (bytes, multiply-accumulates, seconds)."""

    model: bytes                       #: the written model (offline plan included)
    target: str
    original_min_arena_bytes: int      #: the input model as TFLM plans it
    offline_plan_min_arena_bytes: int  #: the input model with the offline-plan optimizer only
    min_arena_bytes: int               #: the written model
    head_bytes: int
    tail_bytes: int
    programs: List[PatchProgram]       #: the stages rewritten (empty: no rewrite helped)
    original_macs: int
    macs: int
    original_operators: int
    operators: int
    estimated: int                     #: rewrites estimated by the search
    refusals: List[str]
    seconds: float
    verified_inputs: int = 0           #: seeded inputs on which the outputs were checked identical
    best_rejected: Optional[str] = None  #: the best rewrite found when none helped, and its size
    stages_searched: int = 0           #: valid stages the search considered
    original_invoke_s: float = 0.0     #: median invoke time of the input model in our interpreter
    invoke_s: float = 0.0              #: the same for the written model

    @property
    def extra_macs(self) -> int:
        return self.macs - self.original_macs

    @property
    def saved_bytes(self) -> int:
        return self.original_min_arena_bytes - self.min_arena_bytes

    def as_dict(self) -> dict:
        return {"target": self.target, "original_min_arena_bytes": self.original_min_arena_bytes,
                "offline_plan_min_arena_bytes": self.offline_plan_min_arena_bytes,
                "min_arena_bytes": self.min_arena_bytes, "head_bytes": self.head_bytes,
                "tail_bytes": self.tail_bytes, "saved_bytes": self.saved_bytes,
                "stages": [_program_dict(p) for p in self.programs],
                "original_macs": self.original_macs, "macs": self.macs, "extra_macs": self.extra_macs,
                "original_operators": self.original_operators, "operators": self.operators,
                "estimated": self.estimated, "stages_searched": self.stages_searched,
                "verified_inputs": self.verified_inputs,
                "best_rejected": self.best_rejected, "refusals": self.refusals,
                "emulator_invoke_ms": [round(self.original_invoke_s * 1e3, 3), round(self.invoke_s * 1e3, 3)],
                "seconds": round(self.seconds, 3)}


def _program_dict(p: PatchProgram) -> dict:
    sg = p.model.main
    policy = p.policy if isinstance(p.policy, str) else {
        (f"{k[0]}@{k[1]},{k[2]}" if isinstance(k, tuple) else str(k)): v for k, v in p.policy.items()}
    return {"operators": [p.stage.start, p.stage.end], "input": sg.tensors[p.stage.input].name,
            "exit": sg.tensors[p.stage.exit].name, "grid": list(p.grid),
            "row_ranges": [list(r) for r in p.row_ranges], "col_ranges": [list(c) for c in p.col_ranges],
            "policy": policy, "hoist": p.hoist, "new_operators": len(p.ops) - len(p.stage.ops),
            "pads": sum(r.pads for r in p.patches), "slices": sum(r.crops for r in p.patches),
            "stage_macs": p.stage_macs, "extra_macs": p.extra_macs, "describe": p.describe()}


def seeded_inputs(model: Model, seed: int) -> List[np.ndarray]:
    """Random inputs for ``model`` (integers over their whole range, floats in [-2, 2])."""
    rng = np.random.default_rng(seed)
    out = []
    for t in model.main.inputs:
        spec = model.main.tensors[t]
        if spec.dtype == np.bool_:
            out.append(rng.integers(0, 2, size=spec.shape).astype(bool))
        elif np.issubdtype(spec.dtype, np.integer):
            info = np.iinfo(spec.dtype)
            out.append(rng.integers(info.min, info.max, size=spec.shape, endpoint=True).astype(spec.dtype))
        else:
            out.append(rng.uniform(-2, 2, size=spec.shape).astype(spec.dtype))
    return out


def run_outputs(model, inputs: Sequence[np.ndarray], target: Union[str, Target] = "host64",
                op_resolver: Optional[OpResolver] = None, timed_runs: int = 0):
    """Outputs of one invoke of ``model`` in our interpreter; with ``timed_runs``, also
    the median seconds of that many further invokes: (outputs, seconds)."""
    from ..api import count_resource_variables
    from ..interpreter import MicroInterpreter
    m = model if isinstance(model, Model) else load_model(model)
    it = MicroInterpreter(m, op_resolver, max(len(m.raw) * 10, 1 << 21), target=target,
                          num_resource_variables=count_resource_variables(m), error_reporter=lambda s: None)
    it.allocate_tensors()
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    outputs = [np.array(it.output(i)) for i in range(it.outputs_size)]
    if not timed_runs:
        return outputs
    times = []
    for _ in range(timed_runs):
        t0 = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t0)
    return outputs, float(np.median(times))


def parse_grid(text: str) -> Tuple[int, int]:
    """"RxC" -> (rows, columns) of patches of the exit tensor."""
    parts = str(text).lower().split("x")
    try:
        rows, cols = (int(p) for p in parts)
    except ValueError:
        raise InputError(f"--patches takes 'auto' or ROWSxCOLS (e.g. 2x2), not {text!r}") from None
    if rows < 1 or cols < 1 or rows * cols < 2:
        raise InputError(f"--patches {text}: a grid needs at least 2 patches")
    return rows, cols


def optimize_with_patches(model, target: Union[str, Target] = DEFAULT_TARGET,
                          grid: Union[str, Tuple[int, int], None] = "auto",
                          stage_end: Optional[int] = None, op_resolver: Optional[OpResolver] = None,
                          budget_s: float = 5.0, max_stages: int = 3, max_patches: int = 16,
                          refine_moves: int = 1000, time_limit_s: float = 300.0,
                          verify_seeds: int = 2,
                          recording: bool = True) -> PatchResult:
    """Rewrite stages of ``model`` into patches and plan the result with the
    offline-plan optimizer, for the smallest minimum arena on ``target``.

    ``grid``: "auto" (stages, grids and cuts searched; up to ``max_stages`` disjoint
    stages; the rewrite is kept only when it beats the offline plan alone), or (rows,
    columns) / "RxC" (one stage cut into that grid, written even if it does not help).
    ``stage_end``: index of the stage's last operator (the search then picks the start).
    ``refine_moves``, ``time_limit_s``: see :func:`search`.
    The written model's outputs are checked bit-identical to the input model's on
    ``verify_seeds`` seeded inputs in our interpreter before it is returned. Minimum
    arenas are for the RecordingMicroAllocator (``recording``, as the tflite-micro
    package) or the plain MicroAllocator (the search ranks by the former: the two differ
    by a constant)."""
    from .optimizer import optimize_model
    start_time = time.perf_counter()
    original = model if isinstance(model, Model) else load_model(model)
    target = get_target(target)
    if isinstance(grid, str):
        grid = None if grid == "auto" else parse_grid(grid)
    if stage_end is not None and not 0 <= stage_end < len(original.main.operators):
        raise InputError(f"--stage-end {stage_end}: the main subgraph has operators "
                         f"0..{len(original.main.operators) - 1}")
    forced = grid is not None
    plain = optimize_model(original, target, op_resolver, budget_s=budget_s, recording=recording)
    result = search(original, target, grid, stage_end, op_resolver, max_patches=max_patches,
                    max_stages=max_stages, budget_s=budget_s, refine_moves=refine_moves,
                    time_limit_s=time_limit_s)
    chosen: Optional[Candidate] = result.measured[0] if result.measured else None
    if chosen is None and (forced or stage_end is not None):
        raise PatchError("no exact rewrite exists for the requested "
                         + ("grid" if forced else "stage") + ": " + "; ".join(result.refusals[:3]))
    best_model, best_bytes = plain.model, plain.optimized_min_arena_bytes
    head = plain.optimized_head_bytes
    programs: List[PatchProgram] = []
    rejected = None
    if chosen is None and result.best_estimate is not None:
        rejected = (f"{result.best_estimate.describe()}: {result.best_estimate.estimate.min_arena_bytes} "
                    f"bytes (estimated)")
    elif chosen is None and result.stages:
        rejected = ("none worth writing: for every stage and grid, the tail growth (a copy of the "
                    "stage's operators per extra patch) plus twice the exit tensor (the final "
                    "CONCATENATION) already reaches the current minimum arena")
    if chosen is not None:
        final = plan_offline(build_model(chosen.programs), target, op_resolver, budget_s, recording)
        if forced or stage_end is not None or final.optimized_min_arena_bytes < best_bytes:
            best_model, best_bytes = final.model, final.optimized_min_arena_bytes
            head = final.optimized_head_bytes
            programs = chosen.programs
        else:
            rejected = f"{chosen.describe()}: {final.optimized_min_arena_bytes} bytes"
    written = load_model(best_model)
    verified = 0
    times = (0.0, 0.0)
    for seed in range(max(verify_seeds, 1) if programs else 0):
        inputs = seeded_inputs(original, seed)
        runs = 5 if seed == 0 else 0
        want = run_outputs(original, inputs, target, op_resolver, timed_runs=runs)
        got = run_outputs(written, inputs, target, op_resolver, timed_runs=runs)
        if runs:
            (want, t_want), (got, t_got) = want, got
            times = (t_want, t_got)
        if len(want) != len(got) or any(a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes()
                                        for a, b in zip(want, got)):
            raise ModelError(f"internal error: the rewritten model's outputs differ from the original's "
                             f"on seeded input {seed}; refusing to write it")
        verified += 1
    return PatchResult(model=best_model, target=target.name,
                       original_min_arena_bytes=plain.original_min_arena_bytes,
                       offline_plan_min_arena_bytes=plain.optimized_min_arena_bytes,
                       min_arena_bytes=best_bytes, head_bytes=head, tail_bytes=best_bytes - head,
                       programs=programs, original_macs=model_macs(original), macs=model_macs(written),
                       original_operators=len(original.main.operators),
                       operators=len(written.main.operators), estimated=result.estimated,
                       refusals=result.refusals, seconds=time.perf_counter() - start_time,
                       verified_inputs=verified, best_rejected=rejected, stages_searched=result.stages,
                       original_invoke_s=times[0], invoke_s=times[1])
