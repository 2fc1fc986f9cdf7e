"""Model mutation fuzzing: mutate real models, then load + allocate + invoke.

Used by tests/test_fuzz.py (a bounded run in CI) and benchmarks/fuzz_models.py (long
runs). A run may end in success or in a MicroRuntimeError subclass; anything else, or
a run longer than the time limit, is a finding.
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_runtime import MicroInterpreter, MicroRuntimeError

MUTATIONS = ("bit_flip", "truncate", "splice", "edit_offset", "huge_dim", "zero_run")
#: arena for fuzz runs: enough for every zoo model, small enough to bound memory
FUZZ_ARENA_BYTES = 512 * 1024


def mutate(raw: bytes, rng: np.random.Generator, kind: Optional[str] = None) -> tuple:
    """One mutation of ``raw``; returns (kind, mutated bytes)."""
    kind = kind or MUTATIONS[int(rng.integers(len(MUTATIONS)))]
    data = bytearray(raw)
    n = len(data)
    if kind == "bit_flip":
        for _ in range(int(rng.integers(1, 9))):
            pos = int(rng.integers(n))
            data[pos] ^= 1 << int(rng.integers(8))
    elif kind == "truncate":
        data = data[: int(rng.integers(0, n))]
    elif kind == "splice":
        length = int(rng.integers(1, min(256, n)))
        src = int(rng.integers(0, n - length))
        dst = int(rng.integers(0, n - length))
        data[dst:dst + length] = raw[src:src + length]
    elif kind == "edit_offset":
        pos = int(rng.integers(0, max(1, n // 4))) * 4
        value = int(rng.choice([0, 1, 4, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, n, n - 4,
                                int(rng.integers(0, 1 << 32))]))
        if pos + 4 <= n:
            struct.pack_into("<I", data, pos, value)
    elif kind == "huge_dim":
        # overwrite small int32 values (likely shape entries / indices) with extremes
        words = np.frombuffer(bytes(data[: n - n % 4]), dtype="<i4")
        candidates = np.nonzero((words > 0) & (words < 4096))[0]
        if candidates.size:
            for _ in range(int(rng.integers(1, 4))):
                w = int(candidates[int(rng.integers(candidates.size))])
                struct.pack_into("<i", data, 4 * w,
                                 int(rng.choice([-1, 0, 1 << 20, 1 << 30, 0x7FFFFFFF, -(1 << 31)])))
    elif kind == "zero_run":
        start = int(rng.integers(0, n))
        data[start:start + int(rng.integers(1, 64))] = b"\x00" * min(64, n - start)
    return kind, bytes(data)


@dataclass
class Outcome:
    kind: str           #: mutation
    result: str         #: "ok", an exception class name, or "other:<class>"
    seconds: float
    message: str = ""


def run_one(data: bytes, kind: str = "") -> Outcome:
    """Load, allocate and invoke one (possibly corrupt) model."""
    start = time.perf_counter()
    try:
        it = MicroInterpreter(data, arena_size=FUZZ_ARENA_BYTES, target="host64",
                              error_reporter=lambda m: None)
        it.allocate_tensors()
        it.invoke()
        result, message = "ok", ""
    except MicroRuntimeError as e:
        result, message = type(e).__name__, str(e)[:200]
    except Exception as e:  # noqa: BLE001 - any other exception is a finding
        result, message = f"other:{type(e).__name__}", repr(e)[:300]
    return Outcome(kind, result, time.perf_counter() - start, message)
