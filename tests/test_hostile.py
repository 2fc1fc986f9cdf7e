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
    model, an input or expected outputs; the error is one line naming the path."""
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
        out["eval --targets " + bad] = cli("eval", model, "--inputs", {str(x)!r}, "--targets", bad)
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
    """Sizes are checked before reading: a data set (for eval, or a batch for run) over
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
    out = {{}}
    for name in ("claim", "empty", "npz"):
        path = {{"claim": {str(claim)!r}, "empty": {str(empty)!r}, "npz": {str(npz)!r}}}[name]
        out["run " + name] = cli("run", {model!r}, "--input", path)
        out["eval " + name] = cli("eval", {model!r}, "--inputs", path)
        out["drift " + name] = cli("drift", {model!r}, "--input", path)
    os.environ["MICRO_RUNTIME_MAX_ARRAY_BYTES"] = "1000"
    out["eval big"] = cli("eval", {model!r}, "--inputs", {str(big)!r})
    out["run big"] = cli("run", {model!r}, "--input", {str(big)!r})
    del os.environ["MICRO_RUNTIME_MAX_ARRAY_BYTES"]
    out["run many"] = cli("run", {model!r}, "--input", {str(big)!r})
    print(json.dumps(out))
    """, limit_as=1 << 30)
    expected = {"big": "more than the", "many": "run takes at most 10000",
                "claim": "header says shape (1099511627776, 1)",
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
    def status_kib(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")        # the peak restarts from here: the fork's inherited pages are not ours
    start_kib = status_kib("VmRSS:")
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
    out["peak_kib"] = status_kib("VmHWM:") - start_kib
    print(json.dumps(out))
    """, limit_as=1 << 30)
    assert result["size"]["status"] == 0 and result["info"]["status"] == 0, result
    assert result["measure"] == result["min_arena_bytes"] == 2147481040
    assert result["huge"].startswith("LimitError: this host cannot allocate"), result["huge"]
    assert result["peak_kib"] < 400 * 1024


# ------------------------------------------------------------------------- loops
def test_sizing_paths_bound_the_loop_iterations(tmp_path):
    """A WHILE whose condition is always true (TFLM loops forever) ends every sizing path
    with a LimitError naming the op and the bound: measure_arena, min_arena_bytes(), the
    size that works in an ArenaTooSmallError (then unknown), and size / info / audit /
    plan. The bound counts every loop of one invoke together: nested loops of 200 x 200
    iterations pass any per-loop bound but not the total. --max-loop-iterations and
    measure_arena(max_loop_iterations=...) change it."""
    from tests.fuzzing import loop_model
    forever, nested, small = tmp_path / "forever.tflite", tmp_path / "nested.tflite", tmp_path / "small.tflite"
    forever.write_bytes(loop_model(None))
    nested.write_bytes(loop_model(200, 200))
    small.write_bytes(loop_model(30, 30))          # 930 iterations
    result = guarded(CLI_CALLS + f"""
    from micro_runtime import ArenaTooSmallError, LimitError, MicroInterpreter
    from micro_runtime.tools.sizing import measure_arena
    out = {{}}
    for name in ("forever", "nested"):
        path = {{"forever": {str(forever)!r}, "nested": {str(nested)!r}}}[name]
        try:
            measure_arena(path, "host64")
            out["measure " + name] = "sized"
        except LimitError as e:
            out["measure " + name] = str(e)
    it = MicroInterpreter({str(forever)!r}, arena_size=1 << 16, target="host64", error_reporter=lambda m: None)
    try:
        it.min_arena_bytes()
    except LimitError as e:
        out["min_arena_bytes"] = str(e)
    try:
        MicroInterpreter({str(forever)!r}, arena_size=64, target="host64",
                         error_reporter=lambda m: None).allocate_tensors()
    except ArenaTooSmallError as e:
        out["too small"] = e.min_arena_bytes
    for verb in ("size", "info", "audit", "plan"):
        out[verb] = cli(verb, {str(forever)!r}, "--target", "host64")
    out["size small"] = cli("size", {str(small)!r}, "--target", "host64")
    out["size small bounded"] = cli("size", {str(small)!r}, "--target", "host64", "--max-loop-iterations", "500")
    out["measure small bounded"] = measure_arena({str(small)!r}, "host64", max_loop_iterations=930).min_arena_bytes
    print(json.dumps(out))
    """, timeout=200)
    for key in ("measure forever", "measure nested", "min_arena_bytes"):
        assert result[key].startswith("WHILE (operator #") and "10000 iterations" in result[key], result[key]
    assert result["too small"] is None
    for verb in ("size", "info", "audit", "plan"):
        outcome = result[verb]
        if verb == "info":      # info reports what it could not measure and goes on
            assert outcome["status"] == 0, outcome
        else:
            assert outcome["status"] == 1 and "10000 iterations" in outcome["error"], (verb, outcome)
            assert outcome["error"].count("\n") == 0
    assert result["size small"]["status"] == 0
    assert result["size small bounded"]["status"] == 1 and "500 iterations" in result["size small bounded"]["error"]
    assert result["measure small bounded"] > 0


def test_invoke_follows_tflm_but_stays_interruptible(tmp_path):
    """run / invoke have no loop bound by default (TFLM's behaviour): Ctrl-C (SIGINT)
    ends `run` with one line 'error: interrupted' and status 130, and an interpreter
    whose invoke was interrupted invokes again correctly. --max-loop-iterations /
    max_loop_iterations set a bound (LimitError, status 1)."""
    import signal
    import time
    from tests.fuzzing import loop_model
    forever = tmp_path / "forever.tflite"
    forever.write_bytes(loop_model(None))
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((), np.int32))
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "micro_runtime", "run", str(forever), "--input", str(x),
           "--arena-size", "65536", "--target", "host64"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4)
        assert proc.poll() is None, proc.communicate()      # still looping, as TFLM
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and err == "error: interrupted\n", (proc.returncode, err)
    bounded = subprocess.run(cmd + ["--max-loop-iterations", "100"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    assert bounded.returncode == 1 and "ran 100 iterations" in bounded.stderr, bounded.stderr
    assert bounded.stderr.count("\n") == 1
    # the API: an interrupted invoke leaves the interpreter usable
    from micro_runtime import LimitError, MicroInterpreter
    counting = loop_model(1_000_000)
    it = MicroInterpreter(counting, arena_size=1 << 16, target="host64")
    it.allocate_tensors()
    it.set_input(np.array(0, np.int32))

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(KeyboardInterrupt):
            it.invoke()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    it.set_input(np.array(999_990, np.int32))
    it.invoke()
    assert int(it.output(0)) == 1_000_000
    clean = MicroInterpreter(counting, arena_size=1 << 16, target="host64")
    clean.allocate_tensors()
    clean.set_input(np.array(999_990, np.int32))
    clean.invoke()
    assert it.min_arena_bytes() == clean.min_arena_bytes()
    it.max_loop_iterations = 5
    with pytest.raises(LimitError, match="ran 5 iterations"):
        it.invoke()


# ------------------------------------------------------------------ option ranges
def test_every_numeric_option_has_a_range(tmp_path):
    """A numeric option outside its documented range is one line on stderr and status 1,
    checked before any work (never a MemoryError, OverflowError or numpy's ValueError):
    plan --width 10^9 once asked for a 10^9-character chart, bench --seed -1 reached
    numpy, --alt-decompression-memory 2^70 a bytearray. The range is in each option's
    --help."""
    model = model_path("hello_world_float")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((3, 1), np.float32))
    out = str(tmp_path / "o.tflite")
    big = str(1 << 70)
    bad = [
        ("plan", model, "--width", "1000000000"), ("plan", model, "--width", "5"),
        ("bench", model, "--seed", "-1"), ("bench", model, "--seed", big),
        ("bench", model, "--num_runs", "1000000000000"), ("bench", model, "--warmup_runs", "-1"),
        ("size", model, "--alt-decompression-memory", big), ("size", model, "--alt-decompression-memory", "-1"),
        ("audit", model, "--arena-size", big), ("run", model, "--arena-size", "-5", "--input", str(x)),
        ("eval", model, "--inputs", str(x), "--batch", "0"),
        ("eval", model, "--inputs", str(x), "--batch", "1000000000000"),
        ("eval", model, "--inputs", str(x), "--output-index", big),
        ("drift", model, "--seeds", "1000000000"),
        ("size", model, "--max-loop-iterations", "-1"), ("run", model, "--max-loop-iterations", big),
        ("optimize", model, "-o", out, "--budget", "nan"), ("optimize", model, "-o", out, "--budget", "inf"),
        ("optimize", model, "-o", out, "--patches", "--time-limit", "inf"),
        ("optimize", model, "-o", out, "--patches", "--max-stages", "1000000000"),
        ("optimize", model, "-o", out, "--patches", "--refine-moves", "-1"),
    ]
    result = guarded(CLI_CALLS + f"""
    print(json.dumps([cli(*args) for args in {bad!r}]))
    """, limit_as=2 << 30, timeout=300)
    for args, outcome in zip(bad, result):
        option = next(a for a in args if a.startswith("--") and a not in ("--input", "--inputs", "--patches"))
        assert outcome["status"] == 1, (args, outcome)
        assert outcome["error"].count("\n") == 0 and option in outcome["error"], (args, outcome)
    import contextlib
    import io
    from micro_runtime.tools.cli import main
    for verb, option in (("plan", "--width"), ("bench", "--seed"), ("size", "--max-loop-iterations")):
        text = io.StringIO()
        with contextlib.redirect_stdout(text), pytest.raises(SystemExit):
            main([verb, "--help"])
        help_text = " ".join(text.getvalue().split())
        assert "[range:" in help_text.rsplit(option, 1)[1].split(" --", 1)[0], (verb, option)


# ------------------------------------------------------------- kernels in prepare
RAW_IN_KERNEL = __import__("re").compile(r"failed to (prepare|invoke): [A-Za-z]*(Error|Exception)")

#: (op, variant) whose TFLM run is undefined, so we refuse it although the package's
#: process survives: TFLM reads output 0 of a node without outputs, or writes outputs
#: whose sizes do not add up to what the op computes
UNDEFINED_COUNTS = {("CONCATENATION", "+input"), ("CONCATENATION", "-input"),
                    ("SPLIT", "+output"), ("SPLIT", "-output"), ("SPLIT_V", "+output"),
                    ("SPLIT_V", "-output"), ("UNPACK", "+output"), ("UNPACK", "-output")}


def test_operator_input_and_output_counts_as_tflm(oracle):
    """Every registered op with one input or output more or fewer than its valid model
    (tests/count_cases.py): where TFLM runs it with defined results we run it with the
    same outputs (extra inputs / outputs ignored as TFLM ignores them); where TFLM refuses
    (or its result is undefined) we refuse in prepare with a MicroRuntimeError in our
    own words: never a Python error from inside a kernel."""
    from micro_runtime import MicroInterpreter, MicroRuntimeError, load_model
    from micro_runtime.api import count_resource_variables
    from tests.count_cases import all_variants
    variants = all_variants()
    theirs = oracle.run_batch([dict(model=m, inputs=i, arena_size=1 << 18, lines=False, log=True)
                               for _, _, m, i in variants])
    wrong = []
    for (op, kind, model, inputs), tflm in zip(variants, theirs):
        outputs = len(load_model(model).main.outputs) - (kind == "+output")
        try:
            it = MicroInterpreter(model, arena_size=1 << 18, target="host64",
                                  num_resource_variables=count_resource_variables(load_model(model)),
                                  error_reporter=lambda m: None)
            it.allocate_tensors()
            for k, x in enumerate(inputs):
                it.set_input(x, k)
            it.invoke()
            ours, error = [np.array(it.output(k)) for k in range(outputs)], None
        except MicroRuntimeError as e:
            ours, error = None, str(e)
        if error is not None and RAW_IN_KERNEL.search(error):
            wrong.append(f"{op} {kind}: a Python error inside the kernel: {error[:160]}")
        elif not tflm.ok and ours is not None:
            wrong.append(f"{op} {kind}: TFLM refuses ({'crash' if tflm.crashed else tflm.log[:100]!r}), we run it")
        elif tflm.ok and ours is None and kind != "-output" and (op, kind) not in UNDEFINED_COUNTS:
            wrong.append(f"{op} {kind}: TFLM runs it, we refuse: {error[:160]}")
        elif tflm.ok and ours is not None:
            for k, (a, b) in enumerate(zip(ours, tflm.outputs[:outputs])):
                if not np.array_equal(a, b):
                    wrong.append(f"{op} {kind}: output {k} differs from TFLM's")
    assert len(variants) > 400
    assert not wrong, "\n".join(wrong)


def test_kernels_refuse_in_prepare_with_tflm_reasons(oracle):
    """The cases that reached users as Python errors inside KernelError messages, each
    now as TFLM has it: an output that is a constant tensor is refused in prepare (TFLM
    would write into the model); ADD with 5 inputs runs on the first two; a
    FULLY_CONNECTED output scale of 0 or nan fails TFLM's bias-scale check with its
    words, a negative or infinite one runs as TFLM runs it; weights with a zero
    dimension give TFLM's outputs; tensor('a') is an InputError."""
    from micro_runtime import InputError, KernelError, MicroInterpreter
    from micro_runtime.tools.model_writer import ModelBuilder
    from tests.helpers import TensorDef, run_ours, single_op_model

    def ours(model, inputs):
        try:
            return run_ours(model, inputs, recording=False)[0], None
        except KernelError as e:
            return None, e

    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    y = g.add_tensor("y", (4,), "FLOAT32", data=np.ones(4, np.float32))
    g.add_operator("ADD", [x, x], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    it = MicroInterpreter(b.build(), arena_size=1 << 16, error_reporter=lambda m: None)
    with pytest.raises(KernelError, match="output 0 .* is a constant tensor of the model"):
        it.allocate_tensors()

    ones = np.ones(4, np.float32)
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    y = g.add_tensor("y", (4,), "FLOAT32")
    g.add_operator("ADD", [x] * 5, [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    cases = [("ADD x5", b.build(), [ones])]
    for s_out in (0.0, float("nan"), -0.5, float("inf"), 1e-45, 3e38):
        cases.append((f"FC out scale {s_out}", single_op_model("FULLY_CONNECTED", [
            TensorDef((1, 4), "INT8", quant=(0.5, 0)),
            TensorDef((3, 4), "INT8", data=np.ones((3, 4), np.int8), quant=(0.5, 0)),
            TensorDef((3,), "INT32", data=np.arange(3, dtype=np.int32), quant=([0.25], [0]))],
            [TensorDef((1, 3), "INT8", quant=(s_out, 0))]), [np.ones((1, 4), np.int8)]))
    cases.append(("FC weights (3, 0)", single_op_model("FULLY_CONNECTED", [
        TensorDef((1, 4), "FLOAT32"), TensorDef((3, 0), "FLOAT32", data=np.zeros((3, 0), np.float32))],
        [TensorDef((1, 3), "FLOAT32")]), [np.ones((1, 4), np.float32)]))
    for name, model, inputs in cases:
        tflm = oracle.run_batch([dict(model=model, inputs=inputs, log=True)])[0]
        got, error = ours(model, inputs)
        if tflm.ok:
            assert error is None and all(np.array_equal(a, b) for a, b in zip(got, tflm.outputs)), \
                (name, error, got, tflm.outputs)
        else:
            assert error is not None and not RAW_IN_KERNEL.search(str(error)), (name, error)
            assert "scale_diff / output_scale <= 0.02 was not true" in str(error), (name, error)
            assert "scale_diff / output_scale <= 0.02" in tflm.log
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    it.allocate_tensors()
    for bad in ("a", 1.5, None):
        with pytest.raises(InputError, match="must be an integer"):
            it.tensor(bad)
    with pytest.raises(InputError, match="must be a string"):
        it.get_input_index(3)


# ------------------------------------------------------------------ fuzz families
def test_every_hostile_family_runs_clean_in_its_own_process(oracle, tmp_path):
    """Two cases of each family of benchmarks/fuzz_hostile.py (offline plans, control
    flow, run-time shapes, quantization extremes, non-regular files, option values,
    mutations), each in a forked child with a 2 GiB address-space limit and 10 s: no
    raw exception, no time-out, and where both run, TFLM's outputs."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import fuzz_hostile
    finally:
        sys.path.pop(0)
    from tests.hostile_cases import FAMILIES, make_case
    from micro_runtime.op_resolver import default_op_resolver
    default_op_resolver()
    bad = []
    for i in range(2 * len(FAMILIES)):
        family = FAMILIES[i % len(FAMILIES)]
        case = make_case(family, np.random.default_rng([7, i]), str(tmp_path))
        record = fuzz_hostile.run_case(case, str(tmp_path), 10.0, 2 << 30)
        if record["result"].startswith(("raw:", "timeout", "killed:")):
            bad.append((family, case.description, record["result"], record["message"]))
        elif record["result"] == "ok" and case.compare and case.model is not None and record["outputs"]:
            verdict = fuzz_hostile.compare_with_tflm(oracle, case, record["outputs"])
            if verdict == "differ":
                bad.append((family, case.description, "differs from TFLM", ""))
    assert not bad, bad


def test_a_tensor_read_before_anything_writes_it_is_sized_but_not_run():
    """A graph whose operator reads a tensor that is no input, constant, variable or
    earlier output (the fuzz made such graphs by re-wiring graph inputs): TFLM allocates
    it and reads whatever its arena holds there, so its outputs are undefined. Allocation
    and sizing go on; invoke is refused naming the operator and the tensor, on every
    surface."""
    from micro_runtime import MicroInterpreter, ModelError
    from micro_runtime.api import Interpreter
    from micro_runtime.tools.model_writer import ModelBuilder
    from micro_runtime.tools.sizing import measure_arena
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    h = g.add_tensor("h", (4,), "FLOAT32")         # never written
    y = g.add_tensor("y", (4,), "FLOAT32")
    g.add_operator("ADD", [x, h], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    raw = b.build()
    assert measure_arena(raw, "host64").min_arena_bytes > 0
    for make in (lambda: MicroInterpreter(raw, arena_size=1 << 16),
                 lambda: Interpreter.from_bytes(raw, error_reporter=lambda m: None)):
        it = make()
        with pytest.raises(ModelError, match=r"input 1 \(tensor #1 'h'\) is read before anything writes it"):
            it.invoke()
    # a model output no operator writes (the fuzz dropped the operators, or re-wired one
    # to write a model input): what TFLM hands over differs from run to run
    from micro_runtime.batched import Evaluator
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    y = g.add_tensor("y", (4,), "FLOAT32")
    g.add_operator("RELU", [x], [x])
    g.inputs, g.outputs = [x], [y]
    raw = b.build()
    assert measure_arena(raw, "host64").min_arena_bytes > 0
    for make in (lambda: MicroInterpreter(raw, arena_size=1 << 16),
                 lambda: Interpreter.from_bytes(raw, error_reporter=lambda m: None)):
        with pytest.raises(ModelError, match=r"output 0 of subgraph 0 \(tensor #1 'y'\) is never written"):
            make().invoke()
    with pytest.raises(ModelError, match="is never written"):
        Evaluator(raw, target="host64")


def test_a_model_beyond_the_nominal_arena_is_an_arena_error():
    """Tensors of more than 2^40 bytes: the sizing pass fails in its nominal arena and
    says so (ArenaTooSmallError), without a further sizing pass for the size that would
    work (which recursed without end), from measure_arena, resize_input_tensor and an
    interpreter's too-small arena."""
    from micro_runtime import ArenaTooSmallError, MicroInterpreter
    from micro_runtime.api import Interpreter
    from micro_runtime.tools.model_writer import ModelBuilder
    from micro_runtime.tools.sizing import measure_arena
    from tests.helpers import model_bytes
    it = Interpreter.from_bytes(model_bytes("hello_world_float"), arena_size=1 << 20)
    with pytest.raises(ArenaTooSmallError, match="Failed to resize buffer"):
        it.resize_input_tensor(0, (1, 7, (1 << 31) - 1))
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1 << 20, 1 << 19), "FLOAT32")      # 2 TiB
    y = g.add_tensor("y", (1 << 20, 1 << 19), "FLOAT32")
    g.add_operator("RELU", [x], [y])
    g.inputs, g.outputs = [x], [y]
    with pytest.raises(ArenaTooSmallError):
        measure_arena(b.build(), "host64")
    with pytest.raises(ArenaTooSmallError) as err:
        MicroInterpreter(b.build(), arena_size=1 << 40, error_reporter=lambda m: None).allocate_tensors()
    assert err.value.min_arena_bytes is None


def test_an_offline_plan_with_live_buffers_on_shared_bytes_is_sized_but_not_run():
    """Two buffers alive at once on the same bytes (Vela's plans do it on purpose): TFLM
    allocates such a plan, so allocation and sizing go on; a CPU kernel's outputs then
    depend on its memory access order, which is not emulated: invoke refuses, naming
    both tensors."""
    from micro_runtime import MicroInterpreter, ModelError, load_model
    from micro_runtime.tools.optimizer import write_offline_plan
    from micro_runtime.tools.sizing import measure_arena
    model = load_model(model_path("hello_world_int8"))
    op = model.main.operators[1]                    # a FULLY_CONNECTED: not in place
    src, dst = op.inputs[0], op.outputs[0]
    raw = write_offline_plan(model, {src: 0, dst: 0})
    assert measure_arena(raw, "host64").min_arena_bytes > 0
    it = MicroInterpreter(raw, arena_size=1 << 16, target="host64", error_reporter=lambda m: None)
    it.allocate_tensors()
    with pytest.raises(ModelError, match="shares bytes with .* while both are alive"):
        it.invoke()
    from micro_runtime import evaluate
    with pytest.raises(ModelError, match="shares bytes with .* while both are alive"):
        evaluate(raw, [np.zeros((3, 1), np.int8)], target="host64")
    # the same offsets for two buffers never alive together are emulated as usual
    first = model.main.operators[0]
    raw = write_offline_plan(model, {first.inputs[0]: 0, dst: 0})
    it = MicroInterpreter(raw, arena_size=1 << 16, target="host64", error_reporter=lambda m: None)
    it.invoke()


def test_mistyped_tensors_run_as_tflm_or_are_refused_with_a_reason(oracle):
    """A tensor whose type field is changed: a float FULLY_CONNECTED bias that is not
    float32 is refused in prepare (TFLM reads its bytes as float32), as the
    convolutions refuse it; a string / resource / variant input of the drop-in
    Interpreter is refused with the package's words; an LSTM whose cell-state scale is
    not a power of two (negative, huge, nan) runs as TFLM runs it (CheckedLog2's result
    is used, its failure ignored: shift counts of 32 or more, evaluated as the CPU does)."""
    from micro_runtime import KernelError, MicroInterpreter, load_model
    from micro_runtime.api import Interpreter
    from micro_runtime.tools.model_writer import ModelBuilder

    def retyped(name, tensor_name, new_type=None, scale=None):
        mb = ModelBuilder.from_model(load_model(model_path(name)))
        t = next(t for t in mb.subgraphs[0].tensors if t.name == tensor_name)
        if new_type is not None:
            t.type = new_type
        if scale is not None:
            t.quantization = (np.array([scale], np.float32),) + tuple(t.quantization[1:])
        return mb.build()

    for new_type in (2, 7, 9, 16):          # INT32, INT16, INT8, UINT16
        model = retyped("hello_world_float", "sequential/dense/BiasAdd/ReadVariableOp", new_type)
        it = MicroInterpreter(model, arena_size=1 << 14, error_reporter=lambda m: None)
        with pytest.raises(KernelError, match="bias type .* not supported with FLOAT32 input"):
            it.allocate_tensors()

    from micro_runtime import InputError
    seanet = os.path.join(ROOT, "tests", "data", "tflm_examples", "seanet", "transpose_conv2.tflite")
    mb = ModelBuilder.from_model(load_model(seanet))
    mb.subgraphs[0].tensors[mb.subgraphs[0].inputs[0]].type = 13     # RESOURCE (was INT32)
    model = mb.build()
    x = np.array([1, 3, 42, 32], np.int32)
    tflm = oracle.run(model, [x, np.zeros((1, 1, 20, 32), np.int16)])
    assert not tflm.ok and "resource variables, or variants" in tflm.error
    with pytest.raises(InputError, match="resource variables, or variants"):
        Interpreter.from_bytes(model, arena_size=1 << 20).set_input(x, 0)

    rng = np.random.default_rng(5)
    cell = "tfl.pseudo_qconst1"                                       # the int16 cell state
    for scale in (-1.0, 3.0, 1e30, float("nan"), 2.0 ** -40, 2.0 ** 20):
        model = retyped("trained_lstm_int8", cell, scale=scale)
        inputs = [rng.integers(-128, 128, (1, 28, 28)).astype(np.int8)]
        tflm = oracle.run(model, inputs)
        it = MicroInterpreter(model, arena_size=1 << 20, target="host64", error_reporter=lambda m: None)
        it.allocate_tensors()
        it.set_input(inputs[0], 0)
        it.invoke()
        assert tflm.ok and np.array_equal(it.output(0), tflm.outputs[0]), scale


def test_zero_points_outside_the_type_range_run_as_tflm(oracle):
    """TFLM checks no int8 zero point's range in ADD / SUB / SQUARED_DIFFERENCE / the
    comparisons: (x - zero point) << 20 then wraps in int32 as C's arithmetic does. Where
    TFLM does check it (SQUARED_DIFFERENCE), both refuse."""
    from micro_runtime import KernelError
    from tests.helpers import TensorDef, run_ours, single_op_model
    rng = np.random.default_rng(3)
    x1 = rng.integers(-128, 128, (1, 512)).astype(np.int8)
    x2 = rng.integers(-128, 128, (1, 512)).astype(np.int8)
    for op in ("ADD", "SUB", "SQUARED_DIFFERENCE", "LESS", "EQUAL"):
        for zp in (32767, -40000, 200, (1 << 31) - 1, -(1 << 31)):
            out = TensorDef((1, 512), "BOOL") if op in ("LESS", "EQUAL") else \
                TensorDef((1, 512), "INT8", quant=(0.06, -3))
            opts = dict(fused_activation_function=0) if op in ("ADD", "SUB") else {}
            model = single_op_model(op, [TensorDef((1, 512), "INT8", quant=(0.04, zp)),
                                         TensorDef((1, 512), "INT8", quant=(0.05, -1))], [out], **opts)
            theirs = oracle.run(model, [x1, x2])
            if not theirs.ok:               # TFLM's own range check: ours refuses too
                with pytest.raises(KernelError):
                    run_ours(model, [x1, x2], recording=False)
                continue
            ours = run_ours(model, [x1, x2], recording=False)[0][0]
            assert np.array_equal(ours, theirs.outputs[0]), (op, zp)
