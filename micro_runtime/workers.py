"""Worker processes: how many, and that they never outlive the process that started them.

One meaning of ``jobs`` everywhere (``--jobs`` of ``size`` and ``eval``,
``evaluate(jobs=...)``): ``0`` is one worker per processor this process may run on, ``N``
is at most ``N``; either way never more workers than processors, nor than pieces of
work (models, or samples). Workers ask the kernel to kill them when their parent dies
(Linux ``PR_SET_PDEATHSIG``), so an interrupted or killed command leaves none behind.
"""
from __future__ import annotations

import os
import signal

import numpy as np

from .errors import InputError


def available_processors() -> int:
    """Processors this process may run on (its CPU affinity where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_jobs(jobs, what: str = "jobs") -> int:
    """``jobs`` as an int: 0 (one per processor) or a positive count; :class:`InputError`
    naming ``what`` (``"--jobs"`` on the command line) otherwise."""
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 0:
        raise InputError(f"{what} must be 0 (one worker per processor) or a positive number of "
                         f"worker processes, not {jobs!r}")
    return int(jobs)


def worker_count(jobs, work: int, what: str = "jobs") -> int:
    """How many workers to start for ``work`` pieces of work when ``jobs`` are asked for
    (see the module): between 1 and min(processors, work)."""
    jobs = check_jobs(jobs, what)
    processors = available_processors()
    wanted = processors if jobs == 0 else min(jobs, processors)
    return int(max(1, min(wanted, int(work))))


def die_with_parent(parent_pid: int) -> None:
    """Called first in a worker process: have the kernel send SIGKILL to this process when
    its parent ends (Linux; elsewhere nothing), and end at once if the parent ``parent_pid``
    is already gone."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


__all__ = ["available_processors", "check_jobs", "worker_count", "die_with_parent"]
