"""The error reporter: TFLM-style messages go to it, exceptions still reach the caller."""
import numpy as np
import pytest

from kernels.base import Kernel
from micro_runtime import (ArenaTooSmallError, Interpreter, InterpreterStateError, KernelError,
                           MicroInterpreter, OpResolver, UnsupportedOpError, default_op_resolver)
from micro_runtime.delegates.delegate import Delegate, DelegateError
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import model_path


class Custom(Kernel):
    """A custom op that copies its input, or fails where it is told to."""

    custom_name = "MY_OP"

    def __init__(self, fail_in=None, exc=None):
        self.fail_in = fail_in
        self.exc = exc

    def _maybe_fail(self, ctx, stage):
        if self.fail_in == stage:
            if self.exc is not None:
                raise self.exc
            raise ctx.error(f"cannot {stage} this")

    def prepare(self, ctx, node):
        self._maybe_fail(ctx, "prepare")

    def invoke(self, ctx, node):
        self._maybe_fail(ctx, "invoke")
        node.output_arrays[0][...] = node.input_arrays[0]


def custom_model() -> bytes:
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "FLOAT32")
    y = g.add_tensor("y", (1, 4), "FLOAT32")
    g.add_operator("MY_OP", [x], [y], custom_options=b"")
    g.inputs, g.outputs = [x], [y]
    return b.build()


def interpreter(kernel, messages):
    resolver = default_op_resolver().add(kernel)
    return MicroInterpreter(custom_model(), resolver, 1 << 14, error_reporter=messages.append)


def test_prepare_failure_reports_kernel_message_then_tflm_node_line():
    messages = []
    it = interpreter(Custom(fail_in="prepare"), messages)
    with pytest.raises(KernelError, match="cannot prepare this"):
        it.allocate_tensors()
    assert messages == ["MY_OP (operator #0): cannot prepare this",
                        # TFLM's MicroInterpreterGraph prints the index with "%df"
                        "Node MY_OP (number 0f) failed to prepare with status 1"]


def test_python_exception_in_prepare_is_converted_and_reported():
    messages = []
    it = interpreter(Custom(fail_in="prepare", exc=ValueError("bad shape")), messages)
    with pytest.raises(KernelError, match="ValueError: bad shape"):
        it.allocate_tensors()
    assert len(messages) == 2 and "ValueError: bad shape" in messages[0]
    assert messages[1] == "Node MY_OP (number 0f) failed to prepare with status 1"


def test_invoke_failure_is_reported_once_and_raised():
    messages = []
    it = interpreter(Custom(fail_in="invoke"), messages)
    it.allocate_tensors()
    assert messages == []
    with pytest.raises(KernelError, match="cannot invoke this"):
        it.invoke()
    assert messages == ["MY_OP (operator #0): cannot invoke this",
                        "Node MY_OP (number 0) failed to invoke with status 1"]


def test_arena_shortfall_goes_to_the_reporter_and_invoke_after_it_too():
    messages = []
    it = MicroInterpreter(model_path("hello_world_int8"), arena_size=700, target="host64",
                          error_reporter=messages.append)
    with pytest.raises(ArenaTooSmallError) as info:
        it.allocate_tensors()
    assert info.value.min_arena_bytes is not None
    assert len(messages) == 1 and messages[0].startswith("Failed to allocate")
    assert "Requested:" in messages[0] and "missing:" in messages[0]
    with pytest.raises(InterpreterStateError):
        it.invoke()
    assert messages[-1] == "Invoke() called after initialization failed"


def test_unsupported_ops_are_reported_in_tflm_words():
    messages = []
    with pytest.raises(UnsupportedOpError):
        MicroInterpreter(model_path("hello_world_int8"), OpResolver(), 1 << 14,
                         error_reporter=messages.append)
    assert messages[0] == "Didn't find op for builtin opcode 'FULLY_CONNECTED'"
    assert "FULLY_CONNECTED" in messages[-1]


def test_delegate_failure_is_reported_and_the_interpreter_keeps_working():
    class Broken(Delegate):
        name = "broken"

        def prepare(self, context):
            context.replace_nodes(Custom(fail_in="prepare"), [0])

    class Refuses(Delegate):
        name = "refuses"

        def prepare(self, context):
            raise RuntimeError("no accelerator")

    messages = []
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14,
                          error_reporter=messages.append)
    it.allocate_tensors()
    with pytest.raises(DelegateError):
        it.modify_graph_with_delegate(Broken())
    assert "cannot prepare this" in messages[0]
    assert messages[1].startswith("Node DELEGATE_broken_0 (number 0f) failed to prepare")
    assert "the original graph is restored" in messages[2]
    assert messages[3] == "Restored original execution plan after delegate application failure."
    messages.clear()
    with pytest.raises(DelegateError, match="no accelerator"):
        it.modify_graph_with_delegate(Refuses())
    assert len(messages) == 1 and "no accelerator" in messages[0]
    it.set_input(np.array([[0.5]], np.float32))
    it.invoke()


def test_default_reporter_writes_to_stderr(capsys):
    it = MicroInterpreter(custom_model(), default_op_resolver().add(Custom(fail_in="prepare")), 1 << 14)
    with pytest.raises(KernelError):
        it.allocate_tensors()
    err = capsys.readouterr().err.splitlines()
    assert err == ["MY_OP (operator #0): cannot prepare this",
                   "Node MY_OP (number 0f) failed to prepare with status 1"]


def test_a_broken_reporter_does_not_hide_the_error():
    def broken(message):
        raise OSError("log disk full")

    it = MicroInterpreter(custom_model(), default_op_resolver().add(Custom(fail_in="invoke")), 1 << 14,
                          error_reporter=broken)
    it.allocate_tensors()
    with pytest.raises(KernelError, match="cannot invoke this"):
        it.invoke()
    with pytest.raises(ArenaTooSmallError):
        MicroInterpreter(model_path("hello_world_int8"), arena_size=700,
                         error_reporter=broken).allocate_tensors()


def test_api_interpreter_takes_an_error_reporter():
    messages = []
    with pytest.raises(ArenaTooSmallError):
        Interpreter.from_file(model_path("hello_world_int8"), arena_size=700,
                              error_reporter=messages.append)
    assert messages and messages[0].startswith("Failed to allocate")
    ok = []
    it = Interpreter.from_file(model_path("hello_world_int8"), arena_size=1 << 14, error_reporter=ok.append)
    it.set_input(np.zeros((1, 1), np.int8), 0)
    it.invoke()
    assert ok == []


def test_a_failed_resize_is_reported():
    messages = []
    it = Interpreter.from_file(model_path("ad01_int8"), arena_size=1 << 16, error_reporter=messages.append)
    with pytest.raises(ValueError):
        it.resize_input_tensor(0, (1, 641))
    assert len(messages) == 1 and "not a multiple of the weights' depth 640" in messages[0]
