"""``micro-runtime eval``: outputs, accuracy and confusion against per-sample invokes,
JSON keys, labels forms, errors, the progress bar."""
import json

import numpy as np
import pytest

from micro_runtime import MicroInterpreter
from micro_runtime.tools.cli import main
from micro_runtime.tools.evaluation import classification_summary, run_evaluation
from tests.helpers import model_path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def speech_data(tmp_path):
    rng = np.random.default_rng(11)
    x = rng.integers(-128, 128, (37, 1960), dtype=np.int8)
    y = rng.integers(0, 4, 37)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    return x, y, tmp_path


def reference_scores(x):
    it = MicroInterpreter(model_path("micro_speech_quantized"), arena_size=1 << 20, target="mcu32")
    it.allocate_tensors()
    out = []
    for sample in x:
        it.reset()
        it.set_input(sample.reshape(1, 1960), 0)
        it.invoke()
        out.append(np.array(it.output(0)))
    return np.stack(out)


def test_eval_json_accuracy_and_confusion(capsys, speech_data):
    x, y, tmp = speech_data
    code, out, err = run(capsys, "eval", model_path("micro_speech_quantized"), "--inputs", tmp / "x.npy",
                         "--labels", tmp / "y.npy", "--batch", 8, "--output", tmp / "out.npy", "--json",
                         "--target", "mcu32")
    assert code == 0, err
    data = json.loads(out)
    assert {"model", "target", "samples", "batch", "stream", "seconds", "samples_per_s",
            "operators", "outputs", "labels", "whole_model_per_sample"} <= set(data)
    assert data["samples"] == 37 and data["batch"] == 8 and data["target"] == "mcu32"
    scores = reference_scores(x)
    saved = np.load(tmp / "out.npy")
    assert saved.dtype == scores.dtype and saved.tobytes() == scores.tobytes()
    predicted = scores.reshape(37, -1).argmax(axis=1)
    labels = data["labels"]
    assert labels["correct"] == int((predicted == y).sum())
    assert labels["accuracy"] == pytest.approx((predicted == y).mean())
    expected = np.zeros((4, 4), int)
    for t, p in zip(y, predicted):
        expected[t, p] += 1
    assert labels["confusion"] == expected.tolist()
    assert [c["count"] for c in labels["per_class"]] == np.bincount(y, minlength=4).tolist()
    assert all(o["mode"] == "block" for o in data["operators"])
    assert err == ""          # not a terminal: no progress bar


def test_eval_text_and_one_hot_labels(capsys, speech_data):
    x, y, tmp = speech_data
    np.save(tmp / "onehot.npy", np.eye(4, dtype=np.float32)[y])
    code, out, _ = run(capsys, "eval", model_path("micro_speech_quantized"), "--inputs", tmp / "x.npy",
                       "--labels", tmp / "onehot.npy", "--target", "host64")
    assert code == 0
    predicted = reference_scores(x).reshape(37, -1).argmax(axis=1)
    correct = int((predicted == y).sum())
    assert f"({correct}/37)" in out and "confusion (rows: label, columns: predicted)" in out
    assert "host64" in out and "samples/s" in out


def test_eval_stream_and_without_labels(capsys, tmp_path):
    x = np.random.default_rng(0).integers(-32768, 32768, (5, 1, 96), dtype=np.int16)
    np.save(tmp_path / "x.npy", x)
    code, out, _ = run(capsys, "eval", model_path("keyword_scrambled_8bit"), "--inputs",
                       tmp_path / "x.npy", "--stream", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["stream"] is True and data["labels"] is None
    assert "stream" in data["whole_model_per_sample"]


@pytest.mark.parametrize("labels, message", [
    (np.zeros(5, np.int64), "expected 37 labels"),
    (np.full(37, 9), "outside the model's 4 classes"),
    (np.zeros(37, np.float32), "integer class ids"),
    (np.zeros((37, 3), np.float32), "rows of 3 values"),
])
def test_eval_label_errors(capsys, speech_data, labels, message):
    _, _, tmp = speech_data
    np.save(tmp / "bad.npy", labels)
    code, _, err = run(capsys, "eval", model_path("micro_speech_quantized"), "--inputs", tmp / "x.npy",
                       "--labels", tmp / "bad.npy")
    assert code == 1 and message in err and err.count("\n") == 1


def test_eval_input_errors(capsys, tmp_path):
    np.save(tmp_path / "f.npy", np.zeros((3, 1960), np.float32))
    code, _, err = run(capsys, "eval", model_path("micro_speech_quantized"), "--inputs", tmp_path / "f.npy")
    assert code == 1 and "dtype" in err
    code, _, err = run(capsys, "eval", model_path("micro_speech_quantized"))
    assert code == 1 and "--inputs" in err
    code, _, err = run(capsys, "eval", model_path("micro_speech_quantized"), "--inputs", tmp_path / "none.npy")
    assert code == 1 and "cannot read input 0" in err
    np.save(tmp_path / "x.npy", np.zeros((3, 1960), np.int8))
    code, _, err = run(capsys, "eval", model_path("micro_speech_quantized"), "--inputs", tmp_path / "x.npy",
                       "--output-index", "5")      # without --labels too: not ignored
    assert code == 1 and "--output-index 5: the model has 1 output(s)" in err


def test_accuracy_needs_class_scores():
    with pytest.raises(Exception, match="one score per class"):
        classification_summary(np.zeros((4, 1, 1), np.int8), np.zeros(4, int))


def test_progress_follows_the_blocks(speech_data):
    _, _, tmp = speech_data
    calls = []
    result = run_evaluation(model_path("micro_speech_quantized"), [tmp / "x.npy"], target="host64",
                            batch=16, stream=False, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(16, 37), (32, 37), (37, 37)] and result["samples"] == 37
