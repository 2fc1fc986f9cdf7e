"""Arena optimizer: the optimized model, run in stock TFLM, gives identical outputs, a head
no larger than before, and exactly the head and minimum arena we predict."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.tools.optimizer import lower_bound, optimize_model
from micro_runtime.tools.sizing import measure_arena
from tests.conftest import EXAMPLES
from tests.helpers import assert_bit_exact, model_bytes
from tests.test_planner_graphs import vector_graphs
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
    from micro_runtime.tools.optimizer import Buffer
    bufs = [Buffer(16, 0, 1, 0), Buffer(32, 1, 2, 1), Buffer(48, 2, 3, 2), Buffer(64, 0, 3, None)]
    assert lower_bound(bufs) == 64 + 32 + 48


def _two_branch_model() -> bytes:
    """x -> PAD (big A) and PAD (big B); each sliced back to x's size; the slices added.
    Written in the order PAD, PAD, SLICE, SLICE, ADD both big tensors are alive at once;
    PAD, SLICE, PAD, SLICE, ADD needs only one."""
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (16,), "FLOAT32")
    pads = g.add_tensor("pads", (1, 2), "INT32", data=np.array([[0, 1000]], np.int32))
    begin = g.add_tensor("begin", (1,), "INT32", data=np.array([0], np.int32))
    size = g.add_tensor("size", (1,), "INT32", data=np.array([16], np.int32))
    big_a = g.add_tensor("big_a", (1016,), "FLOAT32")
    big_b = g.add_tensor("big_b", (1016,), "FLOAT32")
    a = g.add_tensor("a", (16,), "FLOAT32")
    b_ = g.add_tensor("b", (16,), "FLOAT32")
    out = g.add_tensor("out", (16,), "FLOAT32")
    g.add_operator("PAD", [x, pads], [big_a])
    g.add_operator("PAD", [x, pads], [big_b])
    g.add_operator("SLICE", [big_a, begin, size], [a])
    g.add_operator("SLICE", [big_b, begin, size], [b_])
    g.add_operator("ADD", [a, b_], [out], fused_activation_function=0)
    g.inputs, g.outputs = [x], [out]
    return b.build()


def _check_in_tflm(oracle, raw: bytes, result, inputs) -> None:
    """The optimized model in TFLM: same outputs, the predicted head, no larger head."""
    original = oracle.run(raw, inputs, arena_size=1 << 20)
    optimized = oracle.run(result.model, inputs, arena_size=1 << 20)
    assert original.ok and optimized.ok, (original.error, optimized.error)
    assert_bit_exact(optimized.outputs, original.outputs, "optimized")
    assert tflm_head(optimized.lines) == result.optimized_head_bytes
    assert tflm_head(original.lines) == result.original_head_bytes
    assert result.lower_bound_bytes <= result.optimized_head_bytes <= result.original_head_bytes


def test_reorder_lowers_the_head_of_a_branchy_graph(oracle):
    raw = _two_branch_model()
    plain = optimize_model(raw, target="host64", budget_s=1.0)
    result = optimize_model(raw, target="host64", reorder=True, budget_s=1.0)
    assert result.reordered and result.operator_order == [0, 2, 1, 3, 4]
    # one big buffer (1016 floats = 4064 bytes) plus the small ones instead of two
    assert plain.optimized_head_bytes >= 2 * 4064
    assert result.optimized_head_bytes < 4064 + 4 * 64 < plain.optimized_head_bytes
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    _check_in_tflm(oracle, raw, result, [x])
    ours = MicroInterpreter(result.model, arena_size=1 << 20, target="host64")
    ours.allocate_tensors()
    ours.set_input(x, 0)
    ours.invoke()
    assert np.array_equal(ours.output(0), 2 * x)


@settings(max_examples=EXAMPLES * 2)
@given(vector_graphs(), st.booleans())
def test_optimized_random_graphs_in_tflm(oracle, case, reorder):
    raw, inputs = case
    result = optimize_model(raw, target="host64", reorder=reorder, budget_s=0.2)
    _check_in_tflm(oracle, raw, result, inputs)
    predicted = measure_arena(result.model, "host64").min_arena_bytes
    assert predicted == result.optimized_min_arena_bytes
    assert oracle.fits(result.model, predicted, inputs)
    assert not oracle.fits(result.model, predicted - 1, inputs)
