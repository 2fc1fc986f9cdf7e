"""``optimize --patches``: search, write, plan and verify the rewritten model."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from ...errors import InputError, ModelError
from ...model import Model, load_model
from ...op_resolver import OpResolver
from ...targets import DEFAULT_TARGET, Target, get_target
from .geometry import PatchError
from .program import PatchProgram, model_macs
from .estimates import release_interpreters
from .searching import Candidate, _Deadline, plan_offline, search
from .writing import build_model


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
    stopped_early: Optional[str] = None  #: where the time limit cut the search short, if it did

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
                "stopped_early": self.stopped_early, "seconds": round(self.seconds, 3)}


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
    from ...api import count_resource_variables
    from ...interpreter import MicroInterpreter
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
    ``refine_moves``: see :func:`search`. ``time_limit_s``: seconds from the call after
    which the search stops and keeps the best rewrite found so far (see :func:`search`;
    :attr:`PatchResult.stopped_early` then says where); writing, planning (``budget_s``)
    and verifying that answer come after it.
    The written model's outputs are checked bit-identical to the input model's on
    ``verify_seeds`` seeded inputs in our interpreter before it is returned. Minimum
    arenas are for the RecordingMicroAllocator (``recording``, as the tflite-micro
    package) or the plain MicroAllocator (the search ranks by the former: the two differ
    by a constant)."""
    from ..optimizer import optimize_model
    start_time = time.perf_counter()
    deadline = _Deadline(time_limit_s)
    original = model if isinstance(model, Model) else load_model(model)
    target = get_target(target)
    if isinstance(grid, str):
        grid = None if grid == "auto" else parse_grid(grid)
    if stage_end is not None and not 0 <= stage_end < len(original.main.operators):
        raise InputError(f"--stage-end {stage_end}: the main subgraph has operators "
                         f"0..{len(original.main.operators) - 1}")
    forced = grid is not None
    plain = optimize_model(original, target, op_resolver, budget_s=budget_s, recording=recording)
    release_interpreters()
    result = search(original, target, grid, stage_end, op_resolver, max_patches=max_patches,
                    max_stages=max_stages, budget_s=budget_s, refine_moves=refine_moves,
                    deadline=deadline)
    chosen: Optional[Candidate] = result.measured[0] if result.measured else None
    if chosen is None and (forced or stage_end is not None):
        what = "grid" if forced else "stage"
        if result.stopped_early:
            raise PatchError(f"the time limit ({time_limit_s:g} s) was reached while "
                             f"{result.stopped_early}, before an exact rewrite for the requested "
                             f"{what} was found; give a larger --time-limit")
        raise PatchError(f"no exact rewrite exists for the requested {what}: "
                         + "; ".join(result.refusals[:3]))
    best_model, best_bytes = plain.model, plain.optimized_min_arena_bytes
    head = plain.optimized_head_bytes
    programs: List[PatchProgram] = []
    rejected = None
    if chosen is None and result.best_estimate is not None:
        rejected = (f"{result.best_estimate.describe()}: {result.best_estimate.estimate.min_arena_bytes} "
                    f"bytes (estimated)")
    elif chosen is None and result.stages and not result.stopped_early:
        rejected = ("none worth writing: for every stage and grid, the tail growth (a copy of the "
                    "stage's operators per extra patch) plus twice the exit tensor (the final "
                    "CONCATENATION) already reaches the current minimum arena")
    if chosen is not None:
        if recording:   # the search measured it so
            final_model, final_bytes, final_head = chosen.model, chosen.min_arena_bytes, chosen.head_bytes
        else:
            final = plan_offline(build_model(chosen.programs), target, op_resolver, budget_s, recording,
                                 attempts=1 if result.stopped_early else 3)
            final_model, final_bytes = final.model, final.optimized_min_arena_bytes
            final_head = final.optimized_head_bytes
        if forced or stage_end is not None or final_bytes < best_bytes:
            best_model, best_bytes, head = final_model, final_bytes, final_head
            programs = chosen.programs
        else:
            rejected = f"{chosen.describe()}: {final_bytes} bytes"
    written = load_model(best_model)
    verified = 0
    times = (0.0, 0.0)
    for seed in range(max(verify_seeds, 1) if programs else 0):
        inputs = seeded_inputs(original, seed)
        runs = 5 if seed == 0 else 0
        want = run_outputs(original, inputs, target, op_resolver, timed_runs=runs)
        got = run_outputs(written, inputs, target, op_resolver, timed_runs=runs)
        release_interpreters()
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
                       original_invoke_s=times[0], invoke_s=times[1], stopped_early=result.stopped_early)
