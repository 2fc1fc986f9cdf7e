"""Real models beyond the zoo, from TFLM's own tree (tests/data/tflm_examples, see its
README): the 127 single-kernel int16 models of TFLM's SEANet integration tests, the DTLN
noise-suppression model, the float MNIST LSTM, a speech LSTM, the float sine model and the
float audio front end (signal custom ops).
Each must behave exactly as in TFLM on seeded random inputs: outputs, allocation report
and minimum arena."""
import os

import pytest

from tests.conformance_check import check

pytestmark = pytest.mark.oracle

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tflm_examples")
MODELS = sorted(os.path.relpath(os.path.join(root, name), HERE)
                for root, _, names in os.walk(HERE) for name in names if name.endswith(".tflite"))


def test_every_example_model_is_listed():
    assert len(MODELS) == 132


@pytest.mark.parametrize("name", MODELS)
def test_example_model_matches_tflm(oracle, name):
    row = check(os.path.join(HERE, name), oracle, seeds=2, min_arena=True)
    assert row["status"] == "identical", f"{name}: {row['status']}: {row['detail']}"
