"""Estimates of a rewrite's tail and live-memory head (bytes) from one measured
profile of the model, without writing or planning the rewritten model."""
from __future__ import annotations

import gc
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ... import schema
from ...model import Model
from ...op_resolver import OpResolver
from ...targets import Target, get_target
from .program import PatchProgram
from .writing import _as_list, _op_sequence


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
        from ..optimizer import _run
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
        tail = it.arena.persistent_used_bytes
        del it
        release_interpreters()
        return cls(model, target, tail, costs, scratch, new)


def release_interpreters() -> None:
    """Free the interpreters made so far. An interpreter and its kernel context refer
    to each other, so only Python's cycle collector frees one, and it runs by object
    count, not by bytes: a loop allocating large models (tens of MB of arena and
    tensors each) grows by gigabytes unless it collects after each step."""
    gc.collect()


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


def planned_sizes(prog: PatchProgram) -> Dict[int, int]:
    """Planned bytes of each new activation tensor of ``prog`` (by tensor index; constants
    are not planned). Kept on the program, and shared by its :func:`hoisted` copies."""
    cached = prog.__dict__.get("_planned_sizes")
    if cached is not None and cached[0] == len(prog.tensors):
        return cached[1]
    sg = prog.model.main
    sizes = {prog.base + k: _align(_tensor_nbytes(t.shape, sg.tensors[t.proto].type), 16)
             for k, t in enumerate(prog.tensors) if t.data is None}
    prog.__dict__["_planned_sizes"] = (len(prog.tensors), sizes)
    return sizes


def estimate(programs: Union[PatchProgram, Sequence[PatchProgram]], profile: ModelProfile) -> Estimate:
    """Predicted tail and head bound of the rewritten model, without writing it."""
    programs = _as_list(programs)
    model = programs[0].model
    sg = model.main
    n = len(sg.tensors)
    new_sizes: Dict[int, int] = {}
    for p in programs:
        new_sizes.update(planned_sizes(p))
    tail = profile.tail_bytes
    used_after = set(sg.inputs) | set(sg.outputs)
    seq, regions, step = [], [], 0
    by_start = {p.stage.start: p for p in programs}
    for inputs, outputs, index, new in _op_sequence(programs):
        step += 1
        used_after.update(inputs)
        used_after.update(outputs)
        if new is None:
            seq.append((inputs, outputs, profile.op_scratch[index]))
            continue
        tail += (profile.op_tail_bytes[new.copy_of] if new.copy_of is not None
                 else profile.new_op_tail_bytes[new.name])
        seq.append((inputs, outputs, profile.op_scratch[new.copy_of] if new.copy_of is not None else []))
    used_after = {t for t in used_after if t >= 0}   # not the omitted optional inputs
    for p in programs:
        tail -= sum(profile.op_tail_bytes[i] for i in range(p.stage.start, p.stage.end + 1))
    tail += (len(used_after) - profile.used_tensors) * profile.target.sizeof("TfLiteEvalTensor")
    sizes: Dict[int, int] = {}
    for t in used_after:
        if t < n:
            if t in profile.tensor_bytes:
                sizes[t] = profile.tensor_bytes[t]
        elif t in new_sizes:
            sizes[t] = new_sizes[t]
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
