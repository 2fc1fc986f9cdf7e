"""Arena optimizer: a smaller head for stock TFLM, written into the model.

TFLM places buffers that have an offline offset (the model's ``OfflineMemoryAllocation``
metadata) first, then plans every other buffer — kernel scratch buffers always — with its
greedy algorithm around them. So the optimizer searches offsets for the model's tensors
and judges each candidate by simulating exactly that (our GreedyMemoryPlanner with
offline offsets, the kernels' real scratch requests online).

Search: first-fit placement (a buffer goes to the lowest offset free for its whole
lifetime) in a candidate order. Every permutation is tried when there are few buffers;
otherwise several orderings, then a local search on the best one. It stops early at the
lower bound: the largest sum of sizes of buffers alive at the same step.

``reorder=True`` first looks for a topological order of the operators with a lower
peak of live memory (branchy graphs) and writes the operators in that order.

Every written model is re-loaded and re-planned by our own interpreter; it is only
returned when its head equals the prediction.
"""
from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from arena.arena import BUFFER_ALIGNMENT, align_up
from arena.planners import GreedyMemoryPlanner

from ..errors import InputError, ModelError
from ..interpreter import MicroInterpreter
from ..model import OFFLINE_MEMORY_ALLOCATION, Model, load_model
from .model_writer import ModelBuilder
from ..op_resolver import OpResolver
from ..targets import DEFAULT_TARGET, get_target

EXACT_LIMIT = 8  #: buffers up to which every placement order is tried


@dataclass
class Buffer:
    """A buffer of the plan: ``tensor`` is the global tensor index (None for scratch)."""

    size: int
    first: int
    last: int
    tensor: Optional[int]


@dataclass
class OptimizeResult:
    """Outcome of :func:`optimize_model` (bytes and seconds)."""

    model: bytes
    original_head_bytes: int
    optimized_head_bytes: int
    lower_bound_bytes: int
    original_min_arena_bytes: int
    optimized_min_arena_bytes: int
    seconds: float
    reordered: bool = False
    operator_order: Optional[List[int]] = None
    method: str = ""
    offsets: Dict[int, int] = field(default_factory=dict)

    @property
    def saved_bytes(self) -> int:
        return self.original_head_bytes - self.optimized_head_bytes

    def as_dict(self) -> dict:
        return {"original_head_bytes": self.original_head_bytes,
                "optimized_head_bytes": self.optimized_head_bytes,
                "lower_bound_bytes": self.lower_bound_bytes,
                "saved_head_bytes": self.saved_bytes,
                "original_min_arena_bytes": self.original_min_arena_bytes,
                "optimized_min_arena_bytes": self.optimized_min_arena_bytes,
                "reordered": self.reordered, "operator_order": self.operator_order,
                "method": self.method, "seconds": round(self.seconds, 3)}


# ------------------------------------------------------------------- planning
def lower_bound(buffers: Sequence[Buffer]) -> int:
    """Largest total size of buffers alive at one step: no plan can beat it."""
    if not buffers:
        return 0
    lo = min(b.first for b in buffers)
    hi = max(b.last for b in buffers)
    live = np.zeros(hi - lo + 2, dtype=np.int64)
    for b in buffers:
        live[b.first - lo] += b.size
        live[b.last - lo + 1] -= b.size
    return int(np.cumsum(live).max())


def first_fit(buffers: Sequence[Buffer], order: Sequence[int]) -> List[int]:
    """Offsets from placing ``order``'s buffers one by one at the lowest offset free for
    their lifetime."""
    offsets = [0] * len(buffers)
    placed: List[Tuple[int, int, int, int]] = []  # (offset, end, first, last), sorted by offset
    for i in order:
        b = buffers[i]
        candidate = 0
        for off, end, first, last in placed:
            if first > b.last or b.first > last:
                continue
            if off - candidate >= b.size:
                break
            candidate = max(candidate, end)
        offsets[i] = candidate
        entry = (candidate, candidate + b.size, b.first, b.last)
        lo, hi = 0, len(placed)
        while lo < hi:
            mid = (lo + hi) // 2
            if placed[mid][0] <= candidate:
                lo = mid + 1
            else:
                hi = mid
        placed.insert(lo, entry)
    return offsets


def tflm_head(buffers: Sequence[Buffer], tensor_offsets: Dict[int, int]) -> int:
    """The head TFLM plans when the tensors have ``tensor_offsets`` (offline) and the
    scratch buffers are placed online by its greedy planner."""
    planner = GreedyMemoryPlanner()
    for b in buffers:
        offline = tensor_offsets.get(b.tensor, -1) if b.tensor is not None else -1
        planner.add_buffer(b.size, b.first, b.last, offline)
    return planner.maximum_size()


class _Search:
    def __init__(self, buffers: List[Buffer], budget_s: float, seed: int):
        self.buffers = buffers
        self.deadline = time.perf_counter() + budget_s
        self.rng = random.Random(seed)
        self.bound = lower_bound(buffers)
        self.best_head: Optional[int] = None
        self.best_offsets: Dict[int, int] = {}
        self.best_method = ""
        self.evaluations = 0

    def evaluate(self, order: Sequence[int], method: str) -> int:
        offsets = first_fit(self.buffers, order)
        tensor_offsets = {b.tensor: offsets[i] for i, b in enumerate(self.buffers) if b.tensor is not None}
        head = tflm_head(self.buffers, tensor_offsets)
        self.evaluations += 1
        if self.best_head is None or head < self.best_head:
            self.best_head, self.best_offsets, self.best_method = head, tensor_offsets, method
        return head

    def done(self) -> bool:
        return self.best_head is not None and self.best_head <= self.bound

    def run(self) -> None:
        n = len(self.buffers)
        bs = self.buffers
        if n <= EXACT_LIMIT:
            for order in itertools.permutations(range(n)):
                self.evaluate(order, "exact")
                if self.done():
                    return
            return
        idx = list(range(n))
        peak_step = self._peak_step()
        orders = {
            "size": sorted(idx, key=lambda i: (-bs[i].size, bs[i].first)),
            "start": sorted(idx, key=lambda i: (bs[i].first, -bs[i].size)),
            "end": sorted(idx, key=lambda i: (-bs[i].last, -bs[i].size)),
            "length": sorted(idx, key=lambda i: (-(bs[i].last - bs[i].first), -bs[i].size)),
            "area": sorted(idx, key=lambda i: -bs[i].size * (bs[i].last - bs[i].first + 1)),
            "peak-first": sorted(idx, key=lambda i: (not (bs[i].first <= peak_step <= bs[i].last),
                                                      -bs[i].size)),
        }
        best_order, best = None, None
        for name, order in orders.items():
            head = self.evaluate(order, name)
            if best is None or head < best:
                best, best_order = head, list(order)
            if self.done():
                return
        # local search: move one buffer earlier / swap two, keep improvements (and ties)
        current, current_head = best_order, best
        while time.perf_counter() < self.deadline and not self.done():
            cand = list(current)
            if self.rng.random() < 0.5:
                i, j = self.rng.sample(range(n), 2)
                cand[i], cand[j] = cand[j], cand[i]
            else:
                i = self.rng.randrange(n)
                item = cand.pop(i)
                cand.insert(self.rng.randrange(i + 1) if i else 0, item)
            head = self.evaluate(cand, "local search")
            if head <= current_head:
                current, current_head = cand, head

    def _peak_step(self) -> int:
        lo = min(b.first for b in self.buffers)
        hi = max(b.last for b in self.buffers)
        live = np.zeros(hi - lo + 2, dtype=np.int64)
        for b in self.buffers:
            live[b.first - lo] += b.size
            live[b.last - lo + 1] -= b.size
        return int(np.argmax(np.cumsum(live))) + lo


# --------------------------------------------------------------------- model
def _plan_buffers(interpreter: MicroInterpreter) -> List[Buffer]:
    base, offset = {}, 0
    for s, sg in enumerate(interpreter.model.subgraphs):
        base[s] = offset
        offset += len(sg.tensors)
    return [Buffer(pb.size, pb.first_used, pb.last_used,
                   base[pb.subgraph] + pb.index if pb.kind == "tensor" else None)
            for pb in interpreter.allocator.plan]


def _run(model: Model, target, resolver) -> MicroInterpreter:
    from ..api import count_resource_variables
    it = MicroInterpreter(model, resolver, max(len(model.raw) * 10, 1 << 21), target=target,
                          recording=True, num_resource_variables=count_resource_variables(model),
                          error_reporter=lambda m: None)
    it.allocate_tensors()
    return it


def write_offline_plan(model: Model, offsets: Dict[int, int], operator_order: Optional[Sequence[int]] = None) -> bytes:
    """A copy of ``model`` whose OfflineMemoryAllocation metadata gives ``offsets``
    (global tensor index -> bytes from the head start; -1 for every other tensor),
    optionally with the main subgraph's operators in ``operator_order``."""
    total = sum(len(sg.tensors) for sg in model.subgraphs)
    values = np.full(3 + total, -1, dtype="<i4")
    values[0], values[1], values[2] = 1, 0, total
    for t, off in offsets.items():
        values[3 + t] = off
    builder = ModelBuilder.from_model(model)
    builder.metadata = [(name, index) for name, index in builder.metadata
                        if name != OFFLINE_MEMORY_ALLOCATION]
    builder.add_metadata(OFFLINE_MEMORY_ALLOCATION, values.tobytes())
    if operator_order is not None:
        ops = builder.subgraphs[0].operators
        builder.subgraphs[0].operators = [ops[i] for i in operator_order]
    return builder.build()


def _dependencies(model: Model) -> List[set]:
    """For each operator of the main subgraph, the operators that must run before it:
    producers of its inputs, and earlier users of the same variable tensors."""
    sg = model.main
    producer = {}
    for i, op in enumerate(sg.operators):
        for t in op.outputs:
            producer[t] = i
    deps: List[set] = [set() for _ in sg.operators]
    last_state_user: Dict[int, int] = {}
    for i, op in enumerate(sg.operators):
        for t in op.inputs:
            if t >= 0 and t in producer and producer[t] != i:
                deps[i].add(producer[t])
        for t in list(op.inputs) + list(op.outputs):
            if t >= 0 and sg.tensors[t].is_variable:
                if t in last_state_user:
                    deps[i].add(last_state_user[t])
                last_state_user[t] = i
    return deps


def _order_lifetimes(model: Model, order: Sequence[int], sizes: Dict[int, int],
                     scratch_by_op: Dict[int, List[int]]) -> List[Buffer]:
    """Buffers (planned tensors of the main subgraph + scratch) if the operators ran in
    ``order`` (same lifetime rules as the allocator)."""
    sg = model.main
    first: Dict[int, int] = {}
    last: Dict[int, int] = {}
    for t in sg.inputs:
        first.setdefault(t, 0)
        last[t] = 0
    out_scratch = []
    step = 0
    for op_index in order:
        op = sg.operators[op_index]
        step += 1
        for t in op.outputs:
            first.setdefault(t, step)
        for t in list(op.inputs) + list(op.outputs):
            if t >= 0:
                last[t] = step
        for size in scratch_by_op.get(op_index, []):
            out_scratch.append(Buffer(size, step, step, None))
    for t in sg.outputs:
        first.setdefault(t, step)
        last[t] = step
    buffers = [Buffer(size, first.get(t, -1), last.get(t, -1), t) for t, size in sizes.items()]
    return buffers + out_scratch


def _best_order(model: Model, interpreter: MicroInterpreter) -> Tuple[List[int], int]:
    """A topological order of the main subgraph with the lowest live-memory bound found."""
    sg = model.main
    n = len(sg.operators)
    sizes = {pb.index: pb.size for pb in interpreter.allocator.plan
             if pb.kind == "tensor" and pb.subgraph == 0}
    scratch_by_op: Dict[int, List[int]] = {}
    for pb in interpreter.allocator.plan:
        if pb.kind == "scratch":
            req = interpreter.allocator.scratch_requests[pb.index]
            if req.subgraph_idx == 0:
                scratch_by_op.setdefault(req.node_idx, []).append(pb.size)
    deps = _dependencies(model)
    consumers: Dict[int, List[int]] = {}
    for i, op in enumerate(sg.operators):
        for t in op.inputs:
            if t >= 0:
                consumers.setdefault(t, []).append(i)

    def bound(order):
        return lower_bound(_order_lifetimes(model, order, sizes, scratch_by_op))

    original = list(range(n))
    best_order, best_bound = original, bound(original)
    # greedy: run next the ready operator that frees the most / allocates the least
    for tie in ("free-first", "small-first"):
        done, order = set(), []
        live = {t for t in sg.inputs}
        while len(order) < n:
            ready = [i for i in range(n) if i not in done and deps[i] <= done]
            def score(i):
                op = sg.operators[i]
                alloc = sum(sizes.get(t, 0) for t in op.outputs)
                freed = sum(sizes.get(t, 0) for t in op.inputs if t >= 0 and t in live and
                            all(c in done or c == i for c in consumers.get(t, [])) and t not in sg.outputs)
                return (alloc - freed, i) if tie == "free-first" else (alloc, -freed, i)
            pick = min(ready, key=score)
            order.append(pick)
            done.add(pick)
            live.update(sg.operators[pick].outputs)
        b = bound(order)
        if b < best_bound:
            best_order, best_bound = order, b
    return best_order, best_bound


def optimize_model(model, target=DEFAULT_TARGET, op_resolver: Optional[OpResolver] = None,
                   reorder: bool = False, budget_s: float = 5.0, seed: int = 0,
                   recording: bool = True) -> OptimizeResult:
    """Plan ``model``'s tensors offline for the smallest head TFLM will produce, and
    return the model with that plan written in (see the module docstring). The minimum
    arenas reported are for the RecordingMicroAllocator (``recording``) or the plain
    MicroAllocator; the plan itself is the same for both."""
    from .sizing import measure_arena
    start = time.perf_counter()
    model = model if isinstance(model, Model) else load_model(model)
    target = get_target(target)
    if len(model.subgraphs) > 1 and reorder:
        raise InputError("--reorder supports single-subgraph models only")
    original = _run(model, target, op_resolver)
    original_head = original.arena.head_bytes
    original_min = measure_arena(model, target, op_resolver, recording=recording).min_arena_bytes

    order = None
    base_model, base_it = model, original
    if reorder:
        order, _ = _best_order(model, original)
        if order != list(range(len(model.main.operators))):
            reordered = load_model(write_offline_plan(model, {}, order))
            base_model, base_it = reordered, _run(reordered, target, op_resolver)
        else:
            order = None

    buffers = _plan_buffers(base_it)
    search = _Search(buffers, budget_s, seed)
    search.run()
    head, offsets, method = search.best_head, search.best_offsets, search.best_method
    # TFLM's own plan, fixed as offline offsets, is always a candidate
    tflm_offsets = {b.tensor: pb.offset for b, pb in zip(buffers, base_it.allocator.plan)
                    if b.tensor is not None}
    tflm_fixed = tflm_head(buffers, tflm_offsets)
    if head is None or tflm_fixed < head:
        head, offsets, method = tflm_fixed, tflm_offsets, "tflm plan"
    # reordering keeps tensor indices, so the offsets apply to the model as written
    written = write_offline_plan(model, offsets, order)
    check = _run(load_model(written), target, op_resolver)
    if check.arena.head_bytes != head:
        raise ModelError(f"internal error: the written plan gives head {check.arena.head_bytes}, "
                         f"predicted {head}; refusing to write it")
    optimized_min = measure_arena(written, target, op_resolver, recording=recording).min_arena_bytes
    return OptimizeResult(model=written, original_head_bytes=original_head, optimized_head_bytes=head,
                          lower_bound_bytes=search.bound, original_min_arena_bytes=original_min,
                          optimized_min_arena_bytes=optimized_min,
                          seconds=time.perf_counter() - start, reordered=order is not None,
                          operator_order=order, method=method, offsets=offsets)
