"""RESHAPE against TFLM: every tensor type, with or without the (ignored) shape input,
constant or model inputs; clear errors for element-count and type mismatches."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import any_array, assert_rejected, quant_or_none, assert_same_min_arena
from tests.helpers import TensorDef, compare_with_tflm, single_op_model
from tests.strategies import shapes

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int8", "int16", "int32", "int64", "uint8", "bool", "float16", "float64"]


def _factor(draw, n: int, max_dims: int = 6):
    """A random shape with ``n`` elements (1 to max_dims dims)."""
    dims = []
    rest = n
    for _ in range(draw(st.integers(0, max_dims - 1))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        dims.append(d)
        rest //= d
    dims.append(rest)
    return tuple(draw(st.permutations(dims)))


@st.composite
def reshape_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    in_shape = draw(shapes(0, 5, 1, 6))
    n = int(np.prod(in_shape, dtype=np.int64))
    out_shape = _factor(draw, n) if draw(st.integers(0, 5)) else ()
    if out_shape == () and n != 1:
        out_shape = (n,)
    q = quant_or_none(draw, dtype)
    x = any_array(draw, in_shape, dtype)
    const_input = draw(st.integers(0, 5)) == 0
    shape_kind = draw(st.sampled_from(["none", "const", "options", "input"]))
    event(f"{dtype} shape={shape_kind} const_input={const_input}")
    inp = TensorDef(in_shape, dtype.upper(), q, data=x if const_input else None)
    inputs = [inp]
    options = {}
    runtime = [] if const_input else [x]
    shape_arr = np.array(out_shape, np.int32)
    if shape_kind == "const":
        inputs.append(TensorDef((len(out_shape),), "INT32", data=shape_arr))
    elif shape_kind == "input":
        inputs.append(TensorDef((len(out_shape),), "INT32"))
        runtime.append(shape_arr)
    elif shape_kind == "options":
        options["new_shape"] = list(out_shape)
    model = single_op_model("RESHAPE", inputs, [TensorDef(out_shape, dtype.upper(), q)], **options)
    return model, runtime


@given(reshape_case())
def test_reshape_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context="RESHAPE")


def test_reshape_chain_matches_tflm(oracle):
    """Two reshapes back to back (the intermediate lives in the arena)."""
    from micro_runtime.tools.model_writer import ModelBuilder
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (2, 3, 4), "INT8", quantization=(0.5, 3))
    m = g.add_tensor("m", (6, 4), "INT8", quantization=(0.5, 3))
    y = g.add_tensor("y", (24,), "INT8", quantization=(0.5, 3))
    g.add_operator("RESHAPE", [x], [m])
    g.add_operator("RESHAPE", [m], [y])
    g.inputs, g.outputs = [x], [y]
    data = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    compare_with_tflm(oracle, b.build(), [data], context="RESHAPE chain")


def test_reshape_element_count_mismatch():
    model = single_op_model("RESHAPE", [TensorDef((2, 3), "FLOAT32")], [TensorDef((4, 2), "FLOAT32")])
    err = assert_rejected(model, [np.zeros((2, 3), np.float32)], "6 elements")
    assert "RESHAPE" in str(err) and "8 elements" in str(err)


def test_reshape_type_mismatch():
    model = single_op_model("RESHAPE", [TensorDef((2, 3), "FLOAT32")], [TensorDef((6,), "INT32")])
    assert_rejected(model, [np.zeros((2, 3), np.float32)], "input type FLOAT32 and output type INT32")


def test_reshape_legacy_scalar_refused():
    model = single_op_model("RESHAPE", [TensorDef((1,), "FLOAT32")], [TensorDef((0,), "FLOAT32")])
    assert_rejected(model, [np.zeros((1,), np.float32)], "legacy scalar reshape")


def test_reshape_stretch_dim_refused():
    model = single_op_model("RESHAPE", [TensorDef((2, 3), "FLOAT32")], [TensorDef((3, -1), "FLOAT32")])
    assert_rejected(model, [np.zeros((2, 3), np.float32)], "dynamic")


def test_reshape_min_arena(oracle):
    model = single_op_model("RESHAPE", [TensorDef((4, 6), "INT16"), TensorDef((2,), "INT32", data=np.array([8, 3], np.int32))],
                            [TensorDef((8, 3), "INT16")])
    assert_same_min_arena(oracle, model, [np.zeros((4, 6), np.int16)])


def test_reshape_in_place_matches_tflm(oracle):
    """An offline plan putting input and output at the same offset: TFLM skips the copy
    (same data pointer), so do we."""
    from micro_runtime.tools.model_writer import ModelBuilder
    from kernels.internal import tensor_utils
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (2, 3, 4), "INT16")
    y = g.add_tensor("y", (4, 6), "INT16")
    g.add_operator("RESHAPE", [x], [y])
    g.inputs, g.outputs = [x], [y]
    b.add_metadata("OfflineMemoryAllocation", np.array([1, 0, 2, 0, 0], "<i4").tobytes())
    model = b.build()
    data = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    calls = []
    original = tensor_utils.data_address
    try:
        tensor_utils.data_address = lambda a: calls.append(original(a)) or original(a)
        ours, _ = compare_with_tflm(oracle, model, [data], context="RESHAPE in place")
    finally:
        tensor_utils.data_address = original
    assert calls and calls[0] == calls[1]   # the same buffer: no copy
    assert ours[0].tolist() == data.reshape(4, 6).tolist()
