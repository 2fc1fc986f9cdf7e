"""Bounded fuzz run: mutated zoo models never crash, hang or escape the error family.
Long runs: python benchmarks/fuzz_models.py --runs 10000"""
import glob
import os

import numpy as np
import pytest

from tests.fuzzing import MUTATIONS, STRUCTURED_MUTATIONS, SURFACES, hostile_corpus, mutate, run_one
from tests.helpers import DATA

RUNS_PER_KIND = int(os.environ.get("MICRO_RUNTIME_FUZZ_RUNS", "40"))
MODELS = sorted(glob.glob(os.path.join(DATA, "*.tflite")))


@pytest.mark.parametrize("kind", MUTATIONS)
def test_mutated_models_fail_cleanly(kind):
    rng = np.random.default_rng(MUTATIONS.index(kind) + 100)
    outcomes = []
    for i in range(RUNS_PER_KIND):
        path = MODELS[i % len(MODELS)]
        raw = open(path, "rb").read()
        _, data = mutate(raw, rng, kind)
        # structure-aware mutations also go through the API and the command line
        surface = SURFACES[i % len(SURFACES)] if kind in STRUCTURED_MUTATIONS else "micro"
        out = run_one(data, kind, surface)
        outcomes.append(out)
        assert not out.result.startswith("other:"), f"{os.path.basename(path)} {kind}: {out.message}"
        assert out.seconds < 2.0, f"{os.path.basename(path)} {kind}: {out.seconds:.2f} s"
    # the mutations do produce errors (the test can fail if error handling regresses)
    if kind in ("truncate", "edit_offset", "zero_dim_huge", "types", "operator_index"):
        assert any(o.result != "ok" for o in outcomes)


def test_huge_dimension_is_rejected_before_allocation():
    from micro_runtime import ModelError, MicroInterpreter, ArenaTooSmallError
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 1 << 20, 1 << 10), "FLOAT32")
    y = g.add_tensor("y", (1, 1 << 20, 1 << 10), "FLOAT32")
    g.add_operator("ADD", [x, x], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    with pytest.raises(ArenaTooSmallError, match=r"needs 4294967296 bytes on its own; the arena is 1048576 bytes"):
        MicroInterpreter(b.build(), arena_size=1 << 20)
    # a negative (dynamic) dimension is a clear ModelError
    b2 = ModelBuilder()
    g2 = b2.subgraph()
    x = g2.add_tensor("x", (1, -1), "FLOAT32")
    y = g2.add_tensor("y", (1, -1), "FLOAT32")
    g2.add_operator("ADD", [x, x], [y], fused_activation_function=0)
    g2.inputs, g2.outputs = [x], [y]
    with pytest.raises(ModelError, match="negative"):
        MicroInterpreter(b2.build(), arena_size=1 << 16)


@pytest.mark.parametrize("name, raw", hostile_corpus(), ids=[n for n, _ in hostile_corpus()])
@pytest.mark.parametrize("surface", SURFACES)
def test_hostile_corpus_fails_cleanly(name, raw, surface):
    """The hand-made hostile shapes (a zero dimension beside huge ones, products that
    overflow) through MicroInterpreter, Interpreter.from_bytes and the command line:
    refused with a MicroRuntimeError (the CLI: exit status 1), never a numpy error."""
    out = run_one(raw, name, surface)
    assert not out.result.startswith("other:"), f"{name} via {surface}: {out.message}"
    if "representable" not in name:
        assert out.result in ("ModelError", "cli-error"), (name, surface, out)
        assert "2^63" in out.message


def test_zero_dimension_beside_huge_ones_is_a_model_error():
    """Issue 17: a tensor with a zero dimension and huge others has 0 bytes, so the byte
    check passed it and numpy's np.zeros raised a bare ValueError ('array is too big');
    the reader now refuses it with a ModelError naming the tensor, before any allocation."""
    from micro_runtime import ModelError, MicroInterpreter
    from micro_runtime.api import Interpreter
    raw = dict(hostile_corpus())["zero dim, huge others"]
    with pytest.raises(ModelError, match=r"tensor #0 'x': tensor shape \(0, 2147483647, 2147483647, 2\).*"
                                          r"zero dimension makes the tensor empty"):
        MicroInterpreter(raw, arena_size=1 << 20, error_reporter=lambda m: None)
    with pytest.raises(ModelError, match="2\\^63"):
        Interpreter.from_bytes(raw, error_reporter=lambda m: None)


def test_resize_to_an_unrepresentable_shape_is_an_input_error():
    """resize_input_tensor to dims whose product overflows: InputError, old shapes kept."""
    from micro_runtime import InputError, MicroInterpreter
    from tests.helpers import model_bytes
    it = MicroInterpreter(model_bytes("hello_world_float"), arena_size=1 << 16,
                          error_reporter=lambda m: None)
    it.allocate_tensors()
    before = it.input(0).shape
    with pytest.raises(InputError, match="2\\^63"):
        it.resize_input_tensor(0, (0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF))
    it.allocate_tensors()
    assert it.input(0).shape == before
