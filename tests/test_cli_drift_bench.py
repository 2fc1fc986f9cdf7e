"""``micro-runtime drift`` and ``micro-runtime bench`` through cli.main."""
import json

import numpy as np
import pytest

from micro_runtime.tools.bench import BENCH_KEYS
from micro_runtime.tools.cli import main
from micro_runtime.tools.drift import DRIFT_KEYS, OUTPUT_KEYS, measure_drift
from micro_runtime.tools.sizing import measure_arena
from tests.helpers import model_path


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv):
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------------- drift
def test_drift_json_has_the_documented_keys_and_the_api_numbers(capsys):
    data = cli_json(capsys, "drift", model_path("hello_world_int8"), "--seeds", 5)
    assert tuple(data) == DRIFT_KEYS
    assert data["model"] == "hello_world_int8.tflite" and data["target"] == "cortex-m4+cmsis-nn"
    assert data["precision"] == "fp32" and data["samples"] == 5 and data["seeds"] == [0, 1, 2, 3, 4]
    assert data["clamp"] is False
    assert data["delegated_nodes"] == data["total_nodes"] == 3 and data["delegate_subsets"] == 1
    (out,) = data["outputs"]
    assert tuple(out) == OUTPUT_KEYS
    assert out["unit"] == "quantized steps" and out["top1_agreement"] is None   # one value: no classes
    api = measure_drift(model_path("hello_world_int8"), "fp32", seeds=5).outputs[0]
    assert (out["max_abs_diff"], out["mean_abs_diff"]) == (api.max_abs_diff, api.mean_abs_diff)
    assert out["max_abs_diff"] >= 1 and 0 < out["mean_abs_diff"] <= out["max_abs_diff"]


def test_drift_numbers_are_what_the_two_interpreters_give(capsys):
    """Recompute the table from two interpreters run by hand."""
    from micro_runtime import MicroInterpreter
    from micro_runtime.tools.drift import random_inputs
    from micro_runtime.delegates.float_delegate import FloatDelegate
    data = cli_json(capsys, "drift", model_path("ad01_int8"), "--seeds", 3, "--precision", "fp16")
    ref = MicroInterpreter(model_path("ad01_int8"), arena_size=1 << 20)
    ref.allocate_tensors()
    acc = MicroInterpreter(model_path("ad01_int8"), arena_size=1 << 20)
    acc.modify_graph_with_delegate(FloatDelegate("fp16"))
    spec = ref.model.main.tensors[ref.model.main.inputs[0]]
    diffs, top = [], []
    for s in range(3):
        x = random_inputs([spec], s)[0]
        outs = []
        for it in (ref, acc):
            it.set_input(x)
            it.invoke()
            outs.append(it.output(0).astype(int))
        diffs.append(np.abs(outs[0] - outs[1]))
        top.append(outs[0].argmax() == outs[1].argmax())
    out = data["outputs"][0]
    assert out["max_abs_diff"] == np.max(diffs)
    assert out["mean_abs_diff"] == pytest.approx(np.mean(diffs))
    # ad01 is an autoencoder: its output is a reconstruction, where top-1 means nothing
    assert out["top1_agreement"] is None and len(top) == 3
    assert out["exact_fraction"] == pytest.approx(np.mean(np.stack(diffs) == 0))


def test_drift_text_and_float_model(capsys):
    code, out, _ = cli(capsys, "drift", model_path("hello_world_float"), "--precision", "fp16", "--seeds", 4)
    assert code == 0
    assert "integer reference vs float delegate (fp16)" in out
    assert "3 of 3 operators delegated (1 subset); 4 random input(s) (seeds 0..3)" in out
    row = out.strip().splitlines()[-1].split()
    assert row[0] == "0" and row[-5] == "real" and float(row[-4]) > 0 and row[-1] == "-"
    data = cli_json(capsys, "drift", model_path("hello_world_float"), "--seeds", 4)
    assert data["outputs"][0]["max_abs_diff"] == 0.0          # fp32 on a float model is exact


def test_drift_clamp_flag(capsys):
    code, out, _ = cli(capsys, "drift", model_path("ad01_int8"), "--seeds", 3, "--clamp")
    assert code == 0 and "(fp32, outputs clamped to their int range)" in out
    clamped = cli_json(capsys, "drift", model_path("ad01_int8"), "--seeds", 3, "--clamp")
    free = cli_json(capsys, "drift", model_path("ad01_int8"), "--seeds", 3)
    assert clamped["clamp"] is True
    assert clamped["outputs"][0]["mean_abs_diff"] < free["outputs"][0]["mean_abs_diff"]


def test_drift_with_given_inputs(capsys, tmp_path):
    batch = np.arange(-100, 100, 25, dtype=np.int8).reshape(8, 1, 1)
    path = tmp_path / "x.npy"
    np.save(path, batch)
    data = cli_json(capsys, "drift", model_path("hello_world_int8"), "--input", path)
    assert data["samples"] == 8 and data["input_source"] == "files" and data["seeds"] is None
    one = tmp_path / "one.npy"
    np.save(one, batch[0])
    assert cli_json(capsys, "drift", model_path("hello_world_int8"), "--input", one)["samples"] == 1


@pytest.mark.parametrize("args,message", [
    (["--input", "{wrong_dtype}"], "expected dtype int8 but got float32"),
    (["--input", "{wrong_shape}"], "expected shape (1, 1)"),
    (["--input", "{missing}"], "cannot read input 0"),
    (["--seeds", "0"], "--seeds must be at least 1"),
    (["--input", "{too_many}"], "input 0 holds 10001 samples; drift takes at most 10000"),
])
def test_drift_errors_are_one_line(capsys, tmp_path, args, message):
    np.save(tmp_path / "wrong_dtype.npy", np.zeros((1, 1), np.float32))
    np.save(tmp_path / "wrong_shape.npy", np.zeros((2, 3), np.int8))
    np.save(tmp_path / "too_many.npy", np.zeros((10001, 1), np.int8))   # the --seeds bound, for files
    files = {k: str(tmp_path / f"{k}.npy") for k in ("wrong_dtype", "wrong_shape", "missing", "too_many")}
    code, out, err = cli(capsys, "drift", model_path("hello_world_int8"), *[a.format(**files) for a in args])
    assert code == 1 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_drift_on_a_missing_model(capsys):
    code, _, err = cli(capsys, "drift", "nope.tflite")
    assert code == 1 and "model file not found" in err and err.count("\n") == 1


# ---------------------------------------------------------------------- bench
def test_bench_json_keys_profile_and_arena(capsys):
    data = cli_json(capsys, "bench", model_path("ad01_int8"), "--num_runs", 6, "--warmup_runs", 2,
                    "--target", "host64")
    assert tuple(data) == BENCH_KEYS
    assert data["num_runs"] == 6 and data["warmup_runs"] == 2 and data["delegate"] == "none"
    t = data["invoke_ms"]
    assert 0 < t["min"] <= t["median"] <= t["max"] and t["min"] <= t["mean"] <= t["max"] and t["std"] >= 0
    for key in ("load_ms", "init_ms", "allocate_ms", "first_invoke_ms", "warmup_mean_ms"):
        assert data[key] > 0
    assert data["delegate_ms"] is None
    ops = data["operators"]
    assert [o["node"] for o in ops] == list(range(10)) and {o["op"] for o in ops} == {"FULLY_CONNECTED"}
    assert sum(o["percent"] for o in ops) == pytest.approx(100, abs=0.1)
    assert ops[-1]["cdf_percent"] == pytest.approx(100, abs=0.01)
    # the operators' mean times account for (almost all of) the mean invoke time
    assert sum(o["mean_ms"] for o in ops) <= t["mean"] * 1.05
    assert data["op_types"] == [{"op": "FULLY_CONNECTED", "count": 10,
                                 "mean_ms": pytest.approx(sum(o["mean_ms"] for o in ops), abs=1e-3),
                                 "percent": pytest.approx(100, abs=0.01)}]
    size = measure_arena(model_path("ad01_int8"), "host64")
    assert data["arena"] == {"min_arena_bytes": size.min_arena_bytes, "head_bytes": size.head_bytes,
                             "tail_bytes": size.tail_bytes,
                             "temporaries_gap_bytes": size.temporaries_gap_bytes,
                             "alignment_gap_bytes": size.alignment_gap_bytes}


def test_bench_with_the_float_delegate(capsys):
    plain = cli_json(capsys, "bench", model_path("hello_world_float"), "--num_runs", 3)
    data = cli_json(capsys, "bench", model_path("hello_world_float"), "--num_runs", 3,
                    "--delegate", "float16")
    assert data["delegate"] == "float16" and data["delegate_ms"] > 0
    assert [o["op"] for o in data["operators"]] == ["DELEGATE_float16_0"]
    assert data["arena"]["head_bytes"] < plain["arena"]["head_bytes"]


def test_bench_text(capsys):
    code, out, _ = cli(capsys, "bench", model_path("hello_world_int8"), "--num_runs", 4, "--warmup_runs", 0)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("Graph: [hello_world_int8.tflite] (2704 bytes)   target: cortex-m4+cmsis-nn   "
                        "interpreter: recording   delegate: none")
    assert any(l.startswith("Inference timings in ms: count=4 min=") for l in lines)
    assert not any(l.startswith("Warmup:") for l in lines)
    assert any(l.startswith("Arena (cortex-m4+cmsis-nn): minimum ") for l in lines)
    table = lines[lines.index("Operator-wise profile (mean of 4 runs; host time of the emulator):") + 2:]
    assert [l.split()[:2] for l in table[:3]] == [["0", "FULLY_CONNECTED"], ["1", "FULLY_CONNECTED"],
                                                  ["2", "FULLY_CONNECTED"]]


@pytest.mark.parametrize("args,message", [
    (["--num_runs", "0"], "--num_runs must be a number of timed invokes (at least 1), not 0"),
    (["--warmup_runs", "-1"], "--warmup_runs must be a number of untimed invokes (at least 0), not -1"),
])
def test_bench_errors_are_one_line(capsys, args, message):
    code, out, err = cli(capsys, "bench", model_path("hello_world_int8"), *args)
    assert code == 1 and out == "" and message in err and err.count("\n") == 1
    code, _, err = cli(capsys, "bench", "missing.tflite")
    assert code == 1 and "model file not found" in err
