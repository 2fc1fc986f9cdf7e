"""The TFLM oracle: the tflite-micro package run in worker subprocesses.

TFLM aborts the whole process on some models and arena sizes, so every request runs in a
worker process; a crash is reported as ``crashed`` and the worker is restarted.
"""
from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_worker.py")


def available() -> bool:
    try:
        import tflite_micro  # noqa: F401
    except Exception:
        return False
    return True


@dataclass
class OracleResult:
    ok: bool
    crashed: bool = False
    stage: str = ""
    error: str = ""
    outputs: List[np.ndarray] = field(default_factory=list)
    invokes: List[List[np.ndarray]] = field(default_factory=list)
    lines: Optional[List[str]] = None
    tensors: Dict[int, Any] = field(default_factory=dict)
    input_details: List[dict] = field(default_factory=list)
    output_details: List[dict] = field(default_factory=list)
    timings: List[float] = field(default_factory=list)
    cpu_timings: List[float] = field(default_factory=list)
    #: invoke()'s return value per run (0, or 15 = kTfLiteAbort)
    statuses: List[int] = field(default_factory=list)
    #: what TFLM printed (MicroPrintf) while serving the request, when asked with ``log``
    log: str = ""


class Oracle:
    """One worker process (restarted when it dies). Thread-safe."""

    def __init__(self, timeout: float = 120.0):
        self.timeout = timeout
        self._proc = None
        self._lock = threading.Lock()

    def _start(self):
        env = dict(os.environ)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        self._proc = subprocess.Popen([sys.executable, WORKER], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def close(self):
        if self._proc is not None:
            try:
                self._proc.kill()
                self._proc.wait(timeout=5)
            except Exception:
                pass
            self._proc = None

    def _request(self, req: dict) -> OracleResult:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            data = pickle.dumps(req, protocol=4)
            try:
                self._proc.stdin.write(struct.pack("<I", len(data)) + data)
                self._proc.stdin.flush()
                reply = self._read_reply()
            except (BrokenPipeError, EOFError, OSError, TimeoutError) as e:
                self.close()
                return OracleResult(ok=False, crashed=True, error=f"worker died: {e}")
            return _result(reply)

    def run_batch(self, requests: Sequence[dict]) -> List[OracleResult]:
        """Many :meth:`run`-style requests (dicts of its keyword arguments, ``model`` and
        ``inputs`` included) through one worker in one message; the worker answers each
        as it goes. A request on which TFLM ends the process is reported ``crashed`` (the
        worker serves batches from a forked child and forks another); should the worker
        itself die, the rest go to a fresh one."""
        results: List[OracleResult] = []
        pending = [_run_request(**r) for r in requests]
        with self._lock:
            while pending:
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                data = pickle.dumps({"batch": pending}, protocol=4)
                try:
                    self._proc.stdin.write(struct.pack("<I", len(data)) + data)
                    self._proc.stdin.flush()
                    while pending:
                        reply = self._read_reply()
                        results.append(_result(reply))
                        pending.pop(0)
                except (BrokenPipeError, EOFError, OSError, TimeoutError) as e:
                    self.close()
                    results.append(OracleResult(ok=False, crashed=True, error=f"worker died: {e}"))
                    pending.pop(0)
        return results

    def _read_exact(self, n: int) -> bytes:
        out = bytearray()      # amortised appends: replies of a gigabyte stay linear
        fd = self._proc.stdout.fileno()
        while len(out) < n:
            ready, _, _ = select.select([fd], [], [], self.timeout)
            if not ready:
                raise TimeoutError("oracle timed out")
            chunk = os.read(fd, n - len(out))
            if not chunk:
                raise EOFError("worker exited")
            out += chunk
        return bytes(out)

    def _read_reply(self) -> dict:
        (n,) = struct.unpack("<I", self._read_exact(4))
        return pickle.loads(self._read_exact(n))

    # ------------------------------------------------------------ requests
    def run(self, model: bytes, inputs: Sequence[np.ndarray] = (), arena_size: int = 1 << 20,
            preserve: bool = False, tensors: Sequence[int] = (), runs=None,
            details: bool = False, reset_between: bool = False,
            alt_decompression_memory_size: int = 0) -> OracleResult:
        """Allocate, set inputs, invoke; return outputs and print_allocations() lines."""
        return self._request(_run_request(model, inputs, arena_size, preserve, tensors, runs,
                                          details, reset_between, alt_decompression_memory_size))

    def time_invoke(self, model: bytes, inputs=(), arena_size: int = 1 << 20, warmup: int = 5,
                    runs: int = 50) -> List[float]:
        """Seconds per TFLM invoke() (after warm-up), measured inside the worker."""
        return self.invoke_timings(model, inputs, arena_size, warmup, runs)[0]

    def invoke_timings(self, model: bytes, inputs=(), arena_size: int = 1 << 20, warmup: int = 5,
                       runs: int = 50):
        """(wall-clock seconds, worker CPU seconds) of each timed TFLM invoke()."""
        r = self._request({"model": bytes(model), "inputs": [np.asarray(x) for x in inputs],
                           "arena_size": int(arena_size), "bench": {"warmup": warmup, "runs": runs}})
        if not r.ok:
            raise RuntimeError(f"TFLM failed: {r.error}")
        return r.timings, r.cpu_timings

    def time_loop(self, model: bytes, inputs: Sequence[np.ndarray], outputs: int,
                  arena_size: int = 1 << 20, keep: bool = False):
        """TFLM's per-sample loop over ``inputs`` (one array per model input with a leading
        sample axis): reset(), set_input(), invoke(), get_output() per sample, timed
        inside the worker. Returns ((wall seconds, CPU seconds of the worker) for the whole
        loop, the outputs stacked per model output when ``keep``, else [])."""
        r = self._request({"model": bytes(model), "inputs": [np.asarray(x) for x in inputs],
                           "arena_size": int(arena_size),
                           "loop": {"outputs": int(outputs), "keep": bool(keep)}})
        if not r.ok:
            raise RuntimeError(f"TFLM failed: {r.error}")
        return (r.timings[0], r.timings[1]), r.outputs

    def fits(self, model: bytes, arena_size: int, inputs=(), **kwargs) -> bool:
        return self.run(model, inputs, arena_size, **kwargs).ok

    def min_arena(self, model: bytes, inputs=(), high: int = 1 << 16, **kwargs) -> int:
        """TFLM's smallest working arena, by exact binary search (crash = too small)."""
        low = 0
        while not self.fits(model, high, inputs, **kwargs):
            low, high = high, high * 2
            if high > (1 << 30):
                raise RuntimeError("model does not fit 1 GiB in TFLM")
        while high - low > 1:
            mid = (low + high) // 2
            if self.fits(model, mid, inputs, **kwargs):
                high = mid
            else:
                low = mid
        return high


def _run_request(model: bytes, inputs: Sequence[np.ndarray] = (), arena_size: int = 1 << 20,
                 preserve: bool = False, tensors: Sequence[int] = (), runs=None,
                 details: bool = False, reset_between: bool = False,
                 alt_decompression_memory_size: int = 0, lines: bool = True,
                 log: bool = False) -> dict:
    """The worker's request for :meth:`Oracle.run` (``lines``: print_allocations() lines
    wanted; ``log``: TFLM's messages wanted)."""
    return {"model": bytes(model), "inputs": [np.asarray(x) for x in inputs],
            "arena_size": int(arena_size), "preserve": preserve, "tensors": list(tensors),
            "runs": runs, "details": details, "reset_between": reset_between,
            "alt_decompression_memory_size": int(alt_decompression_memory_size),
            "lines": lines, "log": log}


def _result(reply: dict) -> OracleResult:
    if reply.get("ok"):
        return OracleResult(**reply)
    return OracleResult(ok=False, crashed=reply.get("crashed", False), stage=reply.get("stage", ""),
                        error=reply.get("error", ""), log=reply.get("log", ""))


_SHARED: Optional[Oracle] = None


def shared_oracle() -> Oracle:
    global _SHARED
    if _SHARED is None:
        _SHARED = Oracle()
    return _SHARED
