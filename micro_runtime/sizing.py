"""Arena sizing: the exact smallest arena for a model, and where its bytes go.

TFLM users find the arena size by trial on hardware, and TFLM's own "Arena allocation
total" can under-report it: temporaries (temporary TfLiteTensors during prepare, the
memory planner's scratch) peak while tensors are being allocated and are gone by the
time the total is printed. Here the whole allocation timeline is recorded (allocation
plus one invoke) and replayed, so the minimum is exact.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Optional, Union

from arena.arena import min_arena_bytes, replay

from .interpreter import MicroInterpreter
from .model import Model, load_model
from .op_resolver import OpResolver
from .targets import Target, get_target


@dataclass
class ArenaSize:
    """Arena figures of one model on one target (all bytes)."""

    target: str
    allocator: str                 #: "recording" (as the tflite-micro package) or "plain"
    min_arena_bytes: int           #: smallest arena with which allocation + invoke succeed
    head_bytes: int                #: planned non-persistent section
    tail_bytes: int                #: persistent section after allocation
    temp_peak_bytes: int           #: highest end of temporaries above the arena start
    timeline_peak_bytes: int       #: largest max(head, temp) + tail at any moment
    tflm_reported_total_bytes: int  #: what TFLM's "Arena allocation total" prints
    plain_min_arena_bytes: int     #: same model with the default (non-recording) MicroAllocator

    def as_dict(self) -> dict:
        return asdict(self)


def _probe(model: Model, target: Target, resolver: Optional[OpResolver], recording: bool,
           planner: str) -> MicroInterpreter:
    from .api import count_resource_variables
    size = max(len(model.raw) * 10, 1 << 20)
    last_error = None
    for _ in range(8):
        it = MicroInterpreter(model, resolver, size, target=target, recording=recording,
                              planner=planner, num_resource_variables=count_resource_variables(model),
                              error_reporter=lambda m: None)
        try:
            it.allocate_tensors()
        except Exception as e:  # noqa: BLE001 - retried with a larger arena if too small
            from .errors import ArenaTooSmallError
            if not isinstance(e, ArenaTooSmallError):
                raise
            last_error = e
            size *= 4
            continue
        it.invoke()
        return it
    raise last_error


def measure_arena(model: Union[Model, str, os.PathLike, bytes], target: Union[str, Target] = "mcu32",
                  op_resolver: Optional[OpResolver] = None, recording: bool = True,
                  planner: str = "greedy") -> ArenaSize:
    """Exact arena figures for ``model`` on ``target`` (allocation + one invoke on zeros)."""
    model = model if isinstance(model, Model) else load_model(model)
    target = get_target(target)
    it = _probe(model, target, op_resolver, recording, planner)
    minimum = min_arena_bytes(it.arena.trace, upper_bound=it.arena.stats.total_peak or 1024)
    at_min = replay(it.arena.trace, minimum)
    plain = it if not recording else _probe(model, target, op_resolver, False, planner)
    plain_min = minimum if not recording else min_arena_bytes(
        plain.arena.trace, upper_bound=plain.arena.stats.total_peak or 1024)
    return ArenaSize(
        target=target.name, allocator="recording" if recording else "plain",
        min_arena_bytes=minimum, head_bytes=at_min.head_bytes,
        tail_bytes=at_min.persistent_used_bytes, temp_peak_bytes=at_min.stats.temp_peak,
        timeline_peak_bytes=at_min.stats.total_peak,
        tflm_reported_total_bytes=at_min.head_bytes + at_min.persistent_used_bytes,
        plain_min_arena_bytes=plain_min)

