"""Patch programs: the operators and tensors replacing a stage, planned patch by patch
(policies, explicit pads, slices, hoisting), before anything is written."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ... import schema
from ...errors import InputError
from ...model import Model
from .geometry import (_LOWEST, _SCHEMA_SAME, _SCHEMA_VALID, MAX_CONCAT_INPUTS, Box, PatchError, Stage,
                       StageOp, analyse_stage, axis_choices, needed_boxes, split_axis)


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
    from ..info import operator_macs
    sg = model.main
    return sum(operator_macs(sg, op) or 0 for op in sg.operators)
