"""The tflite_micro-compatible Interpreter, MicroInterpreter behaviour, custom ops."""
import numpy as np
import pytest

import kernels
from micro_runtime import (ArenaTooSmallError, InputError, Interpreter, InterpreterConfig,
                           InterpreterStateError, MicroInterpreter, OpResolver,
                           default_op_resolver)
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import model_bytes, model_path

pytestmark = pytest.mark.oracle


def tflm():
    import tflite_micro
    return tflite_micro.runtime


def test_details_dicts_match_tflite_micro():
    path = model_path("hello_world_int8")
    ours = Interpreter.from_file(path, arena_size=4096)
    theirs = tflm().Interpreter.from_file(path, arena_size=4096)
    for getter in ("get_input_details", "get_output_details"):
        a, b = getattr(ours, getter)(0), getattr(theirs, getter)(0)
        assert a.keys() == b.keys()
        assert a["dtype"] is b["dtype"]
        np.testing.assert_array_equal(a["shape"], b["shape"])
        assert a["shape"].dtype == b["shape"].dtype
        qa, qb = a["quantization_parameters"], b["quantization_parameters"]
        assert qa.keys() == qb.keys()
        for k in ("scales", "zero_points"):
            assert qa[k].dtype == qb[k].dtype and qa[k].tobytes() == qb[k].tobytes()
        assert qa["quantized_dimension"] == qb["quantized_dimension"]


def test_same_calls_same_results_as_tflite_micro():
    raw = model_bytes("hello_world_float")
    ours = Interpreter.from_bytes(raw)          # default arena: 10x the model size
    theirs = tflm().Interpreter.from_bytes(raw)
    for v in (-1.5, 0.0, 2.25):
        x = np.array([[v]], np.float32)
        ours.set_input(x, 0)
        theirs.set_input(x, 0)
        assert ours.invoke() == 0
        theirs.invoke()
        assert ours.get_output(0).tobytes() == theirs.get_output(0).tobytes()
    assert ours.reset() == 0


def test_get_tensor_in_preserve_mode_matches_tflite_micro():
    path = model_path("hello_world_int8")
    cfg_ours = InterpreterConfig.kPreserveAllTensors
    cfg_theirs = tflm().InterpreterConfig.kPreserveAllTensors
    ours = Interpreter.from_file(path, arena_size=20000, intrepreter_config=cfg_ours)
    theirs = tflm().Interpreter.from_file(path, arena_size=20000, intrepreter_config=cfg_theirs)
    x = np.array([[77]], np.int8)
    ours.set_input(x, 0)
    theirs.set_input(x, 0)
    ours.invoke()
    theirs.invoke()
    n = len(ours.micro_interpreter.model.main.tensors)
    for t in range(n):
        a, b = ours.GetTensor(t, 0), theirs.GetTensor(t, 0)
        assert a["dtype"] is b["dtype"]
        assert a["tensor_data"].tobytes() == b["tensor_data"].tobytes(), f"tensor {t}"
    with pytest.raises(InterpreterStateError):
        Interpreter.from_file(path, arena_size=8192).GetTensor(0, 0)


def test_set_input_refuses_wrong_dtype_and_shape():
    it = Interpreter.from_file(model_path("hello_world_int8"), arena_size=4096)
    with pytest.raises(InputError, match="expected dtype int8 but got float32"):
        it.set_input(np.zeros((1, 1), np.float32), 0)
    with pytest.raises(InputError, match=r"expected shape \(1, 1\) but got \(1, 2\)"):
        it.set_input(np.zeros((1, 2), np.int8), 0)
    with pytest.raises(InputError, match="out of range"):
        it.set_input(np.zeros((1, 1), np.int8), 3)
    with pytest.raises(ValueError):  # the family also is ValueError, as in tflite_micro
        it.set_input(None, 0)


def test_arena_too_small_by_one_byte():
    raw = model_bytes("hello_world_int8")
    Interpreter.from_bytes(raw, arena_size=1936)
    with pytest.raises(ArenaTooSmallError) as err:
        Interpreter.from_bytes(raw, arena_size=1935, error_reporter=lambda m: None)
    e = err.value
    assert e.missing > 0 and e.requested > e.available
    assert e.min_arena_bytes == 1936 and e.arena_bytes == 1935
    assert "needs at least 1936 bytes" in str(e)
    assert isinstance(e, RuntimeError)  # what tflite_micro raises


def test_bigger_arena_after_failure_works():
    raw = model_bytes("simple_add_model")
    with pytest.raises(ArenaTooSmallError) as err:
        MicroInterpreter(raw, arena_size=20000, target="host64",
                         error_reporter=lambda m: None).allocate_tensors()
    it = MicroInterpreter(raw, arena_size=err.value.min_arena_bytes, target="host64")
    it.allocate_tensors()
    it.invoke()


def test_inputs_and_outputs_are_views_into_the_arena():
    it = MicroInterpreter(model_path("simple_add_model"), arena_size=1 << 17, target="host64")
    it.allocate_tensors()
    for k, array in ((0, it.input(0)), (0, it.output(0))):
        address = it.subgraphs[0].tensors[it.model.main.inputs[k] if array is it.input(0)
                                          else it.model.main.outputs[k]].address
        assert np.shares_memory(array, it.arena.memory_of(address))
    it.input(0)[...] = 3
    it.input(1)[...] = 4
    it.invoke()
    first = it.output(0).copy()
    it.input(1)[...] = -100
    it.invoke()
    assert not np.array_equal(first, it.output(0))


def test_invoke_before_allocate_allocates_and_after_failure_refuses():
    it = MicroInterpreter(model_path("hello_world_int8"), arena_size=4096)
    it.invoke()                                  # TFLM's Invoke() allocates first
    assert it.output(0).shape == (1, 1)
    bad = MicroInterpreter(model_path("hello_world_int8"), arena_size=1000, error_reporter=lambda m: None)
    with pytest.raises(ArenaTooSmallError):
        bad.allocate_tensors()
    with pytest.raises(InterpreterStateError, match="failed"):
        bad.invoke()


def test_error_reporter_receives_tflm_style_message():
    seen = []
    with pytest.raises(ArenaTooSmallError):
        MicroInterpreter(model_path("hello_world_int8"), arena_size=1000, target="host64",
                         error_reporter=seen.append).allocate_tensors()
    assert seen and "Requested:" in seen[0] and "missing:" in seen[0]


class TimesTwo(kernels.Kernel):
    """A custom op written in Python: y = x * factor, factor from custom options."""

    custom_name = "TimesTwo"

    def __init__(self):
        self.calls = []

    def init(self, ctx, node):
        self.calls.append("init")
        ctx.allocate_persistent(12)
        return {"factor": node.custom_options[0]}

    def prepare(self, ctx, node):
        self.calls.append("prepare")
        x, y = ctx.input(node, 0), ctx.output(node, 0)
        if x.shape != y.shape:
            raise ctx.error("shapes differ")
        node.user_data["scratch"] = ctx.request_scratch(64)
        ctx.release(x, y)

    def invoke(self, ctx, node):
        self.calls.append("invoke")
        scratch = ctx.scratch(node.user_data["scratch"])
        assert scratch.size == 64
        np.multiply(node.input_arrays[0], node.user_data["factor"], out=node.output_arrays[0])


def test_custom_python_op_is_first_class():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (3,), "FLOAT32")
    y = g.add_tensor("y", (3,), "FLOAT32")
    g.add_operator("TimesTwo", [x], [y], custom_options=bytes([2]))
    g.inputs, g.outputs = [x], [y]
    kernel = TimesTwo()
    resolver = default_op_resolver().add(kernel)
    it = MicroInterpreter(b.build(), resolver, arena_size=4096, recording=True)
    it.allocate_tensors()
    it.set_input(np.array([1, 2, 3], np.float32))
    it.invoke()
    assert it.output(0).tolist() == [2, 4, 6]
    assert kernel.calls == ["init", "prepare", "invoke"]
    assert it.allocator.recorded["persistent_buffer_data"].requested_bytes >= 12
    assert any(p.kind == "scratch" and p.bytes == 64 for p in it.allocator.plan)
    # also through the drop-in API
    api = Interpreter.from_bytes(b.build(), [TimesTwo()], arena_size=4096)
    api.set_input(np.array([5, 6, 7], np.float32), 0)
    api.invoke()
    assert api.get_output(0).tolist() == [10, 12, 14]


def test_registerer_names_are_refused_with_an_explanation():
    with pytest.raises(InputError, match="Python kernel"):
        Interpreter.from_bytes(model_bytes("hello_world_int8"), ["SignalOpsRegisterer"])


def test_a_wrong_plan_corrupts_results(monkeypatch):
    """Tensors really live at their planned offsets: a planner that overlaps live buffers
    changes the outputs, so the emulation exposes planner bugs."""
    from arena.planners.greedy import GreedyMemoryPlanner
    b = ModelBuilder()
    g = b.subgraph()
    q = (0.05, 0)
    x = g.add_tensor("x", (1, 4), "INT8", quantization=q)
    w = g.add_tensor("w", (4, 4), "INT8", data=np.eye(4, dtype=np.int8) * 3, quantization=(0.1, 0))
    h = g.add_tensor("h", (1, 4), "INT8", quantization=q)
    y = g.add_tensor("y", (1, 4), "INT8", quantization=q)
    g.add_operator("FULLY_CONNECTED", [x, w, -1], [h], fused_activation_function=0)
    g.add_operator("ADD", [h, x], [y], fused_activation_function=0)   # skip connection
    g.inputs, g.outputs = [x], [y]
    raw = b.build()
    inp = np.array([[10, 20, 30, 40]], np.int8)
    good = MicroInterpreter(raw, arena_size=4096, target="host64")
    good.allocate_tensors()
    good.set_input(inp)
    good.invoke()
    monkeypatch.setattr(GreedyMemoryPlanner, "_plan", lambda self: [0] * len(self.buffers))
    bad = MicroInterpreter(raw, arena_size=4096, target="host64")
    bad.allocate_tensors()
    bad.set_input(inp)
    bad.invoke()
    assert bad.output(0).tobytes() != good.output(0).tobytes()
