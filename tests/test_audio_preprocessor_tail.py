"""The integer tail of audio_preprocessor_int8.tflite rebuilt as one model (its ops and
constants): CAST int16->int32, MUL 256, ADD 333, DIV 666, ADD -128, MINIMUM 127,
MAXIMUM -128, CAST int32->int8; plus its CAST uint32 <-> int32 pair; against TFLM."""
import numpy as np
import pytest

from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import compare_with_tflm

pytestmark = pytest.mark.oracle


def _tail_model():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (40,), "INT16")
    prev = g.add_tensor("x32", (40,), "INT32")
    g.add_operator("CAST", [x], [prev])
    for k, (op, value) in enumerate([("MUL", 256), ("ADD", 333), ("DIV", 666), ("ADD", -128),
                                     ("MINIMUM", 127), ("MAXIMUM", -128)]):
        c = g.add_tensor(f"c{k}", (), "INT32", data=np.array(value, np.int32))
        nxt = g.add_tensor(f"t{k}", (40,), "INT32")
        options = {"fused_activation_function": 0} if op in ("MUL", "ADD", "DIV") else {}
        g.add_operator(op, [prev, c], [nxt], **options)
        prev = nxt
    y = g.add_tensor("y", (40,), "INT8")
    g.add_operator("CAST", [prev], [y])
    g.inputs, g.outputs = [x], [y]
    return b.build()


def _uint32_model():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (257,), "UINT32")
    m = g.add_tensor("m", (257,), "INT32")
    y = g.add_tensor("y", (257,), "UINT32")
    g.add_operator("CAST", [x], [m])
    g.add_operator("CAST", [m], [y])
    g.inputs, g.outputs = [x], [y, m]
    return b.build()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_audio_preprocessor_integer_tail(oracle, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-32768, 32767, size=40, endpoint=True).astype(np.int16)
    compare_with_tflm(oracle, _tail_model(), [x], context="audio tail")


def test_audio_preprocessor_uint32_casts(oracle):
    x = np.random.default_rng(5).integers(0, 2**32, size=257, dtype=np.uint64).astype(np.uint32)
    compare_with_tflm(oracle, _uint32_model(), [x], context="uint32 casts")
