"""Misuse of the interpreter gets a clear error of the documented family."""
import threading

import numpy as np
import pytest

import kernels
from micro_runtime import (ArenaTooSmallError, InputError, InterpreterStateError, MicroInterpreter,
                           MicroRuntimeError, TensorIndexError, default_op_resolver)
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import model_path


def test_family():
    for cls in (ArenaTooSmallError, InputError, InterpreterStateError):
        assert issubclass(cls, MicroRuntimeError) and issubclass(MicroRuntimeError, Exception)


def test_wrong_dtype_is_not_cast():
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    it.allocate_tensors()
    with pytest.raises(InputError, match=r"expected dtype float32 but got float64"):
        it.set_input(np.zeros((1, 1), np.float64))
    with pytest.raises(InputError, match=r"expected a numpy array"):
        it.set_input([[0.5]])


def test_wrong_shape_names_expected_and_given():
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    it.allocate_tensors()
    with pytest.raises(InputError, match=r"expected shape \(1, 1\) but got \(2,\)"):
        it.set_input(np.zeros((2,), np.float32))


def test_index_out_of_range_is_an_index_error_of_our_family():
    messages = []
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14,
                          error_reporter=messages.append)
    it.allocate_tensors()
    with pytest.raises(TensorIndexError, match="Input index 1 out of range"):
        it.input(1)
    with pytest.raises(IndexError, match=r"Output index 5 out of range \(length is 1\)"):
        it.output(5)
    with pytest.raises(InputError, match="Input index 3 out of range"):   # still an InputError
        it.set_input(np.zeros((1, 1), np.float32), 3)
    with pytest.raises(TensorIndexError, match="tensor index 99 out of range"):
        it.tensor(99)
    # TFLM logs its line for input(i) / output(i) as MicroPrintf does
    assert messages == ["Input index 1 out of range (length is 1)",
                        "Output index 5 out of range (length is 1)",
                        "Input index 3 out of range (length is 1)"]
    assert issubclass(TensorIndexError, MicroRuntimeError) and issubclass(TensorIndexError, IndexError)


def test_invoke_allocates_when_needed_as_tflm_does():
    x = np.array([[0.75]], np.float32)
    explicit = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    explicit.allocate_tensors()
    explicit.set_input(x)
    explicit.invoke()
    implicit = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    with pytest.raises(InterpreterStateError, match=r"allocate_tensors\(\) \(or invoke\(\)"):
        implicit.input(0)          # tensors do not exist before allocation
    implicit.invoke()              # allocates, then runs (on the zeroed input)
    implicit.set_input(x)
    implicit.invoke()
    assert implicit.output(0).tobytes() == explicit.output(0).tobytes()
    assert implicit.arena_used_bytes() == explicit.arena_used_bytes()
    assert implicit.min_arena_bytes() == explicit.min_arena_bytes()


@pytest.mark.parametrize("arena_size", [700, 1200])
def test_invoke_on_a_too_small_arena_raises_what_allocate_tensors_raises(arena_size):
    def attempt(first_call):
        messages = []
        it = MicroInterpreter(model_path("hello_world_int8"), arena_size=arena_size, target="host64",
                              recording=True, error_reporter=messages.append)
        with pytest.raises(ArenaTooSmallError) as err:
            getattr(it, first_call)()
        e = err.value
        return (type(e), str(e), e.requested, e.available, e.missing, e.min_arena_bytes), messages, it
    by_allocate, log_allocate, _ = attempt("allocate_tensors")
    by_invoke, log_invoke, it = attempt("invoke")
    assert by_invoke == by_allocate and log_invoke == log_allocate
    assert by_invoke[-1] == 1936   # the size that works, as for allocate_tensors()
    # after the failure both calls refuse the same way
    for call in (it.allocate_tensors, it.invoke):
        with pytest.raises(InterpreterStateError, match="failed before"):
            call()


def test_bad_arena_size_argument():
    with pytest.raises(InputError, match="arena_size"):
        MicroInterpreter(model_path("hello_world_float"), arena_size=-5)
    with pytest.raises(InputError, match="arena_size"):
        MicroInterpreter(model_path("hello_world_float"), arena_size="big")


@pytest.mark.parametrize("argument, value", [("recording", "yes"), ("recording", 1), ("npu_stub", "no"),
                                             ("num_resource_variables", 1.5),
                                             ("num_resource_variables", "2"),
                                             ("num_resource_variables", -1),
                                             ("num_resource_variables", 1 << 31),
                                             ("num_resource_variables", True)])
def test_other_arguments_are_checked_not_cast(argument, value):
    with pytest.raises(InputError, match=argument):
        MicroInterpreter(model_path("hello_world_float"), **{argument: value})


def test_unknown_target():
    with pytest.raises(InputError, match="unknown target 'stm32'"):
        MicroInterpreter(model_path("hello_world_float"), target="stm32")


def test_retry_with_bigger_arena_reports_missing_bytes():
    with pytest.raises(ArenaTooSmallError) as err:
        MicroInterpreter(model_path("hello_world_int8"), arena_size=1200, target="host64",
                         recording=True, error_reporter=lambda m: None).allocate_tensors()
    assert err.value.missing > 0
    assert f"missing: {err.value.missing}" in str(err.value)
    it = MicroInterpreter(model_path("hello_world_int8"), arena_size=err.value.min_arena_bytes,
                          target="host64", recording=True)
    it.allocate_tensors()
    it.invoke()


class Blocking(kernels.Kernel):
    custom_name = "Blocking"

    def __init__(self):
        self.entered = threading.Event()
        self.release = threading.Event()

    def invoke(self, ctx, node):
        self.entered.set()
        self.release.wait(10)
        node.output_arrays[0][...] = node.input_arrays[0]


def test_second_thread_is_refused_while_invoke_runs():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    y = g.add_tensor("y", (4,), "FLOAT32")
    g.add_operator("Blocking", [x], [y], custom_options=b"")
    g.inputs, g.outputs = [x], [y]
    kernel = Blocking()
    it = MicroInterpreter(b.build(), default_op_resolver().add(kernel), arena_size=4096)
    it.allocate_tensors()
    worker = threading.Thread(target=it.invoke)
    worker.start()
    assert kernel.entered.wait(10)
    try:
        with pytest.raises(InterpreterStateError, match="another thread"):
            it.invoke()
        with pytest.raises(InterpreterStateError, match="another thread"):
            it.set_input(np.zeros(4, np.float32))
    finally:
        kernel.release.set()
        worker.join(10)
    it.invoke()  # usable again once the first call returned
