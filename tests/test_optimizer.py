"""Arena optimizer: the optimized model, run in stock TFLM, gives identical outputs, a head
no larger than before, and exactly the head and minimum arena we predict."""
import re

import numpy as np
import pytest

from micro_runtime.optimizer import lower_bound, optimize_model
from micro_runtime.sizing import measure_arena
from tests.helpers import assert_bit_exact, model_bytes
from tests.test_zoo import ZOO, random_inputs

pytestmark = pytest.mark.oracle


def tflm_head(lines):
    return int(re.search(r"Arena allocation head (\d+) bytes", "\n".join(lines)).group(1))


@pytest.mark.parametrize("reorder", [False, True], ids=["offsets", "reorder"])
@pytest.mark.parametrize("name", ZOO)
def test_optimized_model_in_tflm(oracle, name, reorder):
    raw = model_bytes(name)
    result = optimize_model(raw, target="host64", reorder=reorder, budget_s=2.0)
    assert result.optimized_head_bytes <= result.original_head_bytes
    assert result.optimized_head_bytes >= result.lower_bound_bytes
    inputs = random_inputs(name, 7)
    original = oracle.run(raw, inputs, arena_size=1 << 21)
    optimized = oracle.run(result.model, inputs, arena_size=1 << 21)
    assert original.ok and optimized.ok, (original.error, optimized.error)
    assert_bit_exact(optimized.outputs, original.outputs, f"{name} optimized")
    assert tflm_head(optimized.lines) == result.optimized_head_bytes
    assert tflm_head(optimized.lines) <= tflm_head(original.lines)
    predicted = measure_arena(result.model, "host64").min_arena_bytes
    assert predicted == result.optimized_min_arena_bytes
    zeros = [np.zeros_like(x) for x in inputs]
    assert oracle.min_arena(result.model, zeros, high=predicted + 1024) == predicted


def test_vww_reaches_the_live_memory_bound(oracle):
    result = optimize_model(model_bytes("vww_96_int8"), target="host64", budget_s=5.0)
    assert result.original_head_bytes == 73728
    assert result.optimized_head_bytes == result.lower_bound_bytes == 55296


def test_lower_bound_is_the_live_peak():
    from micro_runtime.optimizer import Buffer
    bufs = [Buffer(16, 0, 1, 0), Buffer(32, 1, 2, 1), Buffer(48, 2, 3, 2), Buffer(64, 0, 3, None)]
    assert lower_bound(bufs) == 64 + 32 + 48
