"""Many inputs per model (issue 17): every zoo model and every tests/data/tflm_examples
model, a few seeded full-range input samples each, run in sequence on one interpreter by
TFLM and by us; every sample's outputs must be bit-identical. The long run is
``python benchmarks/many_inputs.py`` (64 samples per model)."""
import os

import pytest

from tests.conformance_check import all_models, many_inputs

pytestmark = pytest.mark.oracle

#: samples per model in CI (raise with MICRO_RUNTIME_MANY_INPUTS for a longer local run)
SAMPLES = int(os.environ.get("MICRO_RUNTIME_MANY_INPUTS", "8"))
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MODELS = [os.path.relpath(p, DATA) for p in all_models()]


def test_every_model_is_included():
    assert len(MODELS) == 16 + 132
    assert "ad01_int8.tflite" in MODELS


@pytest.mark.parametrize("name", MODELS)
def test_model_is_exact_on_many_inputs(oracle, name):
    row = many_inputs(os.path.join(DATA, name), oracle, SAMPLES, seed=7)
    assert row["exact"] == row["total"], f"{name}: {row['exact']}/{row['total']} {row['status']} {row['detail']}"


def test_issue_17_sample(oracle):
    """ad01_int8, issue 17's 64 samples (seed 7): sample 32 differed by one step in the
    last FULLY_CONNECTED before the multiplier fix; all 64 must be exact."""
    row = many_inputs(os.path.join(DATA, "ad01_int8.tflite"), oracle, 64, seed=7)
    assert row["exact"] == 64, row
