"""The search for the rewrite with the smallest minimum arena: stages, grids and
policies estimated, the best combined, refined and measured exactly."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ...model import Model
from ...op_resolver import OpResolver
from ...targets import Target, get_target
from .estimates import (Estimate, ModelProfile, _align, _tensor_nbytes, estimate, live_by_step,
                        planned_sizes, release_interpreters)
from .geometry import COMPRESSED_REFUSAL, PatchError, Stage, StageOp, _stage_op, analyse_stage
from .program import (POLICIES, SEARCH_POLICIES, PatchProgram, _NewOp, _op_policy, _plan_patch,
                      _stage_readers, hoisted, plan_rewrite)
from .writing import build_model, slot_base


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


#: the clock deadlines read (seconds; tests replace it with a counter)
_clock = time.perf_counter


class _Deadline:
    """The wall-clock limit of one search, shared by all its steps: every long loop
    checks :meth:`expired` and, when it is, stops and keeps the best found so far;
    :attr:`stopped` then says where the search was cut short."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = _clock() + seconds
        self.stopped: Optional[str] = None

    def expired(self, where: str = "") -> bool:
        """Whether the limit has passed; the first time it has, ``where`` is noted."""
        if _clock() <= self.at:
            return False
        if self.stopped is None:
            self.stopped = where or "searching"
        return True


class _Budget:
    """How many more estimates a search step may make (deterministic), cut short by the
    search's ``deadline``."""

    def __init__(self, estimates: int, deadline: _Deadline, where: str):
        self.left = estimates
        self.deadline = deadline
        self.where = where
        self.used = 0

    def spend(self) -> bool:
        if self.left <= 0 or self.deadline.expired(self.where):
            return False
        self.left -= 1
        self.used += 1
        return True


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
    return planned_sizes(prog)


def _patch_options(prog: PatchProgram, r: int, c: int, readers: Dict[int, int], profile: ModelProfile,
                   assignments: Sequence[Dict[int, str]], input_dies: bool,
                   deadline: Optional[_Deadline] = None):
    """For each policy assignment (window operator index -> policy) of patch (r, c),
    planned alone: (local peak bytes, tail bytes, assignment) -- see :func:`_local_live`.
    Stops early (fewer options) when the ``deadline`` passes."""
    model, stage = prog.model, prog.stage
    exit_box = (prog.row_ranges[r][0], prog.row_ranges[r][1], prog.col_ranges[c][0], prog.col_ranges[c][1])
    input_bytes = profile.tensor_bytes.get(stage.input, 0)
    eval_bytes = profile.target.sizeof("TfLiteEvalTensor")
    out = []
    for assignment in assignments:
        if deadline is not None and deadline.expired("tuning the policies of each patch"):
            break
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


def _tune_patches(cand: Candidate, profile: ModelProfile, deadline: Optional[_Deadline] = None) -> Candidate:
    """Choose each patch's policies on its own: every assignment of policies to the
    window operators is planned per patch, giving its local peak and tail; then for a
    head budget H each patch takes its smallest-tail assignment whose local peak plus
    its background (what else is alive meanwhile, taken from the current estimate) fits
    in H, and H is chosen to minimise tail + max(H, the peak outside the stage).
    When the ``deadline`` passes, the stages tuned so far are kept."""
    best = cand
    for k in range(len(cand.programs)):
        if deadline is not None and deadline.expired("tuning the policies of each patch"):
            break
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
                                     dies or gone, deadline)
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
    from ..optimizer import optimize_model
    best = None
    for seed in range(attempts):
        result = optimize_model(model, target, op_resolver, budget_s=budget_s, seed=seed, recording=recording)
        release_interpreters()
        if best is None or result.optimized_min_arena_bytes < best.optimized_min_arena_bytes:
            best = result
        if best.optimized_head_bytes <= best.lower_bound_bytes:
            break
    return best


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


#: single-stage rewrites kept per stage for combining (the ones no other beats on both
#: own peak and tail growth); beyond this many, the one with the highest own peak goes
MAX_FRONT = 64


@dataclass
class _Single:
    """A single-stage rewrite the scan estimated, kept without its program (planning is
    deterministic: :meth:`program` plans it again). Bytes."""

    stage: Stage
    grid: Tuple[int, int]
    policy: str
    hoist: int
    peak: int         #: live-memory peak while the rewritten stage runs
    tail: int         #: estimated tail
    min_arena: int    #: estimated minimum arena
    seq: int          #: order in which the scan estimated it

    def program(self, model: Model, base: int = -1) -> PatchProgram:
        return plan_rewrite(model, self.stage, self.grid, self.policy, base=base, hoist=self.hoist)


class _SingleStore:
    """The single-stage rewrites a search keeps, a bounded number whatever the model:
    per stage its front of own peak and tail (at most ``max_front``, see
    :data:`MAX_FRONT`), and the ``top`` smallest estimated minimum arenas."""

    def __init__(self, top: int, max_front: int = MAX_FRONT):
        self.fronts: Dict[Tuple[int, int], List[_Single]] = {}  #: peaks rising, tails falling
        self.first_seq: Dict[Tuple[int, int], int] = {}
        self.best_key: Dict[Tuple[int, int], Tuple[int, int]] = {}
        self.top: List[_Single] = []
        self.top_size = top
        self.max_front = max_front
        self.count = 0
        self.dropped = 0    #: rewrites on a front that were let go because it was full

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, single: _Single) -> None:
        self.count += 1
        key = (single.stage.start, single.stage.end)
        self.first_seq.setdefault(key, single.seq)
        rank = (single.min_arena, single.seq)
        if key not in self.best_key or rank < self.best_key[key]:
            self.best_key[key] = rank
        if len(self.top) < self.top_size or rank < (self.top[-1].min_arena, self.top[-1].seq):
            self.top.append(single)
            self.top.sort(key=lambda x: (x.min_arena, x.seq))
            del self.top[self.top_size:]
        front = self.fronts.setdefault(key, [])
        if any(o.peak <= single.peak and o.tail <= single.tail for o in front):
            return
        front[:] = [o for o in front if not (o.peak >= single.peak and o.tail >= single.tail)]
        front.append(single)
        front.sort(key=lambda x: x.peak)
        if len(front) > self.max_front:
            front.pop()
            self.dropped += 1

    def own(self, by_best: bool) -> List[Tuple[int, int, int, int, _Single]]:
        """(start, end, own peak, tail, rewrite) of every front, stage by stage in the
        order the scan reached them, or (``by_best``) by their best estimate."""
        order = sorted(self.fronts, key=(self.best_key.get if by_best else self.first_seq.get))
        return [(s, e, x.peak, x.tail, x) for s, e in order for x in self.fronts[(s, e)]]


def _cover_sets(store: _SingleStore, live: np.ndarray, base_tail: int, n_ops: int,
                max_stages: int, keep: int, by_best: bool = True,
                deadline: Optional[_Deadline] = None) -> List[Tuple[int, List[_Single]]]:
    """Sets of disjoint single-stage rewrites, chosen by a separable estimate: for a head
    budget T every operator whose live memory exceeds T must lie in a chosen stage whose
    own peak is at most T; the tail grows by the sum of the stages' tail growth. A
    dynamic programme over operator positions per T; returns (estimate, set), best first
    (those found so far when the ``deadline`` passes)."""
    op_live = [int(live[i + 1]) for i in range(n_ops)]
    # per stage, only the rewrites no other beats on both own peak and tail growth
    own = [(s, e, peak, tail - base_tail, x) for s, e, peak, tail, x in store.own(by_best)]
    thresholds = sorted({o[2] for o in own})
    results: Dict[Tuple, Tuple[int, List[_Single]]] = {}
    inf = float("inf")
    for T in thresholds:
        if deadline is not None and deadline.expired("combining stages"):
            break
        best_for: Dict[Tuple[int, int], Tuple[int, _Single]] = {}
        for s, e, peak, dtail, c in own:
            if peak <= T and ((s, e) not in best_for or dtail < best_for[(s, e)][0]):
                best_for[(s, e)] = (dtail, c)
        by_start: Dict[int, List[Tuple[int, int, _Single]]] = {}
        for (s, e), (dtail, c) in best_for.items():
            by_start.setdefault(s, []).append((e, dtail, c))
        # f[i][k]: least tail growth covering every operator < i above T with k stages
        f = [[inf] * (max_stages + 1) for _ in range(n_ops + 1)]
        back: Dict[Tuple[int, int], Tuple[int, int, Optional[_Single]]] = {}
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
                         if not any(c.stage.start <= i <= c.stage.end for c in chosen)]
                        or [0])
        head = max([uncovered] + [c.peak for c in chosen])
        key = tuple((c.stage.start, c.stage.end, c.grid, c.policy, c.hoist) for c in chosen)
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
    stopped_early: Optional[str] = None     #: where the time limit cut the search short, if it did


def search(model: Model, target: Union[str, Target], grid: Optional[Tuple[int, int]] = None,
           stage_end: Optional[int] = None, op_resolver: Optional[OpResolver] = None,
           max_patches: int = 16, max_side: int = 6, max_stages: int = 3, measure_top: int = 3,
           budget_s: float = 1.0, refine_moves: int = 1000, max_estimates: int = 30000,
           time_limit_s: float = 300.0, deadline: Optional[_Deadline] = None) -> SearchResult:
    """Find the rewrite with the smallest minimum arena on ``target`` after the
    offline-plan optimizer. Every plausible stage (or every stage ending at operator
    ``stage_end``) in every grid up to ``max_patches`` patches (or ``grid``) with each
    of SEARCH_POLICIES is estimated; with neither ``grid`` nor ``stage_end`` given, up
    to ``max_stages`` disjoint stages are combined (:func:`_cover_sets`). The best are
    refined with up to ``refine_moves`` estimates (:func:`_tune_patches`,
    :func:`_refine`; stages are scanned shortest first, up to ``max_estimates``), and the
    ``measure_top`` best are written, planned by the optimizer (``budget_s`` seconds)
    and measured exactly.

    Every step stops at ``time_limit_s`` seconds from the start (or at ``deadline``):
    the best found so far is then refined no further and only it is measured (one
    optimizer run), and :attr:`SearchResult.stopped_early` says where the search
    stopped; the result then depends on the machine's speed. Memory is bounded: the
    scan keeps at most :data:`MAX_FRONT` rewrites per stage (see :class:`_SingleStore`),
    without their programs."""
    deadline = deadline if deadline is not None else _Deadline(time_limit_s)
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

    stage_ops: List[Optional[StageOp]] = []
    for i in range(n):
        try:
            stage_ops.append(_stage_op(model, i))
        except PatchError as e:
            refuse(str(e))
            stage_ops.append(None)
    valid: Dict[Tuple[int, int], Stage] = {}
    for start in range(n):
        if deadline.expired(f"finding stages (operators from #{start} on not tried)"):
            break
        for end in range(start, n):
            if stage_ops[end] is None:
                break   # no stage reaches past an operator that cannot be cut
            if stage_end is not None and end != stage_end:
                continue
            try:
                valid[(start, end)] = analyse_stage(model, start, end, stage_ops)
            except PatchError as e:
                refuse(str(e))
    if stage_end is not None:
        stages = list(valid.values())
        if not stages and deadline.stopped is None:
            raise PatchError(f"no stage can end at operator #{stage_end}: " + "; ".join(refusals[:3]))
    else:
        stages = [s for s in valid.values() if _plausible(model, s, valid)]
    singles = _SingleStore(measure_top)
    estimated = 0
    base_live = int(live.max())
    best_known = base_live + profile.tail_bytes
    cover_every = 4   # re-run the cover search when this many more operators are reached
    policies = SEARCH_POLICIES if grid is None else POLICIES
    best_any: Optional[Candidate] = None
    stages.sort(key=lambda st: (st.end - st.start, st.start))
    scanning = "scanning stages"
    scan = _Budget(max_estimates, deadline, scanning)
    tried = 0
    for stage in stages:
        if scan.left <= 0 or deadline.expired(scanning):
            if scan.left <= 0:
                refuse(f"search stopped after {tried} of {len(stages)} stages (estimate limit); "
                       f"longer stages were not tried")
            break
        tried += 1
        length = stage.end - stage.start + 1
        if grid is None and stage_end is None and max_stages > 1 and length > cover_every and singles:
            cover_every *= 2
            covers = _cover_sets(singles, live, profile.tail_bytes, n, max_stages, 1, by_best=False,
                                 deadline=deadline)
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
                if deadline.expired(scanning):
                    break
                estimated += 1
                scan.spend()
                try:
                    prog = plan_rewrite(model, stage, g, policy)
                except PatchError as e:
                    refuse(f"operators {stage.start}..{stage.end} in {g[0]}x{g[1]} ({policy}): {e}")
                    continue
                for k in range(-1, len(prog.patches) - 1):
                    if deadline.expired(scanning):
                        break
                    variant = prog if k < 0 else hoisted(prog, k)
                    est = estimate(variant, profile)
                    if best_any is None or est.min_arena_bytes < best_any.estimate.min_arena_bytes:
                        best_any = Candidate([variant], est)
                    peak = est.region_peak(0)
                    if peak >= base_live:
                        continue   # does not lower the stage's own peak: useless alone and combined
                    singles.add(_Single(stage, g, policy, variant.hoist, peak, est.tail_bytes,
                                        est.min_arena_bytes, singles.count))
                    best_known = min(best_known, est.min_arena_bytes)
    if deadline.stopped == scanning:
        deadline.stopped = (f"scanning stages ({tried} of {len(stages)} started, shortest first; "
                            f"longer stages were not tried)")
    if not singles:
        return SearchResult([], estimated, refusals, len(stages), best_any, deadline.stopped)
    pool = []
    for x in singles.top:
        program = x.program(model)
        pool.append(Candidate([program], estimate(program, profile)))
    if grid is None and stage_end is None and max_stages > 1:
        for value, chosen in _cover_sets(singles, live, profile.tail_bytes, n, max_stages, 2 * measure_top,
                                         deadline=deadline):
            if len(chosen) < 2:
                continue
            programs = [x.program(model, slot_base(model, slot)) for slot, x in enumerate(chosen)]
            estimated += 1
            pool.append(Candidate(programs, estimate(programs, profile)))
    pool.sort(key=lambda c: c.estimate.min_arena_bytes)
    refined = []
    refine = _Budget(refine_moves, deadline, "refining the best rewrites")
    for c in pool[:2 * measure_top]:
        r = _tune_patches(_refine(_tune_patches(c, profile, deadline), profile, refine), profile, deadline)
        if all(r.describe() != o.describe() or
               [p.policy for p in r.programs] != [p.policy for p in o.programs] for o in refined):
            refined.append(r)
    estimated += refine.used
    refined.sort(key=lambda c: c.estimate.min_arena_bytes)
    measured = []
    late = deadline.expired("measuring the best rewrites")
    for c in refined[:1 if late else measure_top]:
        if measured and deadline.expired("measuring the best rewrites"):
            break
        written = plan_offline(build_model(c.programs), target, op_resolver, budget_s,
                               attempts=1 if late else 3)
        c.model = written.model
        c.min_arena_bytes = written.optimized_min_arena_bytes
        c.head_bytes = written.optimized_head_bytes
        measured.append(c)
    measured.sort(key=lambda c: c.min_arena_bytes)
    return SearchResult(measured, estimated, refusals, len(stages), best_any, deadline.stopped)
