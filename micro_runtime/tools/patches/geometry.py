"""Geometry of a stage: which operators can be cut into patches, the pixels each patch
needs of every stage tensor, and how a window operator's patch copy covers one axis."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from kernels.internal.padding import compute_padding_height_width, padding_mode, SAME, VALID

from ... import schema
from ...errors import InputError
from ...model import Model


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


def analyse_stage(model: Model, start: int, end: int,
                  stage_ops: Optional[Sequence[Optional[StageOp]]] = None) -> Stage:
    """Check that operators [start, end] of the main subgraph form a stage that can be
    cut into patches; raise :class:`PatchError` with the reason otherwise.
    ``stage_ops``: each operator's :class:`StageOp` if already analysed (None: not yet)."""
    sg = model.main
    n = len(sg.operators)
    if not 0 <= start <= end < n:
        raise PatchError(f"stage [{start}, {end}] is outside the {n} operators of the main subgraph")
    produced: set = set()
    ops = []
    external: List[int] = []
    for i in range(start, end + 1):
        op = stage_ops[i] if stage_ops is not None and stage_ops[i] is not None else _stage_op(model, i)
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
