"""Delegates: partitioning, boundary tensors, arena effect, failure recovery."""
import numpy as np
import pytest

from kernels.internal.matmul import float32_sequential_matmul
from micro_runtime import MicroInterpreter
from micro_runtime.delegates.delegate import Delegate, DelegateError, partition
from tests.helpers import model_path


class FloatFCKernel:
    """Runs a chain of float FULLY_CONNECTED ops the way the FC kernel computes them."""

    def __init__(self):
        self.prepared = 0

    def init(self, ctx, node):
        return None

    def prepare(self, ctx, node):
        self.prepared += 1

    def invoke(self, ctx, node):
        p = node.params
        x = node.input_arrays[0]
        for op in p.operators:
            w = ctx.model.main.tensors[op.inputs[1]].data
            b = ctx.model.main.tensors[op.inputs[2]].data if op.inputs[2] >= 0 else None
            y = float32_sequential_matmul(x.reshape(1, -1), w.T)
            if b is not None:
                y = y + b
            if op.params.fused_activation_function == 1:
                y = np.maximum(y, np.float32(0))
            x = y.astype(np.float32)
        node.output_arrays[0][...] = x.reshape(node.output_arrays[0].shape)


class ClaimFC(Delegate):
    name = "fc"

    def __init__(self, nodes, kernel=None, fail_in_prepare=False):
        self.nodes = nodes
        self.kernel = kernel or FloatFCKernel()
        self.fail_in_prepare = fail_in_prepare
        self.handles = []

    def prepare(self, context):
        if self.fail_in_prepare:
            raise RuntimeError("accelerator not available")
        context.replace_nodes(self.kernel, self.nodes)

    def copy_to_buffer_handle(self, tensor, array):
        self.handles.append(("to", tensor))

    def copy_from_buffer_handle(self, tensor, array):
        self.handles.append(("from", tensor))


def run(it, value):
    it.set_input(np.array([[value]], np.float32))
    it.invoke()
    return it.output(0).copy()


def fresh():
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14, target="host64",
                          recording=True)
    return it


def test_non_contiguous_claim_gives_one_subset_per_run():
    it = fresh()
    sg = it.model.main
    parts = partition(sg, {0, 2})
    assert parts == [(True, [0]), (False, [1]), (True, [2])]
    it.modify_graph_with_delegate(ClaimFC([0, 2]))
    ops = it.model.main.operators
    assert [op.name for op in ops] == ["DELEGATE_fc_0", "FULLY_CONNECTED", "DELEGATE_fc_1"]
    d0, d2 = ops[0].params, ops[2].params
    assert d0.nodes_to_replace == [0] and d2.nodes_to_replace == [2]
    # boundary tensors: the original node's non-internal inputs and its output
    assert d0.output_tensors == list(sg.operators[0].outputs)
    assert set(d0.input_tensors) == {t for t in sg.operators[0].inputs if t >= 0}
    assert d0.private_tensors == [] and d2.private_tensors == []


def test_delegated_outputs_equal_kernel_outputs_and_head_shrinks():
    plain = fresh()
    plain.allocate_tensors()
    expected = [run(plain, v) for v in (-1.0, 0.3, 2.0)]
    head_before = plain.arena.head_bytes
    it = fresh()
    d = ClaimFC([0, 1])
    it.modify_graph_with_delegate(d)
    ops = it.model.main.operators
    assert [op.name for op in ops] == ["DELEGATE_fc_0", "FULLY_CONNECTED"]
    assert len(ops[0].params.private_tensors) == 1       # layer-1 activations stay inside
    got = [run(it, v) for v in (-1.0, 0.3, 2.0)]
    for a, b in zip(got, expected):
        assert a.tobytes() == b.tobytes()
    assert it.arena.head_bytes < head_before
    assert d.kernel.prepared == 1
    assert ("to", ops[0].inputs[0]) in d.handles and ("from", ops[0].outputs[0]) in d.handles
    # the allocation audit shows the new graph: 2 nodes instead of 3
    assert it.allocator.recorded["node_and_registration"].count == 2


def test_failing_delegate_leaves_the_interpreter_working():
    it = fresh()
    it.allocate_tensors()
    before = run(it, 0.5)
    with pytest.raises(DelegateError, match="accelerator not available"):
        it.modify_graph_with_delegate(ClaimFC([0], fail_in_prepare=True))
    assert run(it, 0.5).tobytes() == before.tobytes()

    class Broken(FloatFCKernel):
        def prepare(self, ctx, node):
            raise ctx.error("unsupported shape")
    with pytest.raises(DelegateError, match="unsupported shape"):
        it.modify_graph_with_delegate(ClaimFC([1], kernel=Broken()))
    assert [op.name for op in it.model.main.operators] == ["FULLY_CONNECTED"] * 3
    assert run(it, 0.5).tobytes() == before.tobytes()
