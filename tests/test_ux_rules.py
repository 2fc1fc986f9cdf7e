"""What a new user trips over: each test fails on the code before its fix.

Arena refusals that always say the minimum, TFLM's method names, one meaning of --jobs,
CLI errors in option names, one rule for output paths, one rule for input shapes,
printed sums that add up.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import micro_runtime as mr
from micro_runtime.tools.cli import main
from tests.helpers import model_path
from tests.tflm_figures import load_figures

WORKTREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, status=1):
    assert code == status and out == "" and err.startswith("error: ") and err.count("\n") == 1, (code, out, err)
    return err


def recorded(model: str, target: str) -> int:
    figures, _ = load_figures()
    return figures[(model + ".tflite", target)]["min_arena_bytes"]


# --------------------------------------------------- a too-small arena says the minimum
@pytest.mark.parametrize("arena", [2048, 16000])
def test_a_too_small_arena_always_says_the_minimum(arena):
    kws = model_path("kws_ref_model")
    needed = recorded("kws_ref_model", "cortex-m4+cmsis-nn")      # TFLM's build: 22928
    for make in (lambda: mr.RecordingMicroInterpreter(kws, mr.default_op_resolver(), arena,
                                                      error_reporter=lambda m: None).invoke(),
                 lambda: mr.Interpreter.from_file(kws, arena_size=arena, target="cortex-m4+cmsis-nn")):
        with pytest.raises(mr.ArenaTooSmallError) as e:
            make()
        assert e.value.min_arena_bytes == needed
        assert f"this model needs at least {needed} bytes" in str(e.value)
    # the plain MicroInterpreter: its own minimum, which works, one byte less does not
    with pytest.raises(mr.ArenaTooSmallError) as e:
        mr.MicroInterpreter(kws, None, arena, error_reporter=lambda m: None).invoke()
    plain = e.value.min_arena_bytes
    assert plain is not None and f"needs at least {plain} bytes" in str(e.value)
    mr.MicroInterpreter(kws, None, plain, error_reporter=lambda m: None).invoke()
    with pytest.raises(mr.ArenaTooSmallError):
        mr.MicroInterpreter(kws, None, plain - 1, error_reporter=lambda m: None).invoke()


def test_a_model_too_large_to_measure_gets_a_bound_quickly_and_without_the_memory():
    import resource
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 1 << 14, 1 << 13), "FLOAT32")      # 512 MiB
    y = g.add_tensor("y", (1, 1 << 14, 1 << 13), "FLOAT32")
    g.add_operator("RELU", [x], [y])
    g.inputs, g.outputs = [x], [y]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(mr.ArenaTooSmallError) as e:
        mr.MicroInterpreter(b.build(), None, 4096, error_reporter=lambda m: None)
    assert e.value.min_arena_bytes is None and e.value.lower_bound == 1 << 29
    assert f"this model needs at least {1 << 29} bytes" in str(e.value)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024   # KiB


def test_run_with_a_too_small_arena_says_the_minimum(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 49, 10, 1), np.int8))
    err = one_line_error(*cli(capsys, "run", model_path("kws_ref_model"), "--arena-size", 2048,
                              "--input", tmp_path / "x.npy"))
    assert f"needs at least {recorded('kws_ref_model', 'cortex-m4+cmsis-nn')} bytes" in err


# ------------------------------------------------------------ TFLM's method names
def test_tflm_method_names_from_its_guide():
    from recording import RecordedAllocationType
    it = mr.RecordingMicroInterpreter(model_path("hello_world_int8"), mr.default_op_resolver(),
                                      arena_size=4096)
    assert it.AllocateTensors() is None
    assert it.inputs_size() == it.inputs_size == 1 and it.outputs_size() == 1
    it.input(0)[:] = 3
    assert it.Invoke() == 0
    first = np.array(it.output_tensor(0))
    plain = mr.RecordingMicroInterpreter(model_path("hello_world_int8"), arena_size=4096)
    plain.allocate_tensors()
    plain.input(0)[:] = 3
    plain.invoke()
    assert np.array_equal(first, plain.output(0))
    kind = RecordedAllocationType.kTfLiteEvalTensorData
    assert it.GetRecordedAllocation(kind) == it.get_recorded_allocation(kind)
    assert it.GetMicroAllocator().GetRecordedAllocation(kind) == it.get_recorded_allocation(kind)
    assert it.GetMicroAllocator() is it.get_micro_allocator()
    assert it.arena_used_bytes() == plain.arena_used_bytes()
    it.Reset()
    assert np.array_equal(it.GetTensor(0), it.tensor(0))


def test_tflm_print_allocations_writes_what_print_allocations_writes(capfd):
    it = mr.RecordingMicroInterpreter(model_path("hello_world_int8"), arena_size=4096)
    it.Invoke()
    it.print_allocations()
    ours = capfd.readouterr().err
    it.GetMicroAllocator().PrintAllocations()
    assert capfd.readouterr().err == ours
    it.PrintAllocations()
    assert capfd.readouterr().err == ours and "[RecordingMicroAllocator] Arena allocation total" in ours


def test_every_tflm_alias_is_documented_and_exists():
    from micro_runtime.tflm_names import TFLM_ALIASES
    from recording import RecordingMicroAllocator
    classes = {"MicroInterpreter": mr.MicroInterpreter,
               "RecordingMicroInterpreter": mr.RecordingMicroInterpreter,
               "RecordingMicroAllocator": RecordingMicroAllocator}
    doc = open(os.path.join(WORKTREE, "docs", "tflm_names.md")).read()
    rows = set(re.findall(r"^\| (\w+) \| `(\w+)\(", doc, re.M))
    table = {(cls, tflm) for cls, names in TFLM_ALIASES.items() for tflm in names}
    assert rows == table
    for cls, tflm in table:
        assert callable(getattr(classes[cls], tflm))


# ------------------------------------------------------------------ size --c / --cpp
@pytest.mark.parametrize("interpreter", ["recording", "micro"])
def test_size_c_is_c_and_cpp_is_cpp(capsys, tmp_path, interpreter):
    import shutil
    size = json.loads(cli(capsys, "size", "bundled:person_detect", "--interpreter", interpreter, "--json")[1])
    code, c_text, _ = cli(capsys, "size", "bundled:person_detect", "--interpreter", interpreter, "--c")
    assert code == 0 and f"#define TENSOR_ARENA_SIZE {size['arena_bytes']}\n" in c_text
    assert "constexpr" not in c_text and "alignas(16)" not in c_text
    code, cpp_text, _ = cli(capsys, "size", "bundled:person_detect", "--interpreter", interpreter, "--cpp")
    assert code == 0 and f"constexpr size_t kTensorArenaSize = {size['arena_bytes']};" in cpp_text
    compilers = [("gcc", "-std=c11", c_text, "main.c", "#include <stdint.h>\n", "TENSOR_ARENA_SIZE"),
                 ("g++", "-std=c++17", cpp_text, "main.cc", "#include <cstddef>\n#include <cstdint>\n",
                  "kTensorArenaSize")]
    for compiler, std, text, source, includes, size_name in compilers:
        if shutil.which(compiler) is None:
            continue
        (tmp_path / "arena.h").write_text(text)
        (tmp_path / source).write_text(
            includes + '#include "arena.h"\n'
            f"int main(void) {{ return sizeof(tensor_arena) == {size_name} && "
            "(uintptr_t)tensor_arena % 16 == 0 ? 0 : 1; }\n")
        subprocess.run([compiler, std, "-Wall", "-Werror", "-pedantic", "-o", str(tmp_path / "a.out"),
                        str(tmp_path / source)], check=True, cwd=tmp_path)
        assert subprocess.run([str(tmp_path / "a.out")]).returncode == 0
    # the C++ snippet does not compile as C: the two forms are needed
    if shutil.which("gcc"):
        (tmp_path / "cpp_as_c.c").write_text("#include <stddef.h>\n#include <stdint.h>\n" + cpp_text)
        assert subprocess.run(["gcc", "-std=c11", "-c", "-o", str(tmp_path / "x.o"), str(tmp_path / "cpp_as_c.c")],
                              capture_output=True).returncode != 0


# ------------------------------------------------------------ every printed sum adds up
SUM = re.compile(r"(?P<total>\d[\d,]*)(?: bytes)? = (?P<rhs>(?:[A-Za-z][A-Za-z' ]*? )?\d[\d,]*(?: bytes)?"
                 r"(?: \+ (?:[A-Za-z][A-Za-z' ]*? )?\d[\d,]*(?: bytes)?)+)")


def printed_sums(text: str):
    """Every ``a = b + c ...`` printed: (line, total, terms)."""
    out = []
    for line in text.splitlines():
        for m in SUM.finditer(line):
            terms = [int(v.replace(",", "")) for v in re.findall(r"\d[\d,]*", m.group("rhs"))]
            out.append((line, int(m.group("total").replace(",", "")), terms))
    return out


def verb_outputs(capsys, tmp_path, model: str, target: str):
    """The text output of every verb on ``model``."""
    from micro_runtime import load_model
    from micro_runtime.tools.cli import resolve_model_path
    main_graph = load_model(resolve_model_path(model)).main
    spec = main_graph.tensors[main_graph.inputs[0]]
    x = np.zeros((3,) + tuple(spec.shape), spec.dtype)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "x1.npy", x[0])
    runs = {
        "size": ["size", model],
        "audit": ["audit", model],
        "plan": ["plan", model],
        "run": ["run", model, "--input", tmp_path / "x1.npy"],
        "eval": ["eval", model, "--inputs", tmp_path / "x.npy"],
        "info": ["info", model],
        "optimize": ["optimize", model, "-o", tmp_path / "o.tflite", "--budget", "0.5"],
        "drift": ["drift", model, "--seeds", 2],
        "bench": ["bench", model, "--num_runs", 2, "--warmup_runs", 0],
        "ops": ["ops", model],
    }
    out = {}
    for verb, argv in runs.items():
        code, text, err = cli(capsys, *argv, "--target", target)
        assert code in (0, 1) and text, (verb, err)
        out[verb] = text
    return out


@pytest.mark.parametrize("model, target", [("bundled:person_detect", "cortex-m4+cmsis-nn"),
                                           (model_path("ad01_int8"), "host64"),
                                           (model_path("kws_ref_model"), "mcu32")])
def test_every_printed_sum_adds_up(capsys, tmp_path, model, target):
    outputs = verb_outputs(capsys, tmp_path, model, target)
    found = {}
    for verb, text in outputs.items():
        for line, total, terms in printed_sums(text):
            assert total == sum(terms), f"{verb}: {line}"
            found[verb] = found.get(verb, 0) + 1
    assert {"size", "audit", "bench", "optimize"} <= set(found), found
    # ad01 on host64 has temporaries freed before TFLM prints its total: the gap is a term
    if target == "host64":
        assert "temporaries gap" in outputs["size"] and "temporaries gap" in outputs["bench"]


def test_a_word_means_one_thing_tail_of_optimize_is_sizes(capsys, tmp_path):
    model = model_path("kws_ref_model")
    for extra in ([], ["--patches", "--time-limit", "5"]):
        out = tmp_path / f"o{len(extra)}.tflite"
        code, text, err = cli(capsys, "optimize", model, "-o", out, "--budget", "0.5", *extra)
        assert code == 0, err
        size = json.loads(cli(capsys, "size", out, "--json")[1])
        (line,) = [line for line in text.splitlines() if "written model" in line]
        assert f"head {size['head_bytes']} + tail {size['tail_bytes']}" in line, line
        data = json.loads(cli(capsys, "optimize", model, "-o", out, "--budget", "0.5", *extra, "--json")[1])
        assert data["written"]["tail_bytes"] == size["tail_bytes"]
        if extra:
            assert data["tail_bytes"] == size["tail_bytes"]


def test_size_table_columns_add_up(capsys):
    code, text, _ = cli(capsys, "size", model_path("ad01_int8"), "--target", "cortex-m4,host64,mcu32")
    assert code == 0
    rows = {line[:28].strip(): [int(v) for v in line[28:].split()] for line in text.splitlines()[2:7]}
    totals = rows.pop("minimum arena")
    assert [k[0] for k in rows] == ["=", "+", "+", "+"]
    assert totals == [sum(col) for col in zip(*rows.values())]


# ------------------------------------------------------------------- --jobs
def test_jobs_has_one_meaning(capsys, tmp_path):
    models = [model_path("hello_world_int8"), model_path("ad01_int8")]
    for jobs in (0, 1, 2):
        assert cli(capsys, "size", *models, "--jobs", jobs)[0] == 0
    np.save(tmp_path / "x.npy", np.zeros((8, 1, 1), np.int8))
    for jobs in (0, 1, 2):
        assert cli(capsys, "eval", models[0], "--inputs", tmp_path / "x.npy", "--jobs", jobs)[0] == 0
    for verb in (["size", *models], ["eval", models[0], "--inputs", tmp_path / "x.npy"]):
        err = one_line_error(*cli(capsys, *verb, "--jobs", -1))
        assert "--jobs must be 0 (one worker per processor) or a positive number" in err


def test_workers_are_capped_by_the_machine_and_the_work(monkeypatch):
    import concurrent.futures
    from micro_runtime.tools import sizing
    from micro_runtime.workers import available_processors
    started = []

    class Recording(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kwargs):
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kwargs)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    paths = [model_path("hello_world_int8")] * 3
    rows = sizing.size_many(paths, "host64", jobs=1000000)
    assert all(r["error"] is None for r in rows)
    assert started == [min(available_processors(), 3)] or (available_processors() == 1 and started == [])
    ev = mr.Evaluator(model_path("hello_world_int8"), target="host64")
    assert ev.usable_jobs(1000000, 10 ** 6) == available_processors()
    assert ev.usable_jobs(1000000, 4) == min(2, available_processors())


def test_workers_die_with_their_parent(tmp_path):
    """Kill the parent of a size sweep with SIGKILL: its workers must not live on."""
    import signal
    import time
    script = (
        "import sys; from micro_runtime.tools.sizing import size_many\n"
        f"size_many([{model_path('kws_ref_model')!r}] * 400, 'host64', jobs=2)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=WORKTREE)

    def children():
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            return []
    deadline = time.time() + 60
    kids = []
    while time.time() < deadline and len(kids) < 2:
        time.sleep(0.2)
        kids = children()
    assert len(kids) >= 2, "the sweep did not start its workers"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    alive = kids
    while time.time() < deadline and alive:
        time.sleep(0.1)
        alive = [k for k in kids if os.path.exists(f"/proc/{k}") and
                 open(f"/proc/{k}/stat").read().split(") ")[1][0] != "Z"]
    assert not alive, f"workers {alive} outlived their parent"


# ------------------------------------------------------------ option names, repeats, pipes
def test_cli_errors_use_option_names(capsys):
    err = one_line_error(*cli(capsys, "run", model_path("hello_world_int8"), "--arena-size", -5,
                              "--input", "x.npy"))
    assert "--arena-size" in err and "arena_size" not in err
    for option, value in (("--num_runs", -1), ("--warmup_runs", -1), ("--seed", -1)):
        err = one_line_error(*cli(capsys, "bench", model_path("hello_world_int8"), option, value))
        assert err.startswith(f"error: {option} must be"), err


def test_a_repeated_option_is_refused_and_size_takes_several_targets(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", model_path("hello_world_int8"), "--target", "host64", "--target", "mcu32"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--target given twice (host64 and mcu32)" in err and err.count("\n") == 1
    err = one_line_error(*cli(capsys, "info", model_path("hello_world_int8"), "--target", "host64,mcu32"))
    assert "info runs one target" in err
    data = json.loads(cli(capsys, "size", model_path("hello_world_int8"), "--target", "host64",
                          "--target", "mcu32", "--json")[1])
    assert [r["target"] for r in data["targets"]] == ["host64", "mcu32"]
    from micro_runtime.tools.sizing import measure_arena
    for r in data["targets"]:
        assert r["min_arena_bytes"] == measure_arena(model_path("hello_world_int8"), r["target"]).min_arena_bytes
    everything = json.loads(cli(capsys, "size", model_path("hello_world_int8"), "--target", "all", "--json")[1])
    assert [r["target"] for r in everything["targets"]] == list(mr.TARGETS)


def test_a_closed_stdout_pipe_ends_quietly_with_status_0():
    for argv in (["ops", "--json"], ["info", model_path("person_detect")], ["ops"]):
        proc = subprocess.Popen([sys.executable, "-m", "micro_runtime", *argv], cwd=WORKTREE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()          # the reader went away before the first byte
        err = proc.stderr.read()
        assert proc.wait() == 0 and err == b"", (argv, err)


# ---------------------------------------------------------------- output paths
def writing_verbs(tmp_path, target_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 1), np.int8))
    np.save(tmp_path / "xs.npy", np.zeros((4, 1, 1), np.int8))
    m = model_path("hello_world_int8")
    return {"run --output": ["run", m, "--input", tmp_path / "x.npy", "--output", target_path],
            "eval --output": ["eval", m, "--inputs", tmp_path / "xs.npy", "--output", target_path],
            "plan --svg": ["plan", m, "--svg", target_path],
            "optimize -o": ["optimize", m, "-o", target_path, "--budget", "0.2"]}


def test_every_verb_writes_exactly_the_path_given(capsys, tmp_path):
    for k, (name, argv) in enumerate(writing_verbs(tmp_path, tmp_path / "out" / "Y").items()):
        (tmp_path / "out").mkdir(exist_ok=True)
        code, text, err = cli(capsys, *argv)
        assert code == 0, (name, err)
        assert os.listdir(tmp_path / "out") == ["Y"], name
        assert str(tmp_path / "out" / "Y") in text, name
        os.remove(tmp_path / "out" / "Y")


@pytest.mark.parametrize("bad, words", [("dir", "is a directory"), ("dir/", "is a directory"),
                                        ("/dev/full", "is not a regular file"),
                                        ("missing/y.npy", "does not exist")])
def test_every_verb_refuses_the_same_bad_output_paths(capsys, tmp_path, bad, words):
    (tmp_path / "dir").mkdir()
    path = bad if bad.startswith("/") else str(tmp_path / bad)
    already = os.path.exists("/dev/full.npy")      # left by an older version
    for name, argv in writing_verbs(tmp_path, path).items():
        err = one_line_error(*cli(capsys, *argv))
        assert words in err and name.split()[1] in err and "Errno" not in err, (name, err)
    assert os.listdir(tmp_path / "dir") == [] and not os.path.exists(tmp_path / "dir.npy")
    assert already or not os.path.exists("/dev/full.npy")


def test_one_path_for_several_outputs_is_documented_and_reported(capsys, tmp_path):
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "FLOAT32")
    y = g.add_tensor("y", (1, 4), "FLOAT32")
    z = g.add_tensor("z", (1, 4), "FLOAT32")
    g.add_operator("RELU", [x], [y])
    g.add_operator("TANH", [x], [z])
    g.inputs, g.outputs = [x], [y, z]
    (tmp_path / "two.tflite").write_bytes(b.build())
    np.save(tmp_path / "x.npy", np.ones((1, 4), np.float32))
    data = json.loads(cli(capsys, "run", tmp_path / "two.tflite", "--input", tmp_path / "x.npy",
                          "--output", tmp_path / "o.npy", "--json")[1])
    assert [o["path"] for o in data["outputs"]] == [str(tmp_path / "o_0.npy"), str(tmp_path / "o_1.npy")]
    assert sorted(os.listdir(tmp_path)) == ["o_0.npy", "o_1.npy", "two.tflite", "x.npy"]


def test_no_verb_writes_over_a_file_it_reads_or_one_file_twice(capsys, tmp_path):
    """The model, an input or the labels given as the file to write is refused before any
    work (bytes unchanged), through another spelling of the path too; so is one file
    given for two outputs."""
    import shutil
    model = tmp_path / "m.tflite"
    shutil.copy(model_path("hello_world_int8"), model)
    np.save(tmp_path / "x.npy", np.zeros((1, 1), np.int8))
    np.save(tmp_path / "xs.npy", np.zeros((4, 1, 1), np.int8))
    np.save(tmp_path / "labels.npy", np.zeros(4, np.int64))
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    same_model = str(tmp_path / "." / "m.tflite")
    cases = [["run", model, "--input", tmp_path / "x.npy", "--output", same_model],
             ["run", model, "--input", tmp_path / "x.npy", "--output", tmp_path / "x.npy"],
             ["eval", model, "--inputs", tmp_path / "xs.npy", "--output", tmp_path / "xs.npy"],
             ["eval", model, "--inputs", tmp_path / "xs.npy", "--labels", tmp_path / "labels.npy",
              "--output", tmp_path / "labels.npy"],
             ["plan", model, "--svg", model],
             ["optimize", model, "-o", model, "--budget", "0.2"],
             ["fit", model, "--board", "nucleo-f746zg", "--svg", model]]
    for argv in cases:
        err = one_line_error(*cli(capsys, *argv))
        assert "is a file this command reads" in err, (argv, err)
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before

    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x, y, z = (g.add_tensor(n, (1, 4), "FLOAT32") for n in "xyz")
    g.add_operator("RELU", [x], [y])
    g.add_operator("TANH", [x], [z])
    g.inputs, g.outputs = [x], [y, z]
    (tmp_path / "two.tflite").write_bytes(b.build())
    np.save(tmp_path / "x4.npy", np.ones((1, 4), np.float32))
    err = one_line_error(*cli(capsys, "run", tmp_path / "two.tflite", "--input", tmp_path / "x4.npy",
                              "--output", tmp_path / "o.npy", "--output", tmp_path / "o.npy"))
    assert "is given for two outputs" in err and not (tmp_path / "o.npy").exists()


# ------------------------------------------------------------- one input-shape rule
def per_sample_outputs(model, xs):
    it = mr.MicroInterpreter(model, None, 1 << 20, target="host64")
    it.allocate_tensors()
    outs = []
    for x in xs:
        it.reset()
        it.set_input(x, 0)
        it.invoke()
        outs.append(np.array(it.output(0)))
    return np.stack(outs)


@pytest.mark.parametrize("model, shape", [("pretrainedResnet_quant", (1, 32, 32, 3)),
                                          ("audio_preprocessor_int8", (1, 480))])
def test_every_verb_takes_the_same_input_shapes(capsys, tmp_path, model, shape):
    path = model_path(model)
    dtype = mr.load_model(path).main.tensors[mr.load_model(path).main.inputs[0]].dtype
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    samples = rng.integers(info.min, info.max, (3,) + shape).astype(dtype)
    truth = per_sample_outputs(path, samples)
    forms = {"leading axis": samples, "in place of the batch axis": samples.reshape((3,) + shape[1:]),
             "one sample": samples[0]}
    for name, x in forms.items():
        np.save(tmp_path / "x.npy", x)
        count = 1 if name == "one sample" else 3
        run = json.loads(cli(capsys, "run", path, "--input", tmp_path / "x.npy", "--target", "host64",
                             "--output", tmp_path / "run.npy", "--json")[1])
        got = np.load(tmp_path / "run.npy")
        assert np.array_equal(got.reshape((count,) + truth.shape[1:]), truth[:count]), name
        assert run["outputs"][0]["shape"] == list(got.shape)
        code, _, err = cli(capsys, "eval", path, "--inputs", tmp_path / "x.npy", "--target", "host64",
                           "--output", tmp_path / "eval.npy")
        assert code == 0, err
        assert np.array_equal(np.load(tmp_path / "eval.npy"), truth[:count]), name
        drift = json.loads(cli(capsys, "drift", path, "--input", tmp_path / "x.npy", "--target", "host64",
                               "--json")[1])
        assert drift["samples"] == count, name
    np.save(tmp_path / "bad.npy", samples.reshape((3, 1) + shape))
    for argv in (["run", path, "--input"], ["eval", path, "--inputs"], ["drift", path, "--input"]):
        err = one_line_error(*cli(capsys, *argv, tmp_path / "bad.npy"))
        from micro_runtime.samples import shape_rule
        assert f"expected shape {shape_rule(shape)}" in err


def test_evaluate_api_uses_the_same_rule():
    from micro_runtime.samples import as_samples
    path = model_path("hello_world_int8")
    xs = np.arange(-5, 5, dtype=np.int8)
    truth = per_sample_outputs(path, xs.reshape(10, 1, 1))
    for x in (xs.reshape(10, 1, 1), xs.reshape(10, 1)):
        assert np.array_equal(mr.evaluate(path, x, target="host64")[0], truth)
    assert as_samples(xs[:1].reshape(1, 1), (1, 1))[1] is False
    with pytest.raises(mr.InputError, match=r"expected shape \(1, 1\) \(one sample\)"):
        as_samples(xs.reshape(2, 5), (1, 1))


# --------------------------------------------------------------- eval: quantize, metrics
def tflm_quantize(x, scale, zero_point, dtype):
    """TFLM's AffineQuantize written out: float32 quotient, round half away from zero, clamp."""
    quotient = (x.astype(np.float32) / np.float32(scale)).astype(np.float64)
    rounded = np.trunc(quotient + np.copysign(0.5, quotient))
    info = np.iinfo(dtype)
    return np.clip(rounded + zero_point, info.min, info.max).astype(dtype)


def test_eval_quantize_and_regression_metrics(capsys, tmp_path):
    path = model_path("ad01_int8")
    main_graph = mr.load_model(path).main
    in_spec = main_graph.tensors[main_graph.inputs[0]]
    out_spec = main_graph.tensors[main_graph.outputs[0]]
    scale, zp = float(in_spec.quantization.scales[0]), int(in_spec.quantization.zero_points[0])
    real = np.random.default_rng(4).standard_normal((6, 640)).astype(np.float32) * 3
    real[0, :4] = np.array([0.5, -0.5, 1.5, -2.5], np.float32) * scale   # ties: away from zero
    np.save(tmp_path / "real.npy", real)
    err = one_line_error(*cli(capsys, "eval", path, "--inputs", tmp_path / "real.npy"))
    assert "values are not cast" in err and "--quantize" in err
    quantized = tflm_quantize(real, scale, zp, np.int8)
    truth = per_sample_outputs(path, quantized.reshape(6, 1, 640))
    np.save(tmp_path / "targets.npy", real)
    data = json.loads(cli(capsys, "eval", path, "--inputs", tmp_path / "real.npy", "--quantize",
                          "--targets", tmp_path / "targets.npy", "--output", tmp_path / "y.npy", "--json")[1])
    assert np.array_equal(np.load(tmp_path / "y.npy"), truth)
    assert data["quantized_inputs"] is True
    o_scale, o_zp = float(out_spec.quantization.scales[0]), int(out_spec.quantization.zero_points[0])
    error = o_scale * (truth.reshape(6, 640).astype(np.float64) - o_zp) - real.astype(np.float64)
    r = data["regression"]
    assert r["real"]["mse"] == pytest.approx(np.mean(error ** 2), rel=1e-12)
    assert r["real"]["max_abs_error"] == pytest.approx(np.max(np.abs(error)), rel=1e-12)
    assert r["snr_db"] == pytest.approx(10 * np.log10(np.sum(real.astype(np.float64) ** 2) / np.sum(error ** 2)))
    assert r["quantized"]["mse"] == pytest.approx(np.mean((error / o_scale) ** 2), rel=1e-12)
    assert r["quantized"]["max_abs_error"] == pytest.approx(np.max(np.abs(error)) / o_scale, rel=1e-12)
    code, text, _ = cli(capsys, "eval", path, "--inputs", tmp_path / "real.npy", "--quantize",
                        "--targets", tmp_path / "targets.npy")
    assert code == 0 and "real units:" in text and "quantized units:" in text and "SNR" in text


def test_labels_only_score_a_classifier(capsys, tmp_path):
    np.save(tmp_path / "labels.npy", np.zeros(4, np.int64))
    np.save(tmp_path / "ad.npy", np.zeros((4, 640), np.int8))
    np.save(tmp_path / "audio.npy", np.zeros((4, 480), np.int16))
    for model, x in (("ad01_int8", "ad.npy"), ("audio_preprocessor_int8", "audio.npy")):
        err = one_line_error(*cli(capsys, "eval", model_path(model), "--inputs", tmp_path / x,
                                  "--labels", tmp_path / "labels.npy"))
        assert "--targets" in err and "accuracy" not in capsys.readouterr().out
    # a classifier's output is scored; --classifier forces it for logits
    np.save(tmp_path / "kws.npy", np.zeros((4, 49, 10, 1), np.int8))
    code, text, _ = cli(capsys, "eval", model_path("kws_ref_model"), "--inputs", tmp_path / "kws.npy",
                        "--labels", tmp_path / "labels.npy")
    assert code == 0 and "top-1 accuracy" in text
    code, text, _ = cli(capsys, "eval", model_path("ad01_int8"), "--inputs", tmp_path / "ad.npy",
                        "--labels", tmp_path / "labels.npy", "--classifier")
    assert code == 0 and "top-1 accuracy" in text
