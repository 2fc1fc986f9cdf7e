"""Model reading: zero-copy constants, and clear ModelErrors for malformed files."""
import numpy as np
import pytest

from micro_runtime import MicroInterpreter, ModelError, UnsupportedOpError, load_model
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import model_bytes, model_path


def small_model(mutate=None):
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "INT8", quantization=(0.5, -3))
    w = g.add_tensor("w", (2, 4), "INT8", data=np.arange(8, dtype=np.int8).reshape(2, 4),
                     quantization=(0.1, 0))
    y = g.add_tensor("y", (1, 2), "INT8", quantization=(0.25, 1))
    g.add_operator("FULLY_CONNECTED", [x, w, -1], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    if mutate:
        mutate(b, g)
    return b.build()


def test_reads_every_zoo_model():
    for name in ("person_detect", "keyword_scrambled_8bit", "trained_lstm_int8"):
        m = load_model(model_path(name))
        assert m.subgraphs and m.main.operators


def test_constant_data_are_views_on_the_model_bytes():
    raw = model_bytes("person_detect")
    m = load_model(raw)
    weights = [t for t in m.main.tensors if t.data is not None and t.data.size > 100]
    assert weights
    owner = np.frombuffer(raw, dtype=np.uint8)
    for t in weights:
        assert np.shares_memory(t.data, owner)
        assert not t.data.flags.writeable


def test_optional_input_minus_one_is_accepted():
    raw = small_model()
    it = MicroInterpreter(raw, arena_size=4096, target="host64")
    it.allocate_tensors()
    it.set_input(np.array([[1, 2, 3, 4]], np.int8))
    it.invoke()


def test_bad_buffer_index_names_the_tensor():
    raw = small_model(lambda b, g: setattr(g.tensors[1], "buffer", 99))
    with pytest.raises(ModelError, match=r"tensor #1 'w'.*buffer 99"):
        load_model(raw)


def test_bad_opcode_index_names_the_operator():
    raw = small_model(lambda b, g: setattr(g.operators[0], "opcode_index", 5))
    with pytest.raises(ModelError, match=r"operator #0.*operator code 5"):
        load_model(raw)


def test_operator_input_out_of_range_names_the_operator():
    raw = small_model(lambda b, g: setattr(g.operators[0], "inputs", (0, 7, -1)))
    with pytest.raises(ModelError, match=r"operator #0 \(FULLY_CONNECTED\).*input 1 refers to tensor 7"):
        load_model(raw)


def test_subgraph_output_out_of_range():
    raw = small_model(lambda b, g: setattr(g, "outputs", [12]))
    with pytest.raises(ModelError, match=r"output 0 refers to tensor 12"):
        load_model(raw)


def test_truncated_file():
    raw = model_bytes("hello_world_int8")
    for cut in (len(raw) // 2, len(raw) - 100, 40):
        with pytest.raises(ModelError):
            load_model(raw[:cut])


def test_not_a_tflite_file():
    with pytest.raises(ModelError, match="not a .tflite model"):
        load_model(b"PK\x03\x04 this is a zip file, not a model")
    with pytest.raises(ModelError, match="not a .tflite model"):
        load_model(b"abc")


def test_missing_file():
    with pytest.raises(ModelError, match="not found"):
        load_model("/nonexistent/model.tflite")


def test_constant_buffer_too_small_for_its_shape():
    def shrink(b, g):
        b.buffers[g.tensors[1].buffer] = b"\x01\x02"
    with pytest.raises(ModelError, match=r"tensor #1 'w'.*needs 8 bytes but its buffer holds 2"):
        load_model(small_model(shrink))


def test_unsupported_ops_are_listed_all_at_once_before_allocation():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (4,), "FLOAT32")
    y = g.add_tensor("y", (4,), "FLOAT32")
    z = g.add_tensor("z", (4,), "FLOAT32")
    g.add_operator("MyCustomOp", [x], [y], custom_options=b"\x00")
    g.add_operator("EmbeddingBagThing", [y], [z], custom_options=b"\x00")
    g.inputs, g.outputs = [x], [z]
    with pytest.raises(UnsupportedOpError) as err:
        MicroInterpreter(b.build(), arena_size=1 << 16)
    assert err.value.missing == ["MyCustomOp", "EmbeddingBagThing"]
    assert "MyCustomOp" in str(err.value) and "EmbeddingBagThing" in str(err.value)


def test_builtin_op_with_custom_options_is_rejected():
    raw = small_model(lambda b, g: setattr(g.operators[0], "custom_options", b"\x01"))
    it = MicroInterpreter(raw, arena_size=4096, error_reporter=lambda m: None)
    with pytest.raises(ModelError, match="builtin operator FULLY_CONNECTED with custom options"):
        it.allocate_tensors()


def test_offline_plan_metadata_is_read():
    offsets = [1, 0, 3, 0, -1, 16]

    def add_plan(b, g):
        b.add_metadata("OfflineMemoryAllocation", np.array(offsets, dtype="<i4").tobytes())
    m = load_model(small_model(add_plan))
    assert list(m.offline_planned_offsets()) == [0, -1, 16]


def test_offline_plan_with_wrong_tensor_count():
    def add_plan(b, g):
        b.add_metadata("OfflineMemoryAllocation", np.array([1, 0, 5, 0, 0, 0, 0, 0], dtype="<i4").tobytes())
    with pytest.raises(ModelError, match=r"offline buffer offsets \(5\).*nbr tensors \(3\)"):
        load_model(small_model(add_plan)).offline_planned_offsets()
