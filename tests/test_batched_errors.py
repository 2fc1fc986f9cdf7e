"""Odd models and hosts through batched evaluation: clear errors from the micro_runtime
family (found by benchmarks/fuzz_models.py's eval surface), or a correct fallback."""
from __future__ import annotations

import numpy as np
import pytest

from micro_runtime import InputError, KernelError, MicroInterpreter, ModelError
from micro_runtime.batched import Evaluator
from micro_runtime.tools.model_writer import ModelBuilder
from tests.test_batched import per_sample


def _relu_model(input_data=None, output_data=None) -> bytes:
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "FLOAT32", data=input_data)
    y = g.add_tensor("y", (1, 4), "FLOAT32", data=output_data)
    g.add_operator("RELU", [x], [y])
    g.inputs, g.outputs = [x], [y]
    return b.build()


def test_a_constant_model_input_is_refused():
    model = _relu_model(input_data=np.arange(4, dtype=np.float32).reshape(1, 4) - 2)
    with pytest.raises(ModelError, match="model input 0 .* is a constant tensor"):
        Evaluator(model, target="host64")
    it = MicroInterpreter(model, arena_size=1 << 16, target="host64")
    it.allocate_tensors()
    with pytest.raises(InputError, match="constant tensor of the model"):
        it.set_input(np.zeros((1, 4), np.float32), 0)


def test_an_operator_writing_a_constant_is_refused_as_by_a_single_interpreter():
    """An operator whose output is a constant tensor of the model is refused before its
    prepare (TFLM would write into the model): the evaluator refuses it as a single
    interpreter does, with the same message."""
    model = _relu_model(output_data=np.ones((1, 4), np.float32))
    with pytest.raises(KernelError, match="is a constant tensor of the model") as batched:
        Evaluator(model, target="host64", batch=3)
    x = np.random.default_rng(0).standard_normal((7, 1, 4)).astype(np.float32)
    with pytest.raises(KernelError) as single:
        per_sample(model, [x])
    assert str(batched.value) == str(single.value)


def test_host_memory_limits_are_clear_errors():
    # an arena takes host memory only for the bytes used; its size has a documented range
    with pytest.raises(InputError, match=r"arena_size must be a number of bytes from 0 to 1099511627776"):
        MicroInterpreter(_relu_model(), arena_size=1 << 60, target="host64")
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 1 << 20, 1 << 12), "FLOAT32")       # 16 GiB per sample
    y = g.add_tensor("y", (1, 1 << 20, 1 << 12), "FLOAT32")
    g.add_operator("RELU", [x], [y])
    g.inputs, g.outputs = [x], [y]
    with pytest.raises(InputError, match="more host memory than evaluation allocates"):
        Evaluator(b.build(), target="host64")
