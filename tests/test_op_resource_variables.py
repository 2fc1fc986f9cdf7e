"""VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and CALL_ONCE against TFLM: variables
initialised by a CALL_ONCE subgraph and carried across invokes, reset(), buffers filled
with the int8 zero point, handles passed into a WHILE body; outputs, allocation report
(the table and the value buffers in the tail) and minimum arena."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError
from micro_runtime.tools.model_writer import ModelBuilder
from tests.control_flow_helpers import compare_runs, make_interpreter
from tests.strategies import shapes

pytestmark = pytest.mark.oracle

NUMPY = {"FLOAT32": np.float32, "INT32": np.int32, "INT8": np.int8, "INT16": np.int16}


def _random(rng, shape, dtype):
    if dtype == "FLOAT32":
        return rng.uniform(-10, 10, shape).astype(np.float32)
    info = np.iinfo(NUMPY[dtype])
    lo, hi = (-1000, 1000) if dtype == "INT32" else (info.min, info.max)
    return rng.integers(lo, hi, shape, endpoint=True).astype(NUMPY[dtype])


def accumulator_model(shape, dtype="FLOAT32", init=None, container="", init_handle_first=True):
    """main: CALL_ONCE(init); h = VAR_HANDLE('acc'); s = READ(h) + x; ASSIGN(h, s); out s.
    init subgraph: ASSIGN(VAR_HANDLE('acc'), constant ``init``)."""
    b = ModelBuilder()
    m = b.subgraph("main")
    x = m.add_tensor("x", shape, dtype)
    h = m.add_tensor("h", (), "RESOURCE")
    r = m.add_tensor("r", shape, dtype)
    s = m.add_tensor("s", shape, dtype)
    m.add_operator("CALL_ONCE", [], [], init_subgraph_index=1)
    m.add_operator("VAR_HANDLE", [], [h], container=container, shared_name="acc")
    m.add_operator("READ_VARIABLE", [h], [r])
    m.add_operator("ADD", [r, x], [s])
    m.add_operator("ASSIGN_VARIABLE", [h, s], [])
    m.inputs, m.outputs = [x], [s]
    g = b.subgraph("init")
    h2 = g.add_tensor("h", (), "RESOURCE")
    if init is None:        # the variable starts at 0 (an unwritten tensor is undefined)
        init = np.zeros(shape, NUMPY[dtype])
    c = g.add_tensor("c", shape, dtype, data=init)
    g.add_operator("VAR_HANDLE", [], [h2], container=container, shared_name="acc")
    g.add_operator("ASSIGN_VARIABLE", [h2, c], [])
    g.inputs, g.outputs = [], []
    return b.build()


@given(shape=shapes(1, 3, 1, 5), dtype=st.sampled_from(["FLOAT32", "INT32"]),
       invokes=st.integers(1, 4), reset=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_call_once_initialised_accumulator(oracle, shape, dtype, invokes, reset, seed):
    """The variable starts at the CALL_ONCE constant and accumulates the inputs; with
    reset() after each invoke it goes back to zero and CALL_ONCE does not run again (TFLM's
    CALL_ONCE has no reset)."""
    rng = np.random.default_rng(seed)
    init = _random(rng, shape, dtype)
    model = accumulator_model(shape, dtype, init)
    runs = [[_random(rng, shape, dtype)] for _ in range(invokes)]
    ours = compare_runs(oracle, model, runs, reset_between=reset, min_arena="edge",
                        context=f"accumulator {shape} {dtype} reset={reset}")
    expected = init + runs[0][0]
    np.testing.assert_array_equal(ours[0][0], expected)
    if invokes > 1 and reset:
        np.testing.assert_array_equal(ours[1][0], runs[1][0])   # variable reset to 0


def test_accumulator_min_arena_exact(oracle):
    shape = (3, 7)
    model = accumulator_model(shape, "FLOAT32", np.arange(21, dtype=np.float32).reshape(shape))
    runs = [[np.ones(shape, np.float32)], [np.full(shape, 2, np.float32)]]
    compare_runs(oracle, model, runs, min_arena="exact")


def delay_model(shape, dtype, quant=None):
    """A one-invoke delay: out = READ(h) (the previous input), then ASSIGN(h, x). No
    initialiser: the first invoke reads the buffer as ASSIGN_VARIABLE's prepare filled it
    (the value's int8 zero point, 0 without quantization)."""
    b = ModelBuilder()
    m = b.subgraph()
    x = m.add_tensor("x", shape, dtype, quantization=quant)
    h = m.add_tensor("h", (), "RESOURCE")
    r = m.add_tensor("r", shape, dtype, quantization=quant)
    m.add_operator("VAR_HANDLE", [], [h], shared_name="delay")
    m.add_operator("READ_VARIABLE", [h], [r])
    m.add_operator("ASSIGN_VARIABLE", [h, x], [])
    m.inputs, m.outputs = [x], [r]
    return b.build()


@given(shape=shapes(1, 3, 1, 6), dtype=st.sampled_from(["INT8", "INT16", "FLOAT32", "INT32"]),
       zero_point=st.integers(-128, 127), quantized=st.booleans(), reset=st.booleans(),
       seed=st.integers(0, 2**31 - 1))
def test_delay_and_zero_point_default(oracle, shape, dtype, zero_point, quantized, reset, seed):
    """The default value is the value tensor's zero point cast to int8 and written into
    every byte (so an int16 variable with zero point 3 starts at 0x0303), also after
    reset()."""
    quant = (0.5, zero_point if dtype in ("INT8", "INT16") else 0) if quantized else None
    model = delay_model(shape, dtype, quant)
    rng = np.random.default_rng(seed)
    runs = [[_random(rng, shape, dtype)] for _ in range(3)]
    ours = compare_runs(oracle, model, runs, reset_between=reset, min_arena="edge",
                        context=f"delay {shape} {dtype} {quant}")
    fill = (quant[1] & 0xFF) if quant else 0
    assert ours[0][0].tobytes() == bytes([fill]) * ours[0][0].nbytes
    if not reset:
        np.testing.assert_array_equal(ours[1][0], runs[0][0])


def two_variables_model():
    """Two variables ('a' float32 (4,), 'b' int32 (2,)), initialised by one CALL_ONCE
    subgraph; main swaps in new values and outputs the old ones; VAR_HANDLE 'a' appears
    twice in main (same id)."""
    b = ModelBuilder()
    m = b.subgraph("main")
    xa = m.add_tensor("xa", (4,), "FLOAT32")
    xb = m.add_tensor("xb", (2,), "INT32")
    ha = m.add_tensor("ha", (), "RESOURCE")
    ha2 = m.add_tensor("ha2", (), "RESOURCE")
    hb = m.add_tensor("hb", (), "RESOURCE")
    ra = m.add_tensor("ra", (4,), "FLOAT32")
    rb = m.add_tensor("rb", (2,), "INT32")
    m.add_operator("CALL_ONCE", [], [], init_subgraph_index=1)
    m.add_operator("VAR_HANDLE", [], [ha], shared_name="a")
    m.add_operator("VAR_HANDLE", [], [hb], shared_name="b")
    m.add_operator("READ_VARIABLE", [ha], [ra])
    m.add_operator("READ_VARIABLE", [hb], [rb])
    m.add_operator("VAR_HANDLE", [], [ha2], shared_name="a")
    m.add_operator("ASSIGN_VARIABLE", [ha2, xa], [])
    m.add_operator("ASSIGN_VARIABLE", [hb, xb], [])
    m.inputs, m.outputs = [xa, xb], [ra, rb]
    g = b.subgraph("init")
    gb = g.add_tensor("hb", (), "RESOURCE")
    ga = g.add_tensor("ha", (), "RESOURCE")
    ca = g.add_tensor("ca", (4,), "FLOAT32", data=np.array([1.5, -2, 3, 4], np.float32))
    cb = g.add_tensor("cb", (2,), "INT32", data=np.array([7, -9], np.int32))
    g.add_operator("VAR_HANDLE", [], [gb], shared_name="b")
    g.add_operator("VAR_HANDLE", [], [ga], shared_name="a")
    g.add_operator("ASSIGN_VARIABLE", [gb, cb], [])
    g.add_operator("ASSIGN_VARIABLE", [ga, ca], [])
    g.inputs, g.outputs = [], []
    return b.build()


def test_two_variables(oracle):
    rng = np.random.default_rng(5)
    runs = [[rng.standard_normal(4).astype(np.float32), rng.integers(-50, 50, 2).astype(np.int32)]
            for _ in range(3)]
    ours = compare_runs(oracle, two_variables_model(), runs, min_arena="exact")
    np.testing.assert_array_equal(ours[0][0], [1.5, -2, 3, 4])
    np.testing.assert_array_equal(ours[0][1], [7, -9])
    np.testing.assert_array_equal(ours[2][1], runs[1][1])
    compare_runs(oracle, two_variables_model(), runs, reset_between=True, min_arena="none")


def loop_increment_model(k=3):
    """main: h = VAR_HANDLE('v'); ASSIGN(h, x); WHILE(n, h) whose body does
    ASSIGN(h, READ(h) + step) and n -= 1; out = READ(h). The body gets the handle as a
    subgraph input (no data at prepare: its ASSIGN allocates nothing)."""
    b = ModelBuilder()
    m = b.subgraph("main")
    n = m.add_tensor("n", (), "INT32")
    x = m.add_tensor("x", (k,), "FLOAT32")
    h = m.add_tensor("h", (), "RESOURCE")
    n_o = m.add_tensor("n_o", (), "INT32")
    h_o = m.add_tensor("h_o", (), "RESOURCE")
    out = m.add_tensor("out", (k,), "FLOAT32")
    m.add_operator("VAR_HANDLE", [], [h], shared_name="v")
    m.add_operator("ASSIGN_VARIABLE", [h, x], [])
    m.add_operator("WHILE", [n, h], [n_o, h_o], cond_subgraph_index=1, body_subgraph_index=2)
    m.add_operator("READ_VARIABLE", [h_o], [out])
    m.inputs, m.outputs = [n, x], [out, n_o]
    c = b.subgraph("cond")
    cn = c.add_tensor("n", (), "INT32")
    ch = c.add_tensor("h", (), "RESOURCE")
    f = c.add_tensor("f", (), "BOOL")
    c.add_operator("CAST", [cn], [f])
    c.inputs, c.outputs = [cn, ch], [f]
    g = b.subgraph("body")
    gn = g.add_tensor("n", (), "INT32")
    gh = g.add_tensor("h", (), "RESOURCE")
    one = g.add_tensor("one", (), "INT32", data=np.array(1, np.int32))
    step = g.add_tensor("step", (k,), "FLOAT32", data=np.linspace(0.25, 1, k).astype(np.float32))
    v = g.add_tensor("v", (k,), "FLOAT32")
    v2 = g.add_tensor("v2", (k,), "FLOAT32")
    n2 = g.add_tensor("n2", (), "INT32")
    g.add_operator("READ_VARIABLE", [gh], [v])
    g.add_operator("ADD", [v, step], [v2])
    g.add_operator("ASSIGN_VARIABLE", [gh, v2], [])
    g.add_operator("SUB", [gn, one], [n2])
    g.inputs, g.outputs = [gn, gh], [n2, gh]
    return b.build()


@given(loops=st.lists(st.integers(0, 6), min_size=1, max_size=3), k=st.integers(1, 5),
       seed=st.integers(0, 2**31 - 1))
def test_variable_updated_in_while_body(oracle, loops, k, seed):
    rng = np.random.default_rng(seed)
    runs = [[np.array(n, np.int32), rng.uniform(-3, 3, k).astype(np.float32)] for n in loops]
    compare_runs(oracle, loop_increment_model(k), runs, min_arena="edge", context=f"loop {loops}")


# ------------------------------------------------------------------- errors
def test_var_handle_without_resource_variables():
    it = MicroInterpreter(delay_model((2,), "FLOAT32"), target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError) as info:
        it.allocate_tensors()
    assert info.value.op_name == "VAR_HANDLE" and "requires resource variables" in str(info.value)


def test_too_many_variables_fails_as_in_tflm(oracle):
    """Two containers with one shared name: the package counts one variable, so the second
    VAR_HANDLE finds the table full (TFLM fails to allocate too)."""
    b = ModelBuilder()
    m = b.subgraph()
    x = m.add_tensor("x", (2,), "FLOAT32")
    h1 = m.add_tensor("h1", (), "RESOURCE")
    h2 = m.add_tensor("h2", (), "RESOURCE")
    m.add_operator("VAR_HANDLE", [], [h1], container="c1", shared_name="v")
    m.add_operator("VAR_HANDLE", [], [h2], container="c2", shared_name="v")
    m.add_operator("ASSIGN_VARIABLE", [h1, x], [])
    m.add_operator("ASSIGN_VARIABLE", [h2, x], [])
    m.inputs, m.outputs = [x], []
    model = b.build()
    with pytest.raises(KernelError) as info:
        make_interpreter(model).allocate_tensors()
    assert "Maximum resource variable count (1) reached" in str(info.value)
    assert info.value.op_name == "VAR_HANDLE" and info.value.op_index == 1
    r = oracle.run(model, [np.zeros(2, np.float32)])
    assert not r.ok and r.stage == "allocate"


def test_read_before_any_buffer_refused():
    """Only READ_VARIABLE uses the variable: no ASSIGN_VARIABLE ever gives it a buffer
    (TFLM would read through a null pointer)."""
    b = ModelBuilder()
    m = b.subgraph()
    h = m.add_tensor("h", (), "RESOURCE")
    r = m.add_tensor("r", (2,), "FLOAT32")
    m.add_operator("VAR_HANDLE", [], [h], shared_name="v")
    m.add_operator("READ_VARIABLE", [h], [r])
    m.inputs, m.outputs = [], [r]
    it = make_interpreter(b.build())
    it.allocate_tensors()
    with pytest.raises(KernelError) as info:
        it.invoke()
    assert info.value.op_name == "READ_VARIABLE" and "before any ASSIGN_VARIABLE" in str(info.value)


def test_size_mismatch_refused():
    """The variable is sized by the first ASSIGN_VARIABLE prepared; a later assignment or
    read of another size is refused (TFLM has only a debug check and then copies the
    wrong number of bytes)."""
    b = ModelBuilder()
    m = b.subgraph()
    x = m.add_tensor("x", (2,), "FLOAT32")
    y = m.add_tensor("y", (3,), "FLOAT32")
    h = m.add_tensor("h", (), "RESOURCE")
    m.add_operator("VAR_HANDLE", [], [h], shared_name="v")
    m.add_operator("ASSIGN_VARIABLE", [h, x], [])
    m.add_operator("ASSIGN_VARIABLE", [h, y], [])
    m.inputs, m.outputs = [x, y], []
    it = make_interpreter(b.build())
    it.allocate_tensors()
    with pytest.raises(KernelError) as info:
        it.invoke()
    assert info.value.op_name == "ASSIGN_VARIABLE" and info.value.op_index == 2
    assert "holds 8 bytes" in str(info.value)


def test_assign_variable_counts():
    b = ModelBuilder()
    m = b.subgraph()
    x = m.add_tensor("x", (2,), "FLOAT32")
    h = m.add_tensor("h", (), "RESOURCE")
    o = m.add_tensor("o", (2,), "FLOAT32")
    m.add_operator("VAR_HANDLE", [], [h], shared_name="v")
    m.add_operator("ASSIGN_VARIABLE", [h, x], [o])
    m.inputs, m.outputs = [x], [o]
    with pytest.raises(KernelError) as info:
        make_interpreter(b.build()).allocate_tensors()
    assert info.value.op_name == "ASSIGN_VARIABLE" and "no outputs" in str(info.value)


def test_call_once_with_inputs_refused():
    b = ModelBuilder()
    m = b.subgraph()
    x = m.add_tensor("x", (2,), "FLOAT32")
    m.add_operator("CALL_ONCE", [x], [], init_subgraph_index=1)
    m.inputs, m.outputs = [x], [x]
    g = b.subgraph()
    g.inputs, g.outputs = [], []
    with pytest.raises(KernelError) as info:
        make_interpreter(b.build()).allocate_tensors()
    assert info.value.op_name == "CALL_ONCE"


def test_call_once_bad_index_refused():
    with pytest.raises(KernelError) as info:
        b = ModelBuilder()
        m = b.subgraph()
        m.add_operator("CALL_ONCE", [], [], init_subgraph_index=3)
        m.inputs, m.outputs = [], []
        make_interpreter(b.build()).allocate_tensors()
    assert info.value.op_name == "CALL_ONCE" and "init_subgraph_index 3" in str(info.value)
