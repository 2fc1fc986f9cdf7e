"""Named inputs / outputs and tensor details on the tflite_micro-compatible Interpreter."""
import numpy as np
import pytest

from micro_runtime import InputError, Interpreter
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import model_path


def two_in_two_out() -> bytes:
    b = ModelBuilder()
    g = b.subgraph()
    a = g.add_tensor("alpha", (1, 3), "FLOAT32")
    c = g.add_tensor("beta", (1, 3), "FLOAT32")
    s = g.add_tensor("sum", (1, 3), "FLOAT32")
    k = g.add_tensor("k", (1, 3), "FLOAT32", data=np.full((1, 3), 10, np.float32))
    t = g.add_tensor("plus_ten", (1, 3), "FLOAT32")
    g.add_operator("ADD", [a, c], [s], fused_activation_function=0)
    g.add_operator("ADD", [s, k], [t], fused_activation_function=0)
    g.inputs, g.outputs = [c, a], [t, s]          # model order differs from tensor order
    return b.build()


def test_indices_by_name_follow_the_model_io_order():
    it = Interpreter.from_bytes(two_in_two_out(), arena_size=1 << 14)
    assert it.get_input_index("beta") == 0 and it.get_input_index("alpha") == 1
    assert it.get_output_index("plus_ten") == 0 and it.get_output_index("sum") == 1
    it.set_input(np.array([[1, 2, 3]], np.float32), it.get_input_index("alpha"))
    it.set_input(np.array([[10, 20, 30]], np.float32), it.get_input_index("beta"))
    it.invoke()
    assert it.get_output(it.get_output_index("sum")).tolist() == [[11, 22, 33]]
    assert it.get_output(it.get_output_index("plus_ten")).tolist() == [[21, 32, 43]]


def test_unknown_names_give_an_error_listing_the_names():
    it = Interpreter.from_bytes(two_in_two_out(), arena_size=1 << 14)
    with pytest.raises(InputError, match=r"no model input named 'gamma'.*'beta', 'alpha'"):
        it.get_input_index("gamma")
    with pytest.raises(InputError, match=r"no model output named 'alpha'.*'plus_ten', 'sum'"):
        it.get_output_index("alpha")      # an input's name is not an output's
    with pytest.raises(ValueError):       # InputError is also the ValueError tflite raises
        it.get_input_index("")


def test_tensor_details_describe_every_tensor():
    it = Interpreter.from_bytes(two_in_two_out(), arena_size=1 << 14)
    details = it.get_tensor_details()
    assert [d["name"] for d in details] == ["alpha", "beta", "sum", "k", "plus_ten"]
    assert [d["index"] for d in details] == list(range(5))
    by_name = {d["name"]: d for d in details}
    assert by_name["k"]["location"] == "constant" and by_name["k"]["arena_offset"] is None
    for name in ("alpha", "beta", "sum", "plus_ten"):
        assert by_name[name]["location"] == "arena"
        assert by_name[name]["bytes"] == 12
        assert by_name[name]["dtype"] is np.float32
        assert by_name[name]["shape"].tolist() == [1, 3]
    # the reported offsets are where the interpreter's views really are
    mi = it.micro_interpreter
    base = mi.arena.view(0, np.uint8, 1).__array_interface__["data"][0]
    for name in ("beta", "alpha"):
        view = mi.input(it.get_input_index(name))
        assert view.__array_interface__["data"][0] - base == by_name[name]["arena_offset"]


def test_tensor_details_carry_quantization():
    it = Interpreter.from_file(model_path("hello_world_int8"), arena_size=1 << 14)
    details = it.get_tensor_details()
    inp = details[it.micro_interpreter.model.main.inputs[0]]
    q = inp["quantization_parameters"]
    expected = it.get_input_details(0)["quantization_parameters"]
    assert q["scales"].tolist() == expected["scales"].tolist()
    assert q["zero_points"].tolist() == expected["zero_points"].tolist()
    assert inp["dtype"] is np.int8
    assert [d["name"] for d in details] == [t.name for t in it.micro_interpreter.model.main.tensors]
