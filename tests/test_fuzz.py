"""Bounded fuzz run: mutated zoo models never crash, hang or escape the error family.
Long runs: python benchmarks/fuzz_models.py --runs 10000"""
import glob
import os

import numpy as np
import pytest

from tests.fuzzing import MUTATIONS, mutate, run_one
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
        out = run_one(data, kind)
        outcomes.append(out)
        assert not out.result.startswith("other:"), f"{os.path.basename(path)} {kind}: {out.message}"
        assert out.seconds < 2.0, f"{os.path.basename(path)} {kind}: {out.seconds:.2f} s"
    # the mutations do produce errors (the test can fail if error handling regresses)
    if kind in ("truncate", "edit_offset"):
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
