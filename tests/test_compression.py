"""TFLM compression against the tflite-micro package (built with USE_TFLM_COMPRESSION):
DECODE operators (LUT from TFLM's own tool; LUT, pruning, Huffman from ours) and the
COMPRESSION_METADATA form, on random single-op models and on compressed zoo models:
outputs, allocation report lines and minimum arena identical; TFLM's errors; the
alternate decompression memory; targets built without USE_TFLM_COMPRESSION."""
import contextlib
import dataclasses
import importlib
import io
import json
import os
import sys
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from micro_runtime import MicroInterpreter, load_model
from micro_runtime.errors import KernelError, MicroRuntimeError, ModelError
from micro_runtime.targets import MCU32
from micro_runtime.tools.cli import main
from micro_runtime.tools.compress import (TensorCompression, cluster_tensor, compress,
                                          pack_bit_fields)
from tests.helpers import (TensorDef, assert_bit_exact, model_bytes, run_ours,
                           single_op_model)
from tests.strategies import arrays
from tests.test_op_conv import conv_case
from tests.test_op_depthwise_conv import depthwise_case
from tests.test_op_fully_connected import fc_case
from tests.test_op_transpose_conv import transpose_conv_case

pytestmark = pytest.mark.oracle

#: ops whose TFLM kernels decompress COMPRESSION_METADATA tensors, and their inputs
METADATA_INPUTS = {"FULLY_CONNECTED": (1, 2), "CONV_2D": (1, 2), "DEPTHWISE_CONV_2D": (1, 2),
                   "TRANSPOSE_CONV": (1, 3)}


def tflm_tool():
    """TFLM's compression tool from the tflite-micro package (None if unusable)."""
    try:
        tool = importlib.import_module("tflite_micro.tensorflow.lite.micro.compression.compress")
        from tflite_micro.tensorflow.lite.micro.compression import spec
    except Exception:
        return None
    return tool, spec


def tflm_compress(model: bytes, tensors, bits, per_channel_axis) -> bytes:
    """LUT compression with TFLM's tool; ``per_channel_axis[i]`` None = one table."""
    tool, spec = tflm_tool()
    specs = [spec.Tensor(0, t, [spec.LookUpTableCompression(
        b, spec.PerTensor() if a is None else spec.PerChannel(a))])
        for t, b, a in zip(tensors, bits, per_channel_axis)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stderr, sys.stderr = sys.stderr, io.StringIO()   # "index_bitwidth larger than needed"
        try:
            return bytes(tool.compress(model, specs))
        finally:
            sys.stderr = stderr


def compare(oracle, model: bytes, inputs, alt: int = 0, context: str = "", invokes: int = 1):
    """Ours and TFLM agree: both fail to allocate / invoke, or identical outputs and
    report lines. ``invokes`` > 1: that many invokes of one interpreter, the first on
    ``inputs``, the others on inputs derived from them (kernels keep host copies of
    decoded constants from the second invoke on), each invoke's outputs compared."""
    runs = [list(inputs)]
    for k in range(1, invokes):
        rng = np.random.default_rng(k)
        runs.append([np.asarray(x).reshape(-1)[rng.permutation(np.size(x))].reshape(np.shape(x))
                     for x in inputs])
    theirs = oracle.run(model, inputs, alt_decompression_memory_size=alt, runs=runs)
    stage = "allocate"
    try:
        it = MicroInterpreter(model, arena_size=1 << 20, target="host64", recording=True,
                              error_reporter=lambda m: None, alt_decompression_memory_size=alt)
        it.allocate_tensors()
        stage = "invoke"
        for k, run in enumerate(runs):
            for i, x in enumerate(run):
                it.set_input(np.asarray(x), i)
            it.invoke()
            if k + 1 < len(runs) and theirs.ok:
                assert_bit_exact([np.array(it.output(i)) for i in range(it.outputs_size)],
                                 theirs.invokes[k], f"{context} (invoke {k + 1})")
    except MicroRuntimeError as e:
        assert not theirs.ok, f"{context}: ours failed in {stage} ({e}) but TFLM ran"
        assert theirs.stage == stage, f"{context}: ours failed in {stage}, TFLM in {theirs.stage}"
        return None
    assert theirs.ok, f"{context}: TFLM failed ({theirs.stage}: {theirs.error}), ours ran"
    assert_bit_exact([np.array(it.output(i)) for i in range(it.outputs_size)], theirs.outputs,
                     context)
    buf = io.StringIO()
    it.print_allocations(buf)
    lines = buf.getvalue().splitlines()
    assert lines == theirs.lines, (f"{context}: report differs\nours:\n" + "\n".join(lines)
                                   + "\nTFLM:\n" + "\n".join(theirs.lines))
    return it


# --------------------------------------------------------- random single ops
@st.composite
def constant_operand_case(draw):
    """A binary op with one constant operand (any op may read a DECODE output)."""
    op = draw(st.sampled_from(["ADD", "MUL", "MAXIMUM", "MINIMUM", "SUB"]))
    dtype = draw(st.sampled_from(["float32", "int32", "int16", "int8"]))
    if op == "SUB" and dtype == "int16":
        dtype = "int32"
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    quant = None
    if dtype in ("int8", "int16") and op in ("ADD", "MUL", "SUB"):
        quant = (0.05, 0) if dtype == "int16" else (0.05, draw(st.integers(-5, 5)))
    lo, hi = (-100, 100) if dtype == "int32" else (None, None)
    c = arrays(draw, shape, dtype, lo, hi)
    x = arrays(draw, shape, dtype, lo, hi)
    t = dtype.upper()
    model = single_op_model(op, [TensorDef(shape, t, quant=quant),
                                 TensorDef(shape, t, quant=quant, data=c)],
                            [TensorDef(shape, t, quant=quant)])
    return model, [x]


def constant_tensors(model: bytes):
    m = load_model(model)
    consumers = {}
    for op in m.main.operators:
        for k, t in enumerate(op.inputs):
            if t >= 0:
                consumers.setdefault(t, []).append((op.name, k))
    return m, [t for t, s in enumerate(m.main.tensors)
               if s.data is not None and t in consumers and s.type != 17], consumers


@st.composite
def compressed_case(draw):
    """A random single-op model, a random subset of its constant tensors clustered and
    compressed in a random form and method, a random alternate decompression memory."""
    base, inputs = draw(st.one_of(
        fc_case(), conv_case(kinds=["float32", "int8", "int8_per_tensor", "int16"]),
        depthwise_case(kinds=["float32", "int8", "int8_per_tensor", "int16"]),
        transpose_conv_case(), constant_operand_case()))
    m, candidates, consumers = constant_tensors(base)
    assume(candidates)
    form = draw(st.sampled_from(["tflm", "decode", "metadata"] if tflm_tool() else
                                ["decode", "metadata"]))
    if form == "metadata":
        candidates = [t for t in candidates
                      if all(k in METADATA_INPUTS.get(name, ()) for name, k in consumers[t])]
        assume(candidates)
    chosen = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=len(candidates),
                           unique=True))
    model, specs = base, []
    for t in chosen:
        spec = m.main.tensors[t]
        q = spec.quantization
        channels = q.scales.size if q is not None else 1
        method = "lut"
        if form == "decode":
            methods = ["lut", "prune"] + (["huffman"] if spec.type in (9, 7) else [])
            method = draw(st.sampled_from(methods))
        bits = draw(st.integers(1, 7))
        if method == "lut":
            # at most 2^bits values per table (per channel of the quantization)
            model = cluster_tensor(model, t, 1 << bits)
        elif method == "prune":
            model = _prune_some(draw, model, t)
        axis = None
        if channels > 1:
            axis = q.quantized_dimension
            if form != "tflm" or axis not in (0, len(spec.shape) - 1):
                assume(axis in (0, len(spec.shape) - 1))
        elif form == "tflm" and len(spec.shape) > 1 and draw(st.integers(0, 4)) == 0:
            # one table per slice on a per-tensor-quantized tensor: TFLM's runtime still
            # reads only the first table (it takes channels from the quantization)
            axis = draw(st.sampled_from([0, len(spec.shape) - 1]))
        specs.append((t, method, bits, axis))
    if form == "tflm":
        out = tflm_compress(model, [s[0] for s in specs], [s[2] for s in specs],
                            [s[3] for s in specs])
    else:
        out = compress(model, [TensorCompression(t, method, bits) for t, method, bits, _ in specs],
                       "metadata" if form == "metadata" else "decode")
    alt = draw(st.sampled_from([0, 0, 64, 1024, 1 << 16]))
    return out, inputs, alt, f"{form} {specs} alt {alt}"


def _prune_some(draw, model: bytes, t: int) -> bytes:
    """Set a random part of tensor ``t`` to its zero point (what pruning drops)."""
    from micro_runtime.tools.model_writer import ModelBuilder
    m = load_model(model)
    spec = m.main.tensors[t]
    values = np.array(spec.data).reshape(spec.shape)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    q = spec.quantization
    zp = 0 if q is None or spec.type != 9 else int(q.zero_points[0])
    if q is not None and q.scales.size > 1:
        zp = 0
    values[rng.random(values.shape) < draw(st.floats(0, 1))] = zp
    mb = ModelBuilder.from_model(m)
    mb.subgraphs[0].tensors[t].buffer = mb.add_buffer(values.astype(values.dtype.newbyteorder("<")).tobytes())
    return mb.build()


@given(compressed_case())
def test_random_compressed_single_op_models_match_tflm(oracle, case):
    model, inputs, alt, context = case
    compare(oracle, model, inputs, alt, context, invokes=3)


# ------------------------------------------------------------- zoo models
def _zoo_inputs(raw, seed):
    m = load_model(raw)
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=m.main.tensors[t].shape).astype(m.main.tensors[t].dtype)
            for t in m.main.inputs]


@pytest.fixture(scope="module")
def person_detect_compressed():
    """person_detect clustered per channel and LUT-compressed (2..7-bit weights,
    1-bit per-channel biases) in both forms."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from compression_sizes import clustered_and_specs, decode_form
    clustered, specs = clustered_and_specs(model_bytes("person_detect"), (7, 2, 5, 3, 6, 4),
                                           biases=True)
    return {"decode": decode_form(clustered, specs),
            "metadata": compress(clustered, specs, "metadata")}


@pytest.mark.parametrize("form", ["decode", "metadata"])
def test_person_detect_compressed_matches_tflm(oracle, person_detect_compressed, form):
    raw = person_detect_compressed[form]
    ours_min = MicroInterpreter(raw, arena_size=1 << 22, target="host64",
                                recording=True).min_arena_bytes()
    for seed in (1, 2):
        x = _zoo_inputs(raw, seed)
        theirs = oracle.run(raw, x, arena_size=ours_min)
        assert theirs.ok, theirs.error
        ours, lines, _ = run_ours(raw, x, arena_size=ours_min)
        assert_bit_exact(ours, theirs.outputs, f"person_detect {form}")
        assert lines == theirs.lines
    # ours is TFLM's minimum: it works there and not one byte below
    assert not oracle.fits(raw, ours_min - 1, _zoo_inputs(raw, 1))


@pytest.mark.parametrize("name", ["hello_world_int8_lut", "kws_ref_model_lut_metadata"])
@pytest.mark.parametrize("alt", [16, 300, 1 << 16])
def test_alternate_decompression_memory_matches_tflm(oracle, name, alt):
    """Decoded tensors and decompressed weights go to the alternate memory when they
    fit; the arena shrinks by what no longer needs planning."""
    raw = model_bytes(name)
    it = compare(oracle, raw, _zoo_inputs(raw, 3), alt, f"{name} alt {alt}")
    ours_min = it.min_arena_bytes()
    assert oracle.run(raw, _zoo_inputs(raw, 3), arena_size=ours_min,
                      alt_decompression_memory_size=alt).ok
    assert not oracle.run(raw, _zoo_inputs(raw, 3), arena_size=ours_min - 1,
                          alt_decompression_memory_size=alt).ok
    if alt == 1 << 16:
        assert ours_min < MicroInterpreter(raw, arena_size=1 << 20, target="host64",
                                           recording=True).min_arena_bytes()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["size", os.path.join(os.path.dirname(__file__), "data", name + ".tflite"),
                     "--target", "host64", "--alt-decompression-memory", str(alt), "--json"]) == 0
    assert json.loads(out.getvalue())["min_arena_bytes"] == ours_min


# ------------------------------------------------------------ targets
def test_decode_models_run_on_mcu32_and_without_compression():
    """DECODE is an ordinary operator: a build without USE_TFLM_COMPRESSION runs it."""
    raw = model_bytes("kws_ref_model_lut")
    x = _zoo_inputs(raw, 4)
    outputs = []
    for target in (MCU32, dataclasses.replace(MCU32, name="mcu32-nocompression", compression=False)):
        ours, _, _ = run_ours(raw, x, target=target)
        outputs.append(ours)
    assert_bit_exact(outputs[0], outputs[1])


def test_metadata_models_refused_without_compression_support():
    target = dataclasses.replace(MCU32, name="cortex-m-nocompression", compression=False)
    it = MicroInterpreter(model_bytes("kws_ref_model_lut_metadata"), arena_size=1 << 20,
                          target=target, error_reporter=lambda m: None)
    with pytest.raises(ModelError, match="USE_TFLM_COMPRESSION"):
        it.allocate_tensors()


def test_metadata_models_run_on_mcu32():
    raw = model_bytes("hello_world_int8_lut_metadata")
    plain = model_bytes("hello_world_int8")
    it = MicroInterpreter(raw, target="mcu32", recording=True)
    it.allocate_tensors()
    it.invoke()
    buf = io.StringIO()
    it.print_allocations(buf)
    # per LUT tensor an 8-byte CompressionTensorData and LookupTableData, then 10 pointers
    assert ("'Persistent compression data' used 88 bytes with alignment overhead (requested "
            "88 bytes for 7 allocations)") in buf.getvalue()
    assert it.min_arena_bytes() > MicroInterpreter(plain, target="mcu32").min_arena_bytes()


# ------------------------------------------------------------- errors
def _fc_model(weights=None):
    w = np.tile(np.array([[1, -2, 3, 0]], np.int8), (3, 1)) if weights is None else weights
    return single_op_model("FULLY_CONNECTED",
                           [TensorDef((1, 4), "INT8", quant=(0.1, 0)),
                            TensorDef(w.shape, "INT8", quant=(0.05, 0), data=w), None],
                           [TensorDef((1, 3), "INT8", quant=(0.3, 0))])


def _replace_ancillary(model: bytes, patch) -> bytes:
    """The DECODE-form model with its ancillary tensor's bytes changed by ``patch``."""
    from micro_runtime.tools.model_writer import ModelBuilder
    m = load_model(model)
    mb = ModelBuilder.from_model(m)
    for t, spec in enumerate(m.main.tensors):
        if spec.name.endswith("_ancillary"):
            data = bytearray(spec.data.tobytes())
            patch(data)
            mb.subgraphs[0].tensors[t].buffer = mb.add_buffer(bytes(data))
    return mb.build()


@pytest.mark.parametrize("what,patch,stage", [
    ("DCM version", lambda d: d.__setitem__(1, 2), "allocate"),
    ("LUT version", lambda d: d.__setitem__(4, 0), "allocate"),
    ("custom decode type", lambda d: d.__setitem__(0, 127), "allocate"),
    ("unknown decode type", lambda d: d.__setitem__(0, 9), "allocate"),
    ("bit width 0", lambda d: d.__setitem__(5, 0), None),
])
def test_decode_errors_match_tflm(oracle, what, patch, stage):
    model = _replace_ancillary(compress(_fc_model(), [TensorCompression(1, "lut", 2)]), patch)
    x = [np.array([[5, -7, 100, -128]], np.int8)]
    theirs = oracle.run(model, x)
    if stage is None:
        assert theirs.ok
        compare(oracle, model, x, context=what)
        return
    assert not theirs.ok and theirs.stage == stage, (theirs.stage, theirs.error)
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError):
        it.allocate_tensors()


def test_decode_of_unsupported_type_fails_at_invoke_as_tflm(oracle):
    """TFLM's LUT decoder checks the output type only when it runs."""
    from micro_runtime.tools.model_writer import ModelBuilder
    mb = ModelBuilder()
    g = mb.subgraph()
    dcm = bytes([0, 1, 0, 0, 1, 2, 4] + [0] * 9) + bytes([1, 2, 3, 4])
    enc = g.add_tensor("enc", (1,), "UINT8", data=np.array([0x1B], np.uint8))
    anc = g.add_tensor("anc", (len(dcm),), "UINT8", data=np.frombuffer(dcm, np.uint8))
    dec = g.add_tensor("dec", (4,), "UINT8")
    g.add_operator("TFLM_DECODE", [enc, anc], [dec])
    g.inputs, g.outputs = [], [dec]
    model = mb.build()
    theirs = oracle.run(model, [])
    assert not theirs.ok and theirs.stage == "invoke"
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    it.allocate_tensors()
    with pytest.raises(KernelError, match="unsupported tensor type UINT8"):
        it.invoke()


def test_metadata_tensor_read_by_a_kernel_without_compression_support():
    """TFLM's ADD would read the packed indices as values: refused with a clear error."""
    base = single_op_model("ADD", [TensorDef((4,), "FLOAT32"),
                                   TensorDef((4,), "FLOAT32", data=np.array([1, 2, 1, 2], np.float32))],
                           [TensorDef((4,), "FLOAT32")])
    model = compress(base, [TensorCompression(1, "lut", 1)], "metadata")
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    with pytest.raises(KernelError, match="does not decompress"):
        it.allocate_tensors()


def _metadata_model(metadata: bytes = None) -> bytes:
    """FC with LUT-compressed weights (COMPRESSION_METADATA form); ``metadata`` replaces
    the metadata entry's bytes."""
    from micro_runtime.tools.model_writer import ModelBuilder
    base = compress(_fc_model(), [TensorCompression(1, "lut", 2)], "metadata")
    if metadata is None:
        return base
    m = load_model(base)
    mb = ModelBuilder.from_model(m)
    mb.metadata = [(n, i) for n, i in mb.metadata if n != "COMPRESSION_METADATA"]
    mb.add_metadata("COMPRESSION_METADATA", metadata)
    return mb.build()


def test_metadata_errors_match_tflm(oracle):
    from micro_runtime.tools.compress import _metadata_flatbuffer
    x = [np.array([[5, -7, 100, -128]], np.int8)]
    m = load_model(_metadata_model())
    value_buffer = m.compression.subgraphs[0][0][1]
    cases = {
        "bit width 8": _metadata_flatbuffer({0: [(1, value_buffer, 8)]}, 1),
        "tensor index": _metadata_flatbuffer({0: [(1, value_buffer, 2), (99, value_buffer, 2)]}, 1),
        "value buffer": _metadata_flatbuffer({0: [(1, 999, 2)]}, 1),
        "duplicate": _metadata_flatbuffer({0: [(1, value_buffer, 2), (1, value_buffer, 2)]}, 1),
    }
    for what, metadata in cases.items():
        model = _metadata_model(metadata=metadata)
        theirs = oracle.run(model, x)
        assert not theirs.ok and theirs.stage == "allocate", what
        with pytest.raises(ModelError, match="Compression: "):
            MicroInterpreter(model, target="host64", error_reporter=lambda m: None).allocate_tensors()


@pytest.mark.parametrize("metadata", [b"\x00", b"\x00" * 12])
def test_unverifiable_metadata_is_ignored_as_tflm(oracle, metadata):
    """Metadata that fails verification is ignored (TFLM prints and goes on): a model
    whose tensors are not compressed runs."""
    from micro_runtime.tools.model_writer import ModelBuilder
    m = load_model(_fc_model())
    mb = ModelBuilder.from_model(m)
    mb.add_metadata("COMPRESSION_METADATA", metadata)
    compare(oracle, mb.build(), [np.array([[5, -7, 100, -128]], np.int8)])


def test_pack_bit_fields_layout():
    """Indices are packed from the high bit of each byte down (TFLM's layout)."""
    assert pack_bit_fields(np.array([7, 0, 3, 2]), 3) == bytes([0b11100001, 0b10100000])


@pytest.mark.parametrize("name", ["trained_lstm_int8", "keyword_scrambled_8bit"])
def test_decoded_lstm_and_svdf_weights_match_tflm(oracle, name):
    """LSTM and SVDF read weights and biases that DECODE writes at run time."""
    raw = model_bytes(name)
    m = load_model(raw)
    specs = []
    for op in m.main.operators:
        if op.name not in ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF", "FULLY_CONNECTED"):
            continue
        for t in op.inputs:
            spec = m.main.tensors[t] if t >= 0 else None
            if spec is None or spec.data is None or any(s.tensor == t for s in specs):
                continue
            q = spec.quantization
            if q is not None and q.scales.size > 1 and q.quantized_dimension not in (0, len(spec.shape) - 1):
                continue
            raw = cluster_tensor(raw, t, 8)
            specs.append(TensorCompression(t, "lut", 3))
    model = compress(raw, specs, "decode")
    ours_min = MicroInterpreter(model, arena_size=1 << 22, target="host64",
                                recording=True).min_arena_bytes()
    x = _zoo_inputs(model, 5)
    theirs = oracle.run(model, x, arena_size=ours_min)
    assert theirs.ok, theirs.error
    ours, lines, _ = run_ours(model, x, arena_size=ours_min)
    assert_bit_exact(ours, theirs.outputs, name)
    assert lines == theirs.lines
    assert not oracle.fits(model, ours_min - 1, x)
