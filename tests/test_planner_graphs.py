"""The greedy and linear planners compared with TFLM's through whole models.

Hypothesis draws a random DAG of float32 vector ops (ADD, CONCATENATION, PAD, SLICE, RELU)
whose tensors have varied sizes and lifetimes; ours and TFLM's must report the same head
(the planner's maximum size) in ``print_allocations()``, the same minimum arena, and the
same outputs. With ``kPreserveAllTensors`` TFLM plans with the LinearMemoryPlanner: every
intermediate tensor must then match too.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.tools.model_writer import ModelBuilder
from tests import oracle as oracle_mod
from tests.conftest import EXAMPLES
from tests.helpers import assert_bit_exact, compare_with_tflm

pytestmark = pytest.mark.skipif(not oracle_mod.available(), reason="tflite-micro oracle not installed")


@st.composite
def vector_graphs(draw):
    """(model bytes, input arrays): a random DAG over 1-D float32 tensors."""
    b = ModelBuilder()
    g = b.subgraph()
    n_inputs = draw(st.integers(1, 3))
    lengths, tensors, inputs = [], [], []
    for k in range(n_inputs):
        n = draw(st.integers(1, 96))
        tensors.append(g.add_tensor(f"in{k}", (n,), "FLOAT32"))
        lengths.append(n)
        inputs.append(tensors[-1])
    n_ops = draw(st.integers(1, 12))
    for k in range(n_ops):
        kind = draw(st.sampled_from(["ADD", "CONCATENATION", "PAD", "SLICE", "RELU"]))
        a = draw(st.integers(0, len(tensors) - 1))
        la = lengths[a]
        if kind == "ADD":
            same = [i for i, n in enumerate(lengths) if n == la]
            c = draw(st.sampled_from(same))
            ins, out_len, opts = [tensors[a], tensors[c]], la, {"fused_activation_function": 0}
        elif kind == "CONCATENATION":
            c = draw(st.integers(0, len(tensors) - 1))
            ins, out_len = [tensors[a], tensors[c]], la + lengths[c]
            opts = {"axis": 0, "fused_activation_function": 0}
        elif kind == "PAD":
            before, after = draw(st.integers(0, 40)), draw(st.integers(0, 40))
            pads = g.add_tensor(f"pads{k}", (1, 2), "INT32",
                                data=np.array([[before, after]], np.int32))
            ins, out_len, opts = [tensors[a], pads], la + before + after, {}
        elif kind == "SLICE":
            begin = draw(st.integers(0, la - 1))
            size = draw(st.integers(1, la - begin))
            bt = g.add_tensor(f"begin{k}", (1,), "INT32", data=np.array([begin], np.int32))
            st_ = g.add_tensor(f"size{k}", (1,), "INT32", data=np.array([size], np.int32))
            ins, out_len, opts = [tensors[a], bt, st_], size, {}
        else:
            ins, out_len, opts = [tensors[a]], la, {}
        out = g.add_tensor(f"t{k}", (out_len,), "FLOAT32")
        g.add_operator(kind, ins, [out], **opts)
        tensors.append(out)
        lengths.append(out_len)
    produced = tensors[n_inputs:]
    extra = draw(st.lists(st.sampled_from(produced[:-1]), max_size=2, unique=True)) \
        if len(produced) > 1 else []
    g.inputs = inputs
    g.outputs = [produced[-1]] + [t for t in extra if t != produced[-1]]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays = [rng.standard_normal(lengths[i]).astype(np.float32) for i in range(n_inputs)]
    return b.build(), arrays


@settings(max_examples=EXAMPLES * 5)
@given(vector_graphs())
def test_greedy_head_and_outputs_match_tflm_on_random_graphs(oracle, case):
    model, inputs = case
    # The report's "head" line is the greedy planner's maximum size.
    compare_with_tflm(oracle, model, inputs, context="random graph")


@settings(max_examples=EXAMPLES * 5)
@given(vector_graphs())
def test_minimum_arena_matches_tflm_on_random_graphs(oracle, case):
    model, inputs = case
    # The oracle runs TFLM with its RecordingMicroAllocator (which lives in the arena).
    ours = MicroInterpreter(model, arena_size=1 << 20, target="host64", recording=True,
                            error_reporter=lambda m: None)
    ours.allocate_tensors()
    predicted = ours.min_arena_bytes()
    assert oracle.fits(model, predicted, inputs), f"TFLM fails at our minimum {predicted}"
    assert not oracle.fits(model, predicted - 1, inputs), f"TFLM fits below our minimum {predicted}"


@settings(max_examples=EXAMPLES * 5)
@given(vector_graphs())
def test_linear_planner_intermediates_match_tflm_preserve_all(oracle, case):
    model, inputs = case
    ours = MicroInterpreter(model, arena_size=1 << 20, target="host64", planner="linear",
                            error_reporter=lambda m: None)
    ours.allocate_tensors()
    for i, x in enumerate(inputs):
        ours.set_input(x, i)
    ours.invoke()
    n_tensors = len(ours.get_tensor_details())
    theirs = oracle.run(model, inputs, preserve=True, tensors=range(n_tensors))
    assert theirs.ok, theirs.error
    for t in range(n_tensors):
        ref = theirs.tensors.get(t)
        assert ref is not None, f"TFLM gave no tensor {t}"
        assert_bit_exact([np.array(ours.tensor(t))], [np.asarray(ref["tensor_data"])], f"tensor {t}")
