"""Batched evaluation in several worker processes (``evaluate(..., jobs=N)``,
``micro-runtime eval --jobs N``): every sample's outputs equal separate invokes of the
single-sample interpreter bit for bit whatever the number of workers; a worker's error
reaches the caller as the same exception; streams of a stateful model stay in one
process."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from micro_runtime import InputError, KernelError
from micro_runtime import batched
from micro_runtime.batched import Evaluator, _can_fork, available_processors, evaluate
from micro_runtime.tools.cli import main
from tests.helpers import model_bytes, model_path
from tests.test_batched import assert_same, per_sample, random_samples

pytestmark = pytest.mark.skipif(not _can_fork(), reason="worker processes need fork()")


@pytest.fixture(autouse=True)
def always_fork(monkeypatch):
    """Workers start however short the run (the tests' runs are short)."""
    monkeypatch.setattr(batched, "MIN_PARALLEL_SECONDS", 0.0)

CASES = [("micro_speech_quantized", 41), ("keyword_scrambled_8bit", 23), ("trained_lstm_int8", 19),
         ("hello_world_float", 101), ("person_detect", 15), ("audio_preprocessor_int8", 17)]


@pytest.mark.parametrize("name, count", CASES)
@pytest.mark.parametrize("jobs", [2, 3])
def test_workers_equal_per_sample_invokes(name, count, jobs, monkeypatch):
    # as many workers as asked even on a small machine (they are capped by its processors)
    monkeypatch.setattr("micro_runtime.workers.available_processors", lambda: 8)
    model = model_bytes(name)
    ev = Evaluator(model, target="host64", batch=4)
    inputs = random_samples(np.random.default_rng(jobs), ev.input_specs, count)
    assert ev.usable_jobs(jobs, count) == jobs
    outs = ev.run(inputs, jobs=jobs)
    assert_same(outs, per_sample(model, inputs), f"{name} jobs={jobs}")
    assert all(o.flags.writeable and pickle.loads(pickle.dumps(o)).tobytes() == o.tobytes()
               for o in outs)
    assert ev.jobs_used == jobs     # two blocks here, the rest split over the workers


def test_progress_adds_up_over_workers():
    model = model_bytes("micro_speech_quantized")
    ev = Evaluator(model, target="host64", batch=3)
    inputs = random_samples(np.random.default_rng(0), ev.input_specs, 30)
    calls = []
    out = ev.run(inputs, jobs=2, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (30, 30)
    assert all(t == 30 for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert_same(out, ev.run(inputs))


def test_one_stream_stays_in_one_process():
    model = model_bytes("keyword_scrambled_8bit")
    ev = Evaluator(model, target="host64", stream=True)
    assert ev.usable_jobs(4, 100) == 1
    inputs = random_samples(np.random.default_rng(1), ev.input_specs, 9)
    assert_same(ev.run(inputs, jobs=4), per_sample(model, inputs, stream=True))


def test_short_runs_start_no_workers(monkeypatch):
    monkeypatch.setattr(batched, "MIN_PARALLEL_SECONDS", 1e9)
    model = model_bytes("micro_speech_quantized")
    ev = Evaluator(model, target="host64", batch=4)
    inputs = random_samples(np.random.default_rng(5), ev.input_specs, 20)
    calls = []
    assert_same(ev.run(inputs, jobs=2, progress=lambda d, t: calls.append(d)), per_sample(model, inputs))
    assert ev.jobs_used == 1 and calls == [4, 8, 12, 16, 20]


def test_job_counts(monkeypatch):
    ev = Evaluator(model_bytes("hello_world_int8"), target="host64")
    assert ev.usable_jobs(1, 1000) == 1
    assert ev.usable_jobs(0, 10 ** 6) == available_processors()
    assert ev.usable_jobs(10 ** 6, 10 ** 6) == available_processors()   # capped by the machine
    monkeypatch.setattr("micro_runtime.workers.available_processors", lambda: 8)
    assert ev.usable_jobs(8, 5) == 2          # at least two samples per worker
    assert ev.usable_jobs(8, 3) == 1
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match="jobs"):
            ev.usable_jobs(bad, 10)


def test_worker_error_is_raised_as_the_same_class(monkeypatch):
    def fail(self, xs, outs, total, progress):
        raise KernelError("no such thing", "GATHER", 3)
    ev = Evaluator(model_bytes("hello_world_int8"), target="host64")
    inputs = random_samples(np.random.default_rng(2), ev.input_specs, 10)
    monkeypatch.setattr(Evaluator, "_run_into", fail)
    with pytest.raises(KernelError, match=r"GATHER \(operator #3\): no such thing") as info:
        ev.run(inputs, jobs=2)
    assert info.value.op_index == 3 and info.value.detail == "no such thing"


def test_evaluate_and_cli_take_jobs(tmp_path, capsys):
    model = model_bytes("micro_speech_quantized")
    x = random_samples(np.random.default_rng(3), Evaluator(model, target="host64").input_specs, 25)[0]
    expected = per_sample(model, [x])
    assert_same(evaluate(model, x, target="host64", jobs=2, batch=4), expected)
    np.save(tmp_path / "x.npy", x)
    code = main(["eval", model_path("micro_speech_quantized"), "--inputs", str(tmp_path / "x.npy"),
                 "--target", "host64", "--jobs", "2", "--batch", "4", "--json",
                 "--output", str(tmp_path / "y.npy")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["jobs"] == 2
    assert_same([np.load(tmp_path / "y.npy")], expected)
    code = main(["eval", model_path("micro_speech_quantized"), "--inputs", str(tmp_path / "x.npy"),
                 "--jobs", "-2"])
    out, err = capsys.readouterr()
    assert code == 1 and "--jobs" in err and err.count("\n") == 1
