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
