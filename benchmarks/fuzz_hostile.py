"""Hostile models and misuse, each case in its own process, against TFLM.

    python benchmarks/fuzz_hostile.py --cases 10000 --seed 1 [--families offline,control]
        [--timeout 10] [--as-limit-mib 2048] [--out results.jsonl] [--no-tflm]

Families (tests/hostile_cases.py): ``offline`` (OfflineMemoryAllocation plans), ``control``
(WHILE / IF / CALL_ONCE: endless, nested, run-time length, bad subgraph indices),
``shapes`` (run-time shapes: shape operands as model inputs, resize_input_tensor),
``quant`` (scales from 1e-45 to 3.4e38, 0, negative, inf, nan; zero points at the
edges), ``files`` (FIFOs, /dev/zero, directories, damaged or lying .npy files as the
model, an input or labels), ``flags`` (every numeric option at and beyond its range),
``mutation`` (tests/fuzzing.py's byte and structure mutations of small zoo models),
``retype`` (one tensor of a single-op case, an example or a small zoo model given
another type, quantized dimension or number of scales).
Case i belongs to family i mod 8 (the families in this order) and is drawn from a generator seeded by (seed, i).

Each case runs in a child process forked for it, with an address-space limit
(RLIMIT_AS, default 2 GiB) and a time limit (default 10 s, then the child is killed).
Model cases go through one public surface: MicroInterpreter, the API (Interpreter,
or resize_input_tensor), batched evaluation, or the command line (size, info, run,
audit). The invoke surfaces pass ``max_loop_iterations=10000`` (an invoke follows TFLM
and has no bound of its own; the sizing surfaces use their default bound). Recorded
per case (``--out``, one JSON line each): the family, what was tried, the surface, the
result (``ok``, the MicroRuntimeError class, ``cli-error`` for status 1 / 2 /
130, ``raw:<class>`` for any other exception or a Python error inside a KernelError
message, ``timeout``, ``killed:<signal>``), seconds, the child's peak resident memory,
and for a model both we and TFLM run, whether the outputs are equal (TFLM: the
tflite-micro package in its own worker process, tests/oracle.py).

Prints the counts per family and result, timeouts, the slowest case, the largest peak
memory, and the TFLM comparison (equal / differ / TFLM refuses / TFLM timed out).
Exits non-zero on a raw exception, a time-out, a killed child, a peak over the limit or
an output that differs from TFLM's.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import pickle
import re
import resource
import select
import signal
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.hostile_cases import FAMILIES, Case, make_case  # noqa: E402

#: a Python error wrapped into a KernelError by the interpreter's safety net
RAW_IN_KERNEL = re.compile(r"failed to (prepare|invoke): [A-Za-z]*(Error|Exception)\b")
#: WHILE bound the invoke surfaces pass (an invoke has none by default, as TFLM)
INVOKE_LOOPS = 10000
ARENA = 1 << 20


def _classify(e: BaseException) -> str:
    from micro_runtime import MicroRuntimeError
    if isinstance(e, MicroRuntimeError):
        if RAW_IN_KERNEL.search(str(e)):
            return f"raw:{type(e).__name__}-inside"
        return type(e).__name__
    return f"raw:{type(e).__name__}"


def _run_model(case: Case, workdir: str):
    """(result, message, outputs or None) of a model case on its surface."""
    from micro_runtime import MicroInterpreter
    from micro_runtime.api import Interpreter, count_resource_variables
    surface = case.surface
    source = case.model_path or case.model
    if surface == "micro":
        it = MicroInterpreter(source, arena_size=ARENA, target="host64", error_reporter=lambda m: None,
                              max_loop_iterations=INVOKE_LOOPS,
                              num_resource_variables=0 if case.model_path else
                              count_resource_variables(__import__("micro_runtime").load_model(source)))
        it.allocate_tensors()
        for k, x in enumerate(case.inputs[:it.inputs_size]):
            it.set_input(x, k)
        it.invoke()
        return "ok", "", [np.array(it.output(k)) for k in range(it.outputs_size)]
    if surface in ("api", "api_resize"):
        if case.model_path:
            it = Interpreter.from_file(case.model_path, error_reporter=lambda m: None)
        else:
            it = Interpreter.from_bytes(source, arena_size=ARENA, error_reporter=lambda m: None)
        it.micro_interpreter.max_loop_iterations = INVOKE_LOOPS
        if surface == "api_resize":
            index, shape = case.resize
            needed = it.resize_input_tensor(index, shape)
            return "ok", f"min arena {needed}", None
        for k, x in enumerate(case.inputs[:it.micro_interpreter.inputs_size]):
            it.set_input(x, k)
        it.invoke()
        it.get_tensor_details()
        return "ok", "", [it.get_output(k) for k in range(it.micro_interpreter.outputs_size)]
    if surface == "eval":
        from micro_runtime.batched import Evaluator
        ev = Evaluator(source, target="host64", batch=2, max_loop_iterations=INVOKE_LOOPS)
        samples = [np.stack([x, x, x]) for x in case.inputs[:len(ev.input_specs)]]
        outs = ev.run(samples)
        return "ok", "", [o[0] for o in outs]
    # the command line on a file
    path = os.path.join(workdir, "case.tflite")
    with open(path, "wb") as f:
        f.write(case.model)
    verb = surface.split("_", 1)[1]
    argv = [verb, path, "--target", "host64"]
    if verb == "run":
        for k, x in enumerate(case.inputs):
            p = os.path.join(workdir, f"in{k}.npy")
            np.save(p, x)
            argv += ["--input", p]
        argv += ["--max-loop-iterations", str(INVOKE_LOOPS), "--output", os.path.join(workdir, "y.npy")]
    result, message = _run_cli(argv)
    outputs = None
    if result == "ok" and verb == "run":
        from micro_runtime import load_model
        n = len(load_model(case.model).main.outputs)
        names = ["y.npy"] if n == 1 else [f"y_{k}.npy" for k in range(n)]
        outputs = [np.load(os.path.join(workdir, name)) for name in names]
    return result, message, outputs


def _run_cli(argv):
    from micro_runtime.tools.cli import main
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(a) for a in argv])
    except SystemExit as e:                   # argparse: status 2, one line
        status = e.code
    text = err.getvalue().strip()
    if RAW_IN_KERNEL.search(text) or "Traceback" in text:
        return "raw:cli-message", text[:300]
    if status == 0:
        return "ok", ""
    if text.count("\n") > 0 and status != 0 and "[range:" not in text:
        return "raw:cli-multiline", text[:300]
    return "cli-error", text[:300]


def _child(case: Case, workdir: str, write_fd: int, as_limit: int) -> None:
    """Runs in the forked child: limits, the case, one pickled record to the pipe."""
    resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
    start = time.perf_counter()
    outputs = None
    try:
        if case.surface == "cli":
            result, message = _run_cli(case.argv)
        else:
            result, message, outputs = _run_model(case, workdir)
    except BaseException as e:  # noqa: BLE001 - classified, never re-raised
        result, message = _classify(e), str(e)[:300]
    record = {"result": result, "message": message, "seconds": time.perf_counter() - start,
              "outputs": outputs}
    data = pickle.dumps(record, protocol=4)
    view = memoryview(data)
    while view:
        n = os.write(write_fd, view[:1 << 16])
        view = view[n:]
    os.close(write_fd)


def run_case(case: Case, workdir: str, timeout: float, as_limit: int) -> dict:
    """The case in a forked child; its record plus ``maxrss_kib``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:                                            # child
        os.close(read_fd)
        code = 0
        try:
            _child(case, workdir, write_fd, as_limit)
        except BaseException:  # noqa: BLE001
            code = 3
        os._exit(code)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    maxrss = usage.ru_maxrss
    if timed_out:
        return {"result": "timeout", "message": f"no answer within {timeout} s", "seconds": timeout,
                "outputs": None, "maxrss_kib": maxrss}
    if not chunks:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        return {"result": f"killed:{sig}", "message": "the child died without a record",
                "seconds": 0.0, "outputs": None, "maxrss_kib": maxrss}
    record = pickle.loads(b"".join(chunks))
    record["maxrss_kib"] = maxrss
    return record


#: the largest arena TFLM is given for a comparison (bytes): a model needing more (an
#: offline offset far into the arena) is not compared
MAX_COMPARE_ARENA = 256 << 20


def compare_with_tflm(oracle, case: Case, ours) -> str:
    """equal / differ / tflm-refuses / tflm-timeout / not-compared for a model we ran.
    TFLM gets 1 MiB of arena, or the model's exact minimum (measure_arena) when that
    is larger and at most MAX_COMPARE_ARENA."""
    r = oracle.run(case.model, case.inputs, arena_size=ARENA)
    if not r.ok and not r.crashed:
        from micro_runtime import MicroRuntimeError
        from micro_runtime.tools.sizing import measure_arena
        try:
            need = measure_arena(case.model, "host64").min_arena_bytes
        except MicroRuntimeError:
            need = 0
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            return f"sizing-raised:{type(e).__name__}"
        if need > MAX_COMPARE_ARENA:
            return "not-compared"
        if need > ARENA:
            r = oracle.run(case.model, case.inputs, arena_size=need)
    if r.crashed and "timed out" in r.error:
        return "tflm-timeout"
    if not r.ok:
        return "tflm-refuses"
    if len(r.outputs) != len(ours):
        return "differ"
    for a, b in zip(ours, r.outputs):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            return "differ"
    return "equal"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    ap.add_argument("--as-limit-mib", type=int, default=2048, help="RLIMIT_AS of each case (MiB)")
    ap.add_argument("--out", default=None, help="write one JSON line per case")
    ap.add_argument("--no-tflm", action="store_true", help="skip the comparison with TFLM")
    args = ap.parse_args()
    families = tuple(args.families.split(","))
    as_limit = args.as_limit_mib << 20
    from micro_runtime import load_model  # noqa: F401 - loaded before the first fork
    from micro_runtime.op_resolver import default_op_resolver
    from micro_runtime.tools import cli  # noqa: F401
    import micro_runtime.batched  # noqa: F401
    default_op_resolver()
    oracle = None
    if not args.no_tflm:
        from tests.oracle import Oracle
        oracle = Oracle(timeout=args.timeout)
    tally = collections.Counter()
    compared = collections.Counter()
    findings = []
    slowest, peak = (0.0, ""), (0, "")
    out = open(args.out, "w") if args.out else None
    start = time.time()
    with tempfile.TemporaryDirectory() as workdir:
        for i in range(args.cases):
            family = families[i % len(families)]
            rng = np.random.default_rng([args.seed, i])
            casedir = os.path.join(workdir, f"c{i % 8}")
            os.makedirs(casedir, exist_ok=True)
            try:
                case = make_case(family, rng, casedir)
            except Exception as e:  # noqa: BLE001 - a generator bug is a finding too
                findings.append((i, family, "generator", repr(e)[:200]))
                continue
            record = run_case(case, casedir, args.timeout, as_limit)
            result = record["result"]
            tally[(family, result)] += 1
            if record["seconds"] > slowest[0]:
                slowest = (record["seconds"], f"#{i} {family}: {case.description[:100]}")
            if record["maxrss_kib"] > peak[0]:
                peak = (record["maxrss_kib"], f"#{i} {family}: {case.description[:100]}")
            verdict = None
            if (oracle is not None and result == "ok" and case.compare and case.model is not None
                    and record["outputs"] is not None):
                try:
                    verdict = compare_with_tflm(oracle, case, record["outputs"])
                except Exception as e:  # noqa: BLE001 - a finding, the run goes on
                    verdict = f"compare-raised:{type(e).__name__}"
                    findings.append((i, family, verdict, case.description[:200]))
                compared[(family, verdict)] += 1
                if verdict == "differ":
                    findings.append((i, family, "differs from TFLM", case.description[:200]))
            if result.startswith(("raw:", "timeout", "killed:")) or record["maxrss_kib"] > as_limit >> 10:
                findings.append((i, family, result, f"{case.description[:150]} | {record['message'][:200]}"))
            if out:
                out.write(json.dumps({"case": i, "family": family, "description": case.description,
                                      "surface": case.surface, "result": result,
                                      "message": record["message"][:300],
                                      "seconds": round(record["seconds"], 4),
                                      "maxrss_kib": record["maxrss_kib"], "tflm": verdict}) + "\n")
                out.flush()
    if oracle is not None:
        oracle.close()
    print(f"{args.cases} cases ({', '.join(families)}), seed {args.seed}, each in its own process "
          f"(RLIMIT_AS {args.as_limit_mib} MiB, {args.timeout:g} s), {time.time() - start:.0f} s")
    print(f"{'family':<10}{'result':<34}{'count':>7}")
    for (family, result), count in sorted(tally.items()):
        print(f"{family:<10}{result:<34}{count:>7}")
    raw = sum(c for (f, r), c in tally.items() if r.startswith("raw:"))
    hangs = sum(c for (f, r), c in tally.items() if r == "timeout")
    killed = sum(c for (f, r), c in tally.items() if r.startswith("killed:"))
    print(f"raw exceptions: {raw}; cases over {args.timeout:g} s: {hangs}; children killed: {killed}")
    print(f"slowest case: {slowest[0]:.2f} s ({slowest[1]})")
    print(f"largest peak resident memory of a case: {peak[0] / 1024:.0f} MiB ({peak[1]})")
    if oracle is not None:
        print("compared with TFLM (models both run): " + ", ".join(
            f"{f} {v} {c}" for (f, v), c in sorted(compared.items())))
        print(f"  outputs equal: {sum(c for (f, v), c in compared.items() if v == 'equal')}, "
              f"differ: {sum(c for (f, v), c in compared.items() if v == 'differ')}")
    for f in findings[:30]:
        print("FINDING", f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
