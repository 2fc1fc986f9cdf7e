"""Hostile inputs and misuse: each test checks one mechanism across every surface it
guards (one test per mechanism, not per reported case).

Cases that hung, or grew without bound, before the mechanism existed run in a
subprocess with a time limit and an address-space limit, so a regression fails the test
instead of stopping the suite.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.helpers import model_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: address space of a guarded subprocess (bytes): room for numpy and the interpreter
GUARD_AS_BYTES = 3 << 30


def guarded(source: str, timeout: float = 120.0, limit_as: int = GUARD_AS_BYTES) -> dict:
    """Run ``source`` (which prints one JSON object as its last line) in a fresh
    interpreter whose address space is at most ``limit_as`` bytes; returns that object.
    A time-out or a crash fails the calling test."""
    prologue = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({limit_as}, {limit_as}))
        sys.path.insert(0, {ROOT!r})
    """)
    env = dict(os.environ, PYTHONPATH=ROOT)
    try:
        done = subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(source)],
                              capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {timeout} s (a hang)")
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, f"status {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(lines[-1])


CLI_CALLS = """
    import contextlib, io, json
    from micro_runtime.tools.cli import main

    def cli(*args):
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main([str(a) for a in args])
        except BaseException as e:          # anything escaping main() is a finding
            return {"status": "raised", "error": repr(e)[:300]}
        return {"status": status, "error": err.getvalue().strip()}
"""


# --------------------------------------------------------------- non-regular files
def test_only_regular_files_are_read_by_every_reader(tmp_path):
    """A model or input path that is a character device (/dev/zero: endless bytes), a
    FIFO (an open blocks until a writer comes) or a directory is refused before any byte
    is read, by load_model, MicroInterpreter, the API and every command that reads a
    model, an input or labels; the error is one line naming the path."""
    fifo = tmp_path / "pipe.tflite"
    os.mkfifo(fifo)
    model = model_path("hello_world_float")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 1), np.float32))
    result = guarded(CLI_CALLS + f"""
    from micro_runtime import MicroInterpreter, MicroRuntimeError, load_model
    from micro_runtime.api import Interpreter
    out = {{}}
    for bad in ("/dev/zero", {str(fifo)!r}, {str(tmp_path)!r}):
        for name, call in (("load_model", load_model), ("MicroInterpreter", MicroInterpreter),
                           ("Interpreter.from_file", Interpreter.from_file)):
            try:
                call(bad)
                out[name + " " + bad] = "accepted"
            except MicroRuntimeError as e:
                out[name + " " + bad] = "refused: " + str(e)
        for verb in ("size", "audit", "plan", "run", "info", "drift", "bench", "ops"):
            out[verb + " " + bad] = cli(verb, bad)
        out["eval " + bad] = cli("eval", bad, "--inputs", {str(x)!r})
        model = {model!r}
        out["run --input " + bad] = cli("run", model, "--input", bad)
        out["eval --inputs " + bad] = cli("eval", model, "--inputs", bad)
        out["eval --labels " + bad] = cli("eval", model, "--inputs", {str(x)!r}, "--labels", bad)
        out["drift --input " + bad] = cli("drift", model, "--input", bad)
        out["optimize " + bad] = cli("optimize", bad, "-o", {str(tmp_path / "o.tflite")!r})
    print(json.dumps(out))
    """)
    for case, outcome in result.items():
        if isinstance(outcome, str):
            # Interpreter.from_file keeps the tflite-micro wrapper's message
            assert outcome.startswith("refused") and ("not a regular file" in outcome or
                                                      "Invalid model file path" in outcome), (case, outcome)
        elif case == f"size {tmp_path}":
            # a directory is a sweep: its FIFO is one failed row, the sweep ends (status 1)
            assert outcome["status"] == 1, (case, outcome)
        else:
            assert outcome["status"] == 1, (case, outcome)
            assert outcome["error"].count("\n") == 0 and "not a regular file" in outcome["error"], (case, outcome)


def test_a_file_over_its_limit_is_refused_from_its_size(tmp_path):
    """Sizes are checked before reading: an input file larger than one sample of the
    model's input can hold (8 bytes per element plus a header), a data set over
    MICRO_RUNTIME_MAX_ARRAY_BYTES, and a .npy header claiming more bytes than the file
    stores (a shape of (2^40, 1)) are refused without allocating them; so are the files
    numpy's np.load fails on with exceptions of its own (empty, .npz)."""
    from numpy.lib import format as npy_format
    model = model_path("hello_world_float")
    big = tmp_path / "big.npy"
    np.save(big, np.zeros((100000, 1), np.float32))
    claim = tmp_path / "claim.npy"
    with open(claim, "wb") as f:
        npy_format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False,
                                              "shape": (1 << 40, 1)})
        f.write(b"\0" * 16)
    empty, npz = tmp_path / "empty.npy", tmp_path / "x.npz"
    empty.write_bytes(b"")
    np.savez(npz, a=np.zeros(1))
    result = guarded(CLI_CALLS + f"""
    import os
    out = {{"run big": cli("run", {model!r}, "--input", {str(big)!r})}}
    for name in ("claim", "empty", "npz"):
        path = {{"claim": {str(claim)!r}, "empty": {str(empty)!r}, "npz": {str(npz)!r}}}[name]
        out["run " + name] = cli("run", {model!r}, "--input", path)
        out["eval " + name] = cli("eval", {model!r}, "--inputs", path)
        out["drift " + name] = cli("drift", {model!r}, "--input", path)
    os.environ["MICRO_RUNTIME_MAX_ARRAY_BYTES"] = "1000"
    out["eval big"] = cli("eval", {model!r}, "--inputs", {str(big)!r})
    print(json.dumps(out))
    """, limit_as=1 << 30)
    expected = {"big": "more than the", "claim": "header says shape (1099511627776, 1)",
                "empty": "empty file", "npz": ".npz archive"}
    for case, outcome in result.items():
        assert outcome["status"] == 1 and expected[case.split()[1]] in outcome["error"], (case, outcome)


# ------------------------------------------------------------------ offline plans
def offline_plan_model(offset: int, tensor: int = 7) -> bytes:
    """hello_world_int8 with one tensor (default #7, the first layer's output, 16 bytes)
    at ``offset`` in an OfflineMemoryAllocation plan, every other tensor online."""
    from micro_runtime import load_model
    from micro_runtime.tools.optimizer import write_offline_plan
    return write_offline_plan(load_model(model_path("hello_world_int8")), {tensor: offset})


def test_offline_plans_are_checked_before_memory_is_touched(oracle):
    """An offset TFLM cannot honour is a ModelError naming the tensor, on every surface
    and whatever the arena: negative (other than -1, 'online'), ending beyond 2^31 - 1
    (TFLM's int sum overflows), or any offset under the linear planner. TFLM refuses
    the same models (its allocation fails)."""
    from micro_runtime import MicroInterpreter, ModelError
    from micro_runtime.api import Interpreter
    from micro_runtime.tools.sizing import measure_arena
    x = np.zeros((1, 1), np.int8)
    cases = {"negative": (offline_plan_model(-64), "offline offset -64"),
             "negative, end inside": (offline_plan_model(-2), "offline offset -2"),
             "overflow": (offline_plan_model((1 << 31) - 16), r"beyond 2\^31 - 1")}
    for name, (raw, words) in cases.items():
        for arena in (1 << 12, 1 << 20, 1 << 30):
            with pytest.raises(ModelError, match=words):
                MicroInterpreter(raw, arena_size=arena, target="host64",
                                 error_reporter=lambda m: None).allocate_tensors()
        with pytest.raises(ModelError, match=words):
            measure_arena(raw, "host64")
        with pytest.raises(ModelError, match=words):
            Interpreter.from_bytes(raw, error_reporter=lambda m: None)
        if name != "negative, end inside":     # TFLM writes before its arena there
            assert not oracle.run(raw, [x], arena_size=1 << 20).ok, name
    raw = offline_plan_model(0)
    with pytest.raises(ModelError, match="LinearMemoryPlanner"):
        MicroInterpreter(raw, arena_size=1 << 16, planner="linear",
                         error_reporter=lambda m: None).allocate_tensors()
    assert not oracle.run(raw, [x], arena_size=1 << 16, preserve=True).ok


def test_sizing_takes_no_more_host_memory_than_the_figure_it_reports(oracle, tmp_path):
    """A valid offline offset far into the arena: the exact minimum is reported (TFLM
    runs at that size and fails one byte below), while the sizing pass takes host memory
    only for the bytes used: with an offset near 2 GiB, `size`, `info`, measure_arena and
    min_arena_bytes() answer under a 1 GiB address-space limit. A model whose planned
    tensors need more host memory than there is gets a LimitError, not a MemoryError."""
    from micro_runtime.tools.sizing import measure_arena
    mid = offline_plan_model(1 << 24)
    need = measure_arena(mid, "host64").min_arena_bytes
    x = np.zeros((1, 1), np.int8)
    assert oracle.run(mid, [x], arena_size=need).ok and not oracle.run(mid, [x], arena_size=need - 1).ok
    far = tmp_path / "far.tflite"
    far.write_bytes(offline_plan_model((1 << 31) - 4096))
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    t = g.add_tensor("x", (1, 3 << 28), "FLOAT32")     # 3 GiB each
    u = g.add_tensor("y", (1, 3 << 28), "FLOAT32")
    g.add_operator("ADD", [t, t], [u], fused_activation_function=0)
    g.inputs, g.outputs = [t], [u]
    huge = tmp_path / "huge.tflite"
    huge.write_bytes(b.build())
    result = guarded(CLI_CALLS + f"""
    import resource
    from micro_runtime import MicroInterpreter, MicroRuntimeError
    from micro_runtime.tools.sizing import measure_arena
    out = {{"size": cli("size", {str(far)!r}, "--target", "host64", "--json"),
           "info": cli("info", {str(far)!r}, "--target", "host64", "--json")}}
    out["measure"] = measure_arena({str(far)!r}, "host64").min_arena_bytes
    it = MicroInterpreter({str(far)!r}, arena_size=1 << 16, target="host64", recording=True,
                          error_reporter=lambda m: None)
    out["min_arena_bytes"] = it.min_arena_bytes()
    try:
        measure_arena({str(huge)!r}, "host64")
        out["huge"] = "sized"
    except MicroRuntimeError as e:
        out["huge"] = type(e).__name__ + ": " + str(e)
    out["peak_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out))
    """, limit_as=1 << 30)
    assert result["size"]["status"] == 0 and result["info"]["status"] == 0, result
    assert result["measure"] == result["min_arena_bytes"] == 2147481040
    assert result["huge"].startswith("LimitError: this host cannot allocate"), result["huge"]
    assert result["peak_kib"] < 400 * 1024
