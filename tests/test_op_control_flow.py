"""IF and WHILE against TFLM: multi-subgraph models planned in one arena plan (subgraph
lifetimes nested in the calling op's scope), outputs over several invokes, the allocation
report and the minimum arena; and the bad models refused with the op named."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime.errors import KernelError, MicroRuntimeError, ModelError
from micro_runtime.tools.model_writer import ModelBuilder
from tests.control_flow_helpers import (compare_runs, counter_input, if_model, make_interpreter,
                                        while_model)
from tests.strategies import shapes

pytestmark = pytest.mark.oracle


def _values(rng, shape, dtype):
    if dtype == "FLOAT32":
        return rng.uniform(-4, 4, shape).astype(np.float32)
    return rng.integers(-1000, 1000, shape).astype(np.int32)


# ------------------------------------------------------------------------ IF
@given(shape=shapes(1, 4, 1, 6), dtype=st.sampled_from(["FLOAT32", "INT32"]),
       conds=st.lists(st.booleans(), min_size=1, max_size=4),
       cond_shape=st.sampled_from([(), (1,)]), pre=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_if_add_or_mul(oracle, shape, dtype, conds, cond_shape, pre, seed):
    """IF choosing an ADD (then) or a MUL (else) subgraph, optionally between two main-graph
    ops, over several invokes with the condition changing."""
    model = if_model(shape, dtype, cond_shape=cond_shape, pre_op="ADD" if pre else None)
    rng = np.random.default_rng(seed)
    runs = [[np.full(cond_shape, c), _values(rng, shape, dtype), _values(rng, shape, dtype)]
            for c in conds]
    compare_runs(oracle, model, runs, min_arena="edge", context=f"IF {shape} {dtype} {conds}")


def test_if_branches_of_different_depth_min_arena(oracle):
    """The else-branch has two ops (an intermediate tensor): every subgraph is planned
    together, and the minimum arena is TFLM's."""
    model = if_model((4, 5), "FLOAT32", else_extra="ADD", pre_op="MUL")
    rng = np.random.default_rng(1)
    runs = [[np.array(c), _values(rng, (4, 5), "FLOAT32"), _values(rng, (4, 5), "FLOAT32")]
            for c in (False, True, False)]
    compare_runs(oracle, model, runs, min_arena="exact")


def test_if_same_subgraph_twice_and_unused_subgraph(oracle):
    """Both branches are subgraph 1 (marked twice by the planner), and subgraph 2 is never
    called: its tensors get a buffer with no lifetime, as in TFLM."""
    model = if_model((3,), "FLOAT32", then_index=1, else_index=1)
    rng = np.random.default_rng(2)
    runs = [[np.array(c), _values(rng, (3,), "FLOAT32"), _values(rng, (3,), "FLOAT32")] for c in (True, False)]
    compare_runs(oracle, model, runs, min_arena="exact")


def test_if_with_reset(oracle):
    model = if_model((2, 2), "INT32")
    rng = np.random.default_rng(3)
    runs = [[np.array(c), _values(rng, (2, 2), "INT32"), _values(rng, (2, 2), "INT32")] for c in (True, False, True)]
    compare_runs(oracle, model, runs, reset_between=True, min_arena="none")


def test_two_ifs_share_their_subgraphs(oracle):
    """Two IF ops call the same two subgraphs: the planner marks them twice, so their
    tensors live from the first call to the second (TFLM's lifetimes)."""
    b = ModelBuilder()
    m = b.subgraph("main")
    c1 = m.add_tensor("c1", (), "BOOL")
    c2 = m.add_tensor("c2", (1,), "BOOL")
    x = m.add_tensor("x", (8,), "FLOAT32")
    y = m.add_tensor("y", (8,), "FLOAT32")
    o1 = m.add_tensor("o1", (8,), "FLOAT32")
    o2 = m.add_tensor("o2", (8,), "FLOAT32")
    o3 = m.add_tensor("o3", (8,), "FLOAT32")
    m.add_operator("IF", [c1, x, y], [o1], then_subgraph_index=1, else_subgraph_index=2)
    m.add_operator("MUL", [o1, x], [o2])
    m.add_operator("IF", [c2, o2, y], [o3], then_subgraph_index=2, else_subgraph_index=1)
    m.inputs, m.outputs = [c1, c2, x, y], [o3, o1]
    for name, op in (("add", "ADD"), ("sub", "SUB")):
        g = b.subgraph(name)
        a = g.add_tensor("a", (8,), "FLOAT32")
        bb = g.add_tensor("b", (8,), "FLOAT32")
        r = g.add_tensor("r", (8,), "FLOAT32")
        g.add_operator(op, [a, bb], [r])
        g.inputs, g.outputs = [a, bb], [r]
    rng = np.random.default_rng(6)
    runs = [[np.array(c1), np.array([c2]), _values(rng, (8,), "FLOAT32"), _values(rng, (8,), "FLOAT32")]
            for c1, c2 in ((True, True), (True, False), (False, True), (False, False))]
    compare_runs(oracle, b.build(), runs, min_arena="exact")


def _sum_if_model(shape=(2, 3)):
    """Scratch buffers on both levels: main does SUM (axis 0, keep_dims) + ADD before the
    IF; the then-branch does SUM (axis 1, keep_dims) + ADD (broadcast), the else-branch a MUL.
    SUM asks for scratch buffers, which TFLM plans per subgraph and operator."""
    b = ModelBuilder()
    m = b.subgraph("main")
    c = m.add_tensor("cond", (), "BOOL")
    x = m.add_tensor("x", shape, "FLOAT32")
    y = m.add_tensor("y", shape, "FLOAT32")
    ax = m.add_tensor("ax", (1,), "INT32", data=np.array([0], np.int32))
    s0 = m.add_tensor("s0", (1, shape[1]), "FLOAT32")
    x2 = m.add_tensor("x2", shape, "FLOAT32")
    o = m.add_tensor("o", shape, "FLOAT32")
    m.add_operator("SUM", [x, ax], [s0], keep_dims=True)
    m.add_operator("ADD", [s0, x], [x2])
    m.add_operator("IF", [c, x2, y], [o], then_subgraph_index=1, else_subgraph_index=2)
    m.inputs, m.outputs = [c, x, y], [o]
    g = b.subgraph("then")
    a = g.add_tensor("a", shape, "FLOAT32")
    bb = g.add_tensor("b", shape, "FLOAT32")
    axis = g.add_tensor("axis", (1,), "INT32", data=np.array([1], np.int32))
    s = g.add_tensor("s", (shape[0], 1), "FLOAT32")
    r = g.add_tensor("r", shape, "FLOAT32")
    g.add_operator("SUM", [a, axis], [s], keep_dims=True)
    g.add_operator("ADD", [s, bb], [r])
    g.inputs, g.outputs = [a, bb], [r]
    g = b.subgraph("else")
    a = g.add_tensor("a", shape, "FLOAT32")
    bb = g.add_tensor("b", shape, "FLOAT32")
    r = g.add_tensor("r", shape, "FLOAT32")
    g.add_operator("MUL", [a, bb], [r])
    g.inputs, g.outputs = [a, bb], [r]
    return b.build()


@pytest.mark.parametrize("shape", [(2, 3), (5, 4)])
def test_if_with_scratch_buffers_in_a_branch(oracle, shape):
    rng = np.random.default_rng(4)
    runs = [[np.array(c), _values(rng, shape, "FLOAT32"), _values(rng, shape, "FLOAT32")]
            for c in (True, False, True)]
    compare_runs(oracle, _sum_if_model(shape), runs, min_arena="exact")


def test_mcu32_runs_the_same():
    """The 32-bit target (no oracle): same results as host64, a smaller arena."""
    models = [(if_model((3,), "FLOAT32"), [np.array(False), np.arange(3, dtype=np.float32),
                                           np.full(3, 2, np.float32)]),
              (while_model(2, "INT32", "FLOAT32", inner_if=True),
               [np.array(3, np.int32), np.ones(2, np.float32), np.full(2, 0.5, np.float32), np.array(False)])]
    for model, inputs in models:
        results = {}
        for target in ("host64", "mcu32"):
            it = make_interpreter(model, target=target)
            it.allocate_tensors()
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
            results[target] = ([np.array(it.output(i)) for i in range(it.outputs_size)], it.min_arena_bytes())
        for a, b in zip(results["host64"][0], results["mcu32"][0]):
            np.testing.assert_array_equal(a, b)
        assert results["mcu32"][1] < results["host64"][1]


# --------------------------------------------------------------------- WHILE
@given(k=st.integers(1, 8), counter=st.sampled_from(["INT32", "FLOAT32"]),
       state=st.sampled_from(["FLOAT32", "INT32"]), body_op=st.sampled_from(["ADD", "MUL", "SUB"]),
       loops=st.lists(st.integers(0, 7), min_size=1, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_while_counting_loop(oracle, k, counter, state, body_op, loops, seed):
    """WHILE running its body n times (n from the input, 0 included) with an int32 or
    float32 counter and an accumulator state."""
    model = while_model(k, counter, state, body_op)
    rng = np.random.default_rng(seed)
    runs = [[counter_input(counter, n), _values(rng, (k,), state) / (4 if state == "FLOAT32" else 100),
             _values(rng, (k,), state) / (2 if state == "FLOAT32" else 200)] for n in loops]
    runs = [[r[0], r[1].astype(np.float32 if state == "FLOAT32" else np.int32),
             r[2].astype(np.float32 if state == "FLOAT32" else np.int32)] for r in runs]
    ours = compare_runs(oracle, model, runs, min_arena="edge", context=f"WHILE {counter} {state} {loops}")
    for (acc, n_out), n in zip(ours, loops):
        assert int(n_out) == 0


@given(loops=st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=1, max_size=3),
       k=st.integers(1, 6), seed=st.integers(0, 2**31 - 1))
def test_while_with_if_in_body(oracle, loops, k, seed):
    """Nested control flow: the WHILE body calls an IF (four levels of subgraphs in one
    plan)."""
    model = while_model(k, "INT32", "FLOAT32", inner_if=True)
    rng = np.random.default_rng(seed)
    runs = [[counter_input("INT32", n), rng.uniform(-1, 1, k).astype(np.float32),
             rng.uniform(-1.5, 1.5, k).astype(np.float32), np.array(c)] for n, c in loops]
    compare_runs(oracle, model, runs, min_arena="edge", context=f"WHILE+IF {loops}")


def test_while_min_arena_exact(oracle):
    model = while_model(16, "INT32", "FLOAT32", inner_if=True)
    runs = [[counter_input("INT32", 3), np.ones(16, np.float32), np.full(16, 0.5, np.float32), np.array(True)]]
    compare_runs(oracle, model, runs, min_arena="exact")


def test_while_result_is_the_loop():
    """Independent of TFLM: acc + n * x for an ADD body."""
    it = make_interpreter(while_model(3, "INT32", "INT32", "ADD"))
    it.allocate_tensors()
    it.set_input(np.array(5, np.int32), 0)
    it.set_input(np.array([1, 2, 3], np.int32), 1)
    it.set_input(np.array([10, 20, 30], np.int32), 2)
    it.invoke()
    assert it.output(0).tolist() == [51, 102, 153]
    assert int(it.output(1)) == 0


# ------------------------------------------------------------------- errors
def _allocate(model):
    it = make_interpreter(model)
    it.allocate_tensors()
    return it


def _expect(model, exc, *words):
    with pytest.raises(exc) as info:
        _allocate(model)
    for w in words:
        assert w in str(info.value), str(info.value)
    return info.value


def test_if_subgraph_index_out_of_range():
    err = _expect(if_model(then_index=5), KernelError, "IF", "then_subgraph_index 5")
    assert err.op_name == "IF"
    _expect(if_model(else_index=-1), KernelError, "IF", "else_subgraph_index -1")


def test_if_calling_its_own_subgraph():
    _expect(if_model(then_index=0), KernelError, "IF", "itself")


def test_if_condition_not_bool():
    b = ModelBuilder()
    m = b.subgraph()
    c = m.add_tensor("c", (), "INT32")
    x = m.add_tensor("x", (2,), "FLOAT32")
    o = m.add_tensor("o", (2,), "FLOAT32")
    m.add_operator("IF", [c, x], [o], then_subgraph_index=1, else_subgraph_index=1)
    m.inputs, m.outputs = [c, x], [o]
    g = b.subgraph()
    a = g.add_tensor("a", (2,), "FLOAT32")
    g.inputs, g.outputs = [a], [a]
    _expect(b.build(), KernelError, "IF", "BOOL")


def _if_with_branch(branch_inputs, branch_outputs, branch_dtype="FLOAT32", n_in=1):
    b = ModelBuilder()
    m = b.subgraph()
    c = m.add_tensor("c", (), "BOOL")
    xs = [m.add_tensor(f"x{i}", (2,), "FLOAT32") for i in range(n_in)]
    o = m.add_tensor("o", (2,), "FLOAT32")
    m.add_operator("IF", [c] + xs, [o], then_subgraph_index=1, else_subgraph_index=2)
    m.inputs, m.outputs = [c] + xs, [o]
    good = b.subgraph()
    a = good.add_tensor("a", (2,), "FLOAT32")
    good.inputs, good.outputs = [a], [a]
    bad = b.subgraph()
    ts = [bad.add_tensor(f"t{i}", (2,), branch_dtype) for i in range(max(branch_inputs, branch_outputs))]
    bad.inputs, bad.outputs = ts[:branch_inputs], ts[:branch_outputs]
    return b.build()


def test_if_then_branch_count_mismatch():
    b = ModelBuilder()
    m = b.subgraph()
    c = m.add_tensor("c", (), "BOOL")
    x = m.add_tensor("x", (2,), "FLOAT32")
    o = m.add_tensor("o", (2,), "FLOAT32")
    m.add_operator("IF", [c, x, x], [o], then_subgraph_index=1, else_subgraph_index=1)
    m.inputs, m.outputs = [c, x], [o]
    g = b.subgraph()
    a = g.add_tensor("a", (2,), "FLOAT32")
    g.inputs, g.outputs = [a], [a]
    _expect(b.build(), KernelError, "IF", "then-subgraph 1 takes 1")


def test_if_else_branch_mismatch_fails_when_taken(oracle):
    """TFLM checks only the then-branch in prepare; a bad else-branch fails the invoke that
    takes it (both in TFLM and here), with the op named."""
    for branch_in, branch_out, dtype, words in ((2, 1, "FLOAT32", "2 inputs of subgraph 2"),
                                               (1, 1, "INT32", "types differ")):
        model = _if_with_branch(branch_in, branch_out, dtype)
        it = _allocate(model)
        it.set_input(np.array(True), 0)
        it.invoke()
        it.set_input(np.array(False), 0)
        with pytest.raises(KernelError) as info:
            it.invoke()
        assert "IF" in str(info.value) and words in str(info.value), str(info.value)
        if dtype == "FLOAT32":
            r = oracle.run(model, runs=[[np.array(True), np.zeros(2, np.float32)],
                                        [np.array(False), np.zeros(2, np.float32)]])
            assert not r.ok and r.stage == "invoke"


def test_if_else_branch_without_outputs_copies_nothing(oracle):
    """An else-branch with no outputs leaves the op's output as it was (TFLM skips the
    copy)."""
    model = _if_with_branch(1, 0)
    runs = [[np.array(True), np.array([1, 2], np.float32)], [np.array(False), np.array([5, 6], np.float32)]]
    compare_runs(oracle, model, runs, min_arena="none")


def _while_with(cond_out_dtype="BOOL", cond_out_shape=(), n_body_out=3, body_index=2, n_outputs=3):
    b = ModelBuilder()
    m = b.subgraph()
    ins = [m.add_tensor(f"i{k}", (), "INT32") for k in range(3)]
    outs = [m.add_tensor(f"o{k}", (), "INT32") for k in range(n_outputs)]
    m.add_operator("WHILE", ins, outs, cond_subgraph_index=1, body_subgraph_index=body_index)
    m.inputs, m.outputs = ins, outs
    c = b.subgraph()
    cin = [c.add_tensor(f"i{k}", (), "INT32") for k in range(3)]
    f = c.add_tensor("f", cond_out_shape, cond_out_dtype)
    c.add_operator("CAST", [cin[0]], [f])
    c.inputs, c.outputs = cin, [f]
    g = b.subgraph()
    gin = [g.add_tensor(f"i{k}", (), "INT32") for k in range(3)]
    g.inputs, g.outputs = gin, gin[:n_body_out]
    return b.build()


def test_while_bad_models():
    _expect(_while_with(cond_out_dtype="INT32"), KernelError, "WHILE", "BOOL scalar")
    _expect(_while_with(cond_out_shape=(2,)), KernelError, "WHILE", "BOOL scalar")
    _expect(_while_with(n_body_out=2), KernelError, "WHILE", "body subgraph 2 gives 2")
    _expect(_while_with(n_outputs=2), KernelError, "WHILE", "3 inputs but 2 outputs")
    _expect(_while_with(body_index=7), KernelError, "WHILE", "body_subgraph_index 7")


def test_while_unbounded_loop_stops_at_the_limit():
    """A body that never decrements: TFLM would loop forever; we stop at the interpreter's
    max_loop_iterations with the op named (tests/test_hostile.py checks the bound on
    every surface)."""
    from micro_runtime import LimitError
    model = _while_with()
    it = _allocate(model)
    it.max_loop_iterations = 50
    it.set_input(np.array(1, np.int32), 0)
    with pytest.raises(LimitError) as info:
        it.invoke()
    assert "WHILE" in str(info.value) and "50 iterations" in str(info.value)
    it.set_input(np.array(0, np.int32), 0)   # a loop that does not run is fine
    it.invoke()


def test_control_flow_recursion_refused():
    """A WHILE whose body calls the WHILE's own subgraph through an IF: TFLM would
    recurse forever while planning."""
    b = ModelBuilder()
    m = b.subgraph()
    c = m.add_tensor("c", (), "BOOL")
    x = m.add_tensor("x", (2,), "FLOAT32")
    o = m.add_tensor("o", (2,), "FLOAT32")
    m.add_operator("IF", [c, c, x], [o], then_subgraph_index=1, else_subgraph_index=1)
    m.inputs, m.outputs = [c, x], [o]
    g = b.subgraph()
    gc = g.add_tensor("c", (), "BOOL")
    gx = g.add_tensor("x", (2,), "FLOAT32")
    go = g.add_tensor("o", (2,), "FLOAT32")
    g.add_operator("IF", [gc, gc, gx], [go], then_subgraph_index=0, else_subgraph_index=0)
    g.inputs, g.outputs = [gc, gx], [go]
    with pytest.raises(MicroRuntimeError) as info:
        _allocate(b.build())
    assert isinstance(info.value, (KernelError, ModelError))
    assert "recursive" in str(info.value)
