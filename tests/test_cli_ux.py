"""What a new user trips over, through the command: --interpreter, size --c and sweeps,
run's output path and --quantize, progress, --version, and the one-line errors."""
import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from micro_runtime import load_model
from micro_runtime.targets import DEFAULT_TARGET, TARGETS
from micro_runtime.tools import cli as cli_module
from micro_runtime.tools.cli import main
from micro_runtime.tools.progress import Progress
from micro_runtime.tools.sizing import SIZE_KEYS, measure_arena
from tests.helpers import model_path
from tests.test_cli_drift_bench import cli, cli_json

COMMANDS = ("size", "audit", "plan", "run", "info", "optimize", "drift", "bench", "ops")


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self):
        return True


def one_line_error(code, out, err, status=1):
    assert code == status and out == "" and err.startswith("error: ") and err.count("\n") == 1, (code, err)
    return err


# ------------------------------------------------------------- --interpreter
def test_size_gives_both_figures_and_min_arena_bytes_stays_the_recording_one(capsys):
    rec = cli_json(capsys, "size", model_path("hello_world_int8"))
    micro = cli_json(capsys, "size", model_path("hello_world_int8"), "--interpreter", "micro")
    assert tuple(rec) == SIZE_KEYS == tuple(micro)
    truth_rec = measure_arena(model_path("hello_world_int8"), DEFAULT_TARGET, recording=True)
    truth_micro = measure_arena(model_path("hello_world_int8"), DEFAULT_TARGET, recording=False)
    for data in (rec, micro):
        assert data["min_arena_bytes"] == truth_rec.min_arena_bytes        # always the recording figure
        assert data["plain_min_arena_bytes"] == truth_micro.min_arena_bytes
    assert rec["interpreter"] == "recording" and rec["arena_bytes"] == truth_rec.min_arena_bytes
    assert micro["interpreter"] == "micro" and micro["arena_bytes"] == truth_micro.min_arena_bytes
    assert micro["tail_bytes"] == truth_micro.tail_bytes < rec["tail_bytes"]
    # --plain (the old flag) is --interpreter micro
    assert cli_json(capsys, "size", model_path("hello_world_int8"), "--plain") == micro


def test_run_honours_the_interpreter_class(capsys, tmp_path):
    """Between the two minimums, the recording interpreter does not fit and the plain
    one does, as audit / size say."""
    rec = measure_arena(model_path("hello_world_int8"), "host64").min_arena_bytes
    micro = measure_arena(model_path("hello_world_int8"), "host64", recording=False).min_arena_bytes
    between = (rec + micro) // 2
    np.save(tmp_path / "x.npy", np.zeros((1, 1), np.int8))
    args = ["run", model_path("hello_world_int8"), "--target", "host64", "--arena-size", between,
            "--input", tmp_path / "x.npy"]
    err = one_line_error(*cli(capsys, *args))
    assert f"needs at least {rec} bytes" in err
    assert cli_json(capsys, *args, "--interpreter", "micro")["interpreter"] == "micro"
    code, _, err = cli(capsys, "audit", model_path("hello_world_int8"), "--target", "host64",
                       "--arena-size", between)
    assert code == 1 and f"needs at least {rec} bytes" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_interpreter_and_refuses_a_bad_one(capsys, tmp_path, command):
    parser = cli_module.build_parser()
    extra = {"optimize": ["-o", str(tmp_path / "o.tflite")], "run": []}.get(command, [])
    model = [] if command == "ops" else [model_path("hello_world_int8")]
    args = parser.parse_args([command, *model, "--interpreter", "micro", *extra])
    assert args.interpreter == "micro"
    one_line_error(*cli(capsys, command, *model, "--interpreter", "plain", *extra))


def test_audit_with_the_micro_interpreter_has_no_report(capsys):
    data = cli_json(capsys, "audit", model_path("hello_world_int8"), "--interpreter", "micro")
    assert data["interpreter"] == "micro" and data["tflm_report"] == [] and data["categories"] == []
    assert len(data["operators"]) == 3
    code, out, _ = cli(capsys, "audit", model_path("hello_world_int8"), "--interpreter", "micro")
    assert code == 0 and "--interpreter recording" in out


# ------------------------------------------------------------------ size --c
def test_size_c_snippet(capsys, tmp_path):
    for interpreter in ("recording", "micro"):
        size = cli_json(capsys, "size", "bundled:person_detect", "--interpreter", interpreter)
        code, out, _ = cli(capsys, "size", "bundled:person_detect", "--interpreter", interpreter, "--cpp")
        assert code == 0
        assert f"constexpr size_t kTensorArenaSize = {size['arena_bytes']};" in out
        assert "alignas(16) static uint8_t tensor_arena[kTensorArenaSize];" in out
        cls = "RecordingMicroInterpreter" if interpreter == "recording" else "MicroInterpreter"
        other = size["plain_min_arena_bytes"] if interpreter == "recording" else size["min_arena_bytes"]
        assert f"tflite::{cls}\n" in out and f"needs {other} bytes" in out
        assert "person_detect.tflite" in out and f"target profile {size['target']}" in out
        assert all(line.startswith("//") for line in out.splitlines()[:-2])
    if shutil.which("g++") is None:
        pytest.skip("no C++ compiler to compile the snippet")
    (tmp_path / "arena.h").write_text(out)
    (tmp_path / "main.cc").write_text(
        '#include <cstddef>\n#include <cstdint>\n#include "arena.h"\n'
        "int main() { return sizeof(tensor_arena) == kTensorArenaSize && "
        "reinterpret_cast<std::uintptr_t>(tensor_arena) % 16 == 0 ? 0 : 1; }\n")
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-o", str(tmp_path / "a.out"),
                    str(tmp_path / "main.cc")], check=True, cwd=tmp_path)
    assert subprocess.run([str(tmp_path / "a.out")]).returncode == 0


def test_size_c_refuses_several_models_and_mixed_formats(capsys):
    one_line_error(*cli(capsys, "size", model_path("hello_world_int8"), model_path("ad01_int8"), "--c"))
    one_line_error(*cli(capsys, "size", model_path("hello_world_int8"), "--c", "--json"))


# ---------------------------------------------------------------- size sweep
@pytest.fixture
def sweep_dir(tmp_path):
    for name in ("hello_world_int8", "ad01_int8"):
        shutil.copy(model_path(name), tmp_path / f"{name}.tflite")
    (tmp_path / "nested").mkdir()
    shutil.copy(model_path("micro_speech_quantized"), tmp_path / "nested" / "speech.tflite")
    (tmp_path / "broken.tflite").write_bytes(open(model_path("hello_world_int8"), "rb").read()[:700])
    (tmp_path / "notes.txt").write_text("not a model")
    return tmp_path


def test_sweep_rows_equal_single_model_size_and_errors_do_not_stop_it(capsys, sweep_dir):
    code, out, err = cli(capsys, "size", sweep_dir, "--jobs", 2, "--json")
    assert code == 1 and err == ""          # one model failed: status 1, after every row
    rows = json.loads(out)
    names = [os.path.relpath(r["path"], sweep_dir) for r in rows]
    assert names == ["ad01_int8.tflite", "broken.tflite", "hello_world_int8.tflite",
                     os.path.join("nested", "speech.tflite")]
    broken = rows[1]
    assert "looks truncated" in broken["error"] and broken["min_arena_bytes"] is None
    for row in rows[:1] + rows[2:]:
        assert row["error"] is None
        single = cli_json(capsys, "size", row["path"])
        assert {k: v for k, v in row.items() if k not in ("path", "error")} == single
    # text and CSV: the same rows
    code, out, _ = cli(capsys, "size", sweep_dir)
    assert code == 1 and re.search(r"broken\.tflite +error: .*looks truncated", out)
    assert "1 of 4 models failed" in out
    code, out, _ = cli(capsys, "size", sweep_dir / "ad01_int8.tflite", sweep_dir / "nested", "--csv")
    lines = out.splitlines()
    assert code == 0 and lines[0].split(",") == ["path", *SIZE_KEYS, "error"] and len(lines) == 3
    assert lines[1].split(",")[5] == str(rows[0]["min_arena_bytes"])


def test_sweep_progress_only_on_a_terminal_and_never_with_json(capsys, monkeypatch, sweep_dir):
    code, _, err = cli(capsys, "size", sweep_dir / "nested", sweep_dir / "ad01_int8.tflite")
    assert code == 0 and err == ""                                        # piped: nothing
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["size", str(sweep_dir / "nested"), str(sweep_dir / "ad01_int8.tflite")]) == 0
    drawn = terminal.getvalue()
    assert "[" in drawn and "2/2" in drawn and drawn.endswith("\r\x1b[K")  # drawn, then erased
    terminal.truncate(0)
    terminal.seek(0)
    assert main(["size", str(sweep_dir / "nested"), str(sweep_dir / "ad01_int8.tflite"), "--json"]) == 0
    assert terminal.getvalue() == ""


def test_empty_sweep_and_bad_jobs(capsys, tmp_path):
    one_line_error(*cli(capsys, "size", tmp_path))
    one_line_error(*cli(capsys, "size", model_path("hello_world_int8"), model_path("ad01_int8"), "--jobs", -1))


# ----------------------------------------------------------------------- run
def test_run_output_reports_the_real_path_and_refuses_a_directory(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.array([[1.0]], np.float32))
    data = cli_json(capsys, "run", model_path("hello_world_float"), "--input", tmp_path / "x.npy",
                    "--output", tmp_path / "yy")
    (out,) = data["outputs"]
    # exactly the path given (docs/cli_rules.md): no suffix added
    assert out["path"] == str(tmp_path / "yy") and os.path.isfile(out["path"])
    assert not os.path.exists(tmp_path / "yy.npy")
    code, text, _ = cli(capsys, "run", model_path("hello_world_float"), "--input", tmp_path / "x.npy",
                        "--output", tmp_path / "zz")
    assert code == 0 and text.rstrip().endswith(f"-> {tmp_path / 'zz'}")
    (tmp_path / "outdir").mkdir()
    err = one_line_error(*cli(capsys, "run", model_path("hello_world_float"), "--input", tmp_path / "x.npy",
                              "--output", tmp_path / "outdir"))
    assert "is a directory" in err
    assert os.listdir(tmp_path / "outdir") == [] and not os.path.exists(tmp_path / "outdir.npy")
    err = one_line_error(*cli(capsys, "run", model_path("hello_world_float"), "--input", tmp_path / "x.npy",
                              "--output", tmp_path / "missing" / "y.npy"))
    assert "does not exist" in err


def reference_quantize(x, scale, zero_point, dtype):
    """TFLM's AffineQuantize written out: float32 quotient, round half away from zero."""
    quotient = (np.float32(x) / np.float32(scale)).astype(np.float64)
    rounded = np.trunc(quotient + np.copysign(0.5, quotient))
    info = np.iinfo(dtype)
    return np.clip(rounded + zero_point, info.min, info.max).astype(dtype)


def test_run_quantize_and_dequantize(capsys, tmp_path):
    model = load_model(model_path("hello_world_int8"))
    q_in = model.main.tensors[model.main.inputs[0]].quantization
    q_out = model.main.tensors[model.main.outputs[0]].quantization
    real = np.array([[1.37]], np.float32)
    np.save(tmp_path / "real.npy", real)
    manual = reference_quantize(real, q_in.scale, q_in.zero_point, np.int8)
    np.save(tmp_path / "q.npy", manual)
    by_hand = cli_json(capsys, "run", model_path("hello_world_int8"), "--input", tmp_path / "q.npy")
    quantized = cli_json(capsys, "run", model_path("hello_world_int8"), "--input", tmp_path / "real.npy",
                         "--quantize", "--output", tmp_path / "y.npy")
    assert quantized["outputs"][0]["values"] == by_hand["outputs"][0]["values"]
    deq = cli_json(capsys, "run", model_path("hello_world_int8"), "--input", tmp_path / "real.npy",
                   "--quantize", "--dequantize", "--output", tmp_path / "yf.npy")
    (o,) = deq["outputs"]
    q = by_hand["outputs"][0]["values"][0]
    assert o["dtype"] == "float32" and o["dequantized"] is True
    assert np.load(tmp_path / "yf.npy")[0, 0] == np.float32(q_out.scale * (q - q_out.zero_point))
    assert abs(o["values"][0] - np.sin(1.37)) < 0.1                    # it is the sine model
    # rounding: exactly half a step rounds away from zero, as TFLM's std::round
    half = np.array([[(0.5 + 3) * q_in.scale]], np.float32)
    np.save(tmp_path / "half.npy", half)
    from micro_runtime.tools.arrays import quantize_input
    spec = model.main.tensors[model.main.inputs[0]]
    assert quantize_input(half, spec) == reference_quantize(half, q_in.scale, q_in.zero_point, np.int8)
    # integer data with --quantize, or a float model with float64 data: refused, not cast
    np.save(tmp_path / "ints.npy", np.zeros((1, 1), np.int8))
    assert "real (floating-point)" in one_line_error(*cli(
        capsys, "run", model_path("hello_world_int8"), "--input", tmp_path / "ints.npy", "--quantize"))
    np.save(tmp_path / "f64.npy", np.zeros((1, 1), np.float64))
    assert "float32" in one_line_error(*cli(
        capsys, "run", model_path("hello_world_float"), "--input", tmp_path / "f64.npy", "--quantize"))


def test_a_text_file_given_as_npy(capsys, tmp_path):
    (tmp_path / "x.npy").write_text("0.5\n")
    (tmp_path / "empty.npy").write_bytes(b"")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for name, words in (("x.npy", "not a .npy file"), ("empty.npy", "empty file"),
                        ("objects.npy", "Python objects")):
        err = one_line_error(*cli(capsys, "run", model_path("hello_world_float"), "--input", tmp_path / name))
        assert words in err and "allow_pickle" not in err
    err = one_line_error(*cli(capsys, "drift", model_path("hello_world_float"), "--input", tmp_path / "x.npy"))
    assert "not a .npy file" in err


# -------------------------------------------------------------- progress
@pytest.mark.parametrize("command", [["drift", "--seeds", "3"], ["bench", "--num_runs", "3"]])
def test_slow_commands_show_progress_on_a_terminal_only(capsys, monkeypatch, command):
    argv = [command[0], model_path("hello_world_int8"), *command[1:]]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""                                  # piped: silent
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(argv) == 0
    assert f"{command[0]} [" in terminal.getvalue() and terminal.getvalue().endswith("\r\x1b[K")
    terminal.truncate(0)
    terminal.seek(0)
    assert main(argv + ["--json"]) == 0
    assert terminal.getvalue() == ""


def test_progress_bar_draws_counts():
    stream = Terminal()
    with Progress(4, "job", stream=stream) as bar:
        for _ in range(4):
            bar.advance(note="m")
    assert "job [##############################] 4/4 m" in stream.getvalue()
    quiet = io.StringIO()
    with Progress(4, "job", stream=quiet) as bar:
        bar.advance()
    assert quiet.getvalue() == ""


# --------------------------------------------------------- small things
def test_version(capsys):
    from micro_runtime import __version__
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"micro-runtime {__version__}\n"


def test_arena_too_small_is_said_once_in_tflm_words(capsys):
    for model, needs in (("hello_world_float", "Failed to allocate tail memory. Requested:"),
                         ("person_detect", "needs 256 bytes on its own")):
        err = one_line_error(*cli(capsys, "run", model_path(model), "--arena-size", 100, "--input", "x.npy"))
        assert err.count("arena") == 1
        assert needs in err and len(re.findall(r"\b100 bytes", err)) == 1, err
    err = one_line_error(*cli(capsys, "run", model_path("hello_world_float"), "--arena-size", 100,
                              "--input", "x.npy"))
    assert re.search(r"missing: \d+; the arena is 100 bytes, this model needs at least \d+ bytes$", err.strip())


def test_alignment_gap_is_explained_not_flagged(capsys):
    # 32-bit: TFLM's total is 4 bytes under the minimum, all of it alignment
    data = cli_json(capsys, "size", model_path("person_detect"), "--target", "mcu32")
    assert data["min_arena_bytes"] - data["tflm_reported_total_bytes"] == data["alignment_gap_bytes"] == 4
    assert data["temporaries_gap_bytes"] == 0
    code, out, _ = cli(capsys, "size", model_path("person_detect"), "--target", "mcu32")
    assert "under-reports" not in out and "+4 bytes of 16-byte alignment" in out
    code, out, _ = cli(capsys, "size", model_path("ad01_int8"), "--target", "host64")
    assert "under-reports the minimum by 656: 648 bytes of temporaries" in out and "8 of 16-byte alignment" in out


def test_bundled_names_are_listed(capsys):
    err = one_line_error(*cli(capsys, "size", "bundled:nope"))
    assert "no bundled model 'nope'" in err and "bundled:person_detect" in err and os.sep not in err


@pytest.mark.parametrize("argv,words", [
    (["plan", "{m}", "--width", "0"], "--width must be at least 10"),
    (["optimize", "{m}", "-o", "{out}", "--budget", "-1"], "--budget must be a positive number"),
    (["size", "{m}", "--target", "stm32"], "unknown target 'stm32'; known targets: "),
    (["audit", "{m}", "--target", "stm32"], "unknown target"),
])
def test_bad_option_values_are_one_line_with_status_1(capsys, tmp_path, argv, words):
    argv = [a.format(m=model_path("hello_world_int8"), out=tmp_path / "o.tflite") for a in argv]
    err = one_line_error(*cli(capsys, *argv))
    assert words in err
    if "target" in words:
        assert all(name in err for name in TARGETS)        # the known targets, from targets.py


def test_unparseable_command_line_is_one_line_with_status_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["size", model_path("hello_world_int8"), "--no-such-option"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_plan_svg_names_tensors_and_their_producers(capsys, tmp_path):
    svg = tmp_path / "plan.svg"
    data = cli_json(capsys, "plan", model_path("person_detect"), "--svg", svg)
    root = ET.parse(svg).getroot()
    titles = ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("title")]
    texts = ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]
    for k, b in enumerate(data["buffers"]):
        assert b["producer"]
        line = next(t for t in titles if t.startswith(f"buffer {k}: "))
        assert b["name"] in line and f"(produced by {b['producer']})" in line
    assert any(b["producer"] == "model input" for b in data["buffers"])
    assert any(b["producer"].endswith("CONV_2D") for b in data["buffers"])
    assert any(re.fullmatch(r"\d+ \w+", t) for t in texts)    # names inline where they fit
    assert not any(re.fullmatch(r"#\d+", t) for t in texts)    # no bare '#51' labels


def test_truncated_model_says_so_and_gives_its_length(capsys, tmp_path):
    raw = open(model_path("person_detect"), "rb").read()
    for cut in (len(raw) * 2 // 3, 4096, 100):
        path = tmp_path / f"cut{cut}.tflite"
        path.write_bytes(raw[:cut])
        err = one_line_error(*cli(capsys, "size", path))
        assert "looks truncated" in err and f"it is {cut} bytes long" in err


def test_readme_shows_the_snippet_the_command_prints(capsys):
    from tests.helpers import README
    command = "$ micro-runtime size bundled:person_detect --cpp\n"
    text = open(README).read()
    shown = text[text.index(command) + len(command):]
    shown = shown[:shown.index("```")]
    code, out, _ = cli(capsys, "size", "bundled:person_detect", "--cpp")
    assert code == 0 and out == shown
