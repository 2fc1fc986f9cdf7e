"""The float "accelerator" delegate: claims, float subsets, quantization at the boundary."""
import numpy as np
import pytest

from kernels.base import BUILTIN_KERNELS, Kernel
from kernels.fully_connected import FullyConnected
from micro_runtime import InputError, MicroInterpreter, default_op_resolver, load_model
from micro_runtime.tools.drift import measure_drift, random_inputs
from micro_runtime.delegates.float_delegate import FloatDelegate, dequantize, quantize, to_fp16_storage
from micro_runtime.model import Quantization
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import model_path


def run(it, xs):
    outs = []
    for x in xs:
        it.set_input(x, 0)
        it.invoke()
        outs.append(np.array(it.output(0)))
    return np.stack(outs)


# ----------------------------------------------------------------- arithmetic
def test_dequantize_is_per_channel_aware():
    q = np.arange(-6, 6, dtype=np.int8).reshape(3, 2, 2)
    per_channel = Quantization(np.array([0.5, 0.25], np.float32), np.array([1, -2]), 2)
    got = dequantize(q, per_channel)
    expected = np.stack([(q[..., 0] - 1) * 0.5, (q[..., 1] + 2) * 0.25], axis=-1)
    assert got.dtype == np.float32 and np.array_equal(got, expected.astype(np.float32))
    per_tensor = Quantization(np.array([0.1], np.float32), np.array([3]), 0)
    assert np.array_equal(dequantize(q, per_tensor),
                          (np.float64(np.float32(0.1)) * (q.astype(np.float64) - 3)).astype(np.float32))


def test_quantize_rounds_half_away_and_clamps_like_tflm():
    x = np.array([0.25, -0.25, 0.75, -0.75, 100.0, -100.0, np.nan, np.inf], np.float32)
    got = quantize(x, 0.5, -1, np.dtype(np.int8))
    # x / 0.5 = 0.5, -0.5, 1.5, -1.5 -> 1, -1, 2, -2 (std::round), then + zero point -1
    assert got.tolist() == [0, -2, 1, -3, 127, -128, -1, 127]
    softmax_out = quantize(np.array([1.0, 0.5, 0.0], np.float32), 1 / 256, -128, np.dtype(np.int8))
    assert softmax_out.tolist() == [127, 0, -128]        # p = 1.0 saturates, as in TFLM


def test_fp16_storage_rounds_to_binary16():
    x = np.array([1 + 2 ** -12, 70000.0, 0.1], np.float32)
    assert to_fp16_storage(x).tolist() == [1.0, np.inf, float(np.float16(0.1))]


def test_precision_is_checked():
    with pytest.raises(InputError, match="fp32' or 'fp16"):
        FloatDelegate("bf16")
    assert FloatDelegate("float16").precision == "fp16"


# ----------------------------------------------------------- float models
def test_on_a_float_model_fp32_is_exact_and_fp16_is_not():
    xs = [np.array([[v]], np.float32) for v in np.linspace(0, 6, 13)]
    plain = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    plain.allocate_tensors()
    head = plain.head_bytes
    expected = run(plain, xs)
    fp32 = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    d = FloatDelegate("fp32")
    fp32.modify_graph_with_delegate(d)
    assert d.claimed == [0, 1, 2] and d.rejected == {}
    assert [op.name for op in fp32.model.main.operators] == ["DELEGATE_float32_0"]
    assert run(fp32, xs).tobytes() == expected.tobytes()        # same float kernels, same order
    assert fp32.head_bytes < head                               # private tensors left the plan
    fp16 = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    fp16.modify_graph_with_delegate(FloatDelegate("fp16"))
    got = run(fp16, xs)
    diff = np.abs(got - expected)
    assert 0 < diff.max() < 1e-2
    assert np.array_equal(got, to_fp16_storage(got))            # outputs are binary16 values


# ---------------------------------------------------------- quantized models
@pytest.mark.parametrize("name,bound", [("hello_world_int8", 4), ("ad01_int8", 32)])
def test_int8_models_stay_close_to_the_integer_reference(name, bound):
    ref = MicroInterpreter(model_path(name), arena_size=1 << 20)
    ref.allocate_tensors()
    acc = MicroInterpreter(model_path(name), arena_size=1 << 20)
    d = FloatDelegate("fp32")
    acc.modify_graph_with_delegate(d)
    assert len(d.claimed) == len(ref.model.main.operators)
    spec = ref.model.main.tensors[ref.model.main.inputs[0]]
    xs = [random_inputs([spec], s)[0] for s in range(12)]
    a, b = run(ref, xs), run(acc, xs)
    diff = np.abs(a.astype(int) - b.astype(int))
    assert diff.max() <= bound
    assert diff.mean() < bound / 2
    assert not np.array_equal(a, b)          # it really ran something else


ZOO_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "SOFTMAX", "FULLY_CONNECTED")
zoo_kernels = pytest.mark.skipif(any(op not in BUILTIN_KERNELS for op in ZOO_OPS),
                                 reason="the zoo's kernels are not all written yet")


@pytest.mark.parametrize("name", ["ad01_int8", pytest.param("person_detect", marks=zoo_kernels),
                                  pytest.param("vww_96_int8", marks=zoo_kernels)])
def test_each_float_op_is_within_one_step_of_the_integer_op(name):
    """One op at a time, on the integer run's own input to that op: the float result
    quantized back differs from the integer kernel's by at most one step (the integer
    kernel's own rounding)."""
    from micro_runtime.delegates.float_delegate import build_float_model, nested_interpreter
    ref = MicroInterpreter(model_path(name), arena_size=1 << 21, planner="linear")
    ref.allocate_tensors()
    ref.set_input(random_inputs([ref.model.main.tensors[ref.model.main.inputs[0]]], 3)[0])
    ref.invoke()
    sg = ref.model.main
    resolver = FloatDelegate().float_resolver
    for op in sg.operators:
        ins = [t for t in op.inputs if t >= 0]
        sub = build_float_model(ref.model, [op], ins, list(op.outputs))
        it = nested_interpreter(sub.model, resolver)
        for j, k in enumerate(sub.runtime_inputs):
            it.input(j)[...] = dequantize(ref.tensor(ins[k]), sg.tensors[ins[k]].quantization)
        it.invoke()
        out = sg.tensors[op.outputs[0]]
        q = quantize(it.output(0), out.quantization.scale, out.quantization.zero_point, out.dtype)
        assert np.abs(q.astype(int) - ref.tensor(op.outputs[0]).astype(int)).max() <= 1, op.describe()


class Negate(Kernel):
    custom_name = "NEGATE"

    def invoke(self, ctx, node):
        np.copyto(node.output_arrays[0], np.clip(-node.input_arrays[0].astype(np.int16), -128, 127))


def fc_custom_fc() -> bytes:
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 8), "INT8", quantization=(0.05, 0))
    w1 = g.add_tensor("w1", (6, 8), "INT8", data=rng.integers(-100, 100, (6, 8)), quantization=(0.02, 0))
    b1 = g.add_tensor("b1", (6,), "INT32", data=rng.integers(-300, 300, 6), quantization=(0.001, 0))
    h = g.add_tensor("h", (1, 6), "INT8", quantization=(0.04, 0))
    n = g.add_tensor("n", (1, 6), "INT8", quantization=(0.04, 0))
    w2 = g.add_tensor("w2", (4, 6), "INT8", data=rng.integers(-100, 100, (4, 6)),
                      quantization=([0.01, 0.02, 0.03, 0.015], [0, 0, 0, 0], 0))
    y = g.add_tensor("y", (1, 4), "INT8", quantization=(0.05, 3))
    g.add_operator("FULLY_CONNECTED", [x, w1, b1], [h], fused_activation_function=0)
    g.add_operator("NEGATE", [h], [n], custom_options=b"")
    g.add_operator("FULLY_CONNECTED", [n, w2, -1], [y], fused_activation_function=1)
    g.inputs, g.outputs = [x], [y]
    return b.build()


def test_unclaimable_ops_split_the_graph_into_subsets():
    model = fc_custom_fc()
    resolver = default_op_resolver().add(Negate())
    ref = MicroInterpreter(model, resolver, 1 << 14)
    ref.allocate_tensors()
    acc = MicroInterpreter(model, resolver, 1 << 14)
    d = FloatDelegate(op_resolver=resolver)
    acc.modify_graph_with_delegate(d)
    assert d.claimed == [0, 2] and d.rejected == {1: "custom operator"}
    assert [op.name for op in acc.model.main.operators] == ["DELEGATE_float32_0", "NEGATE",
                                                             "DELEGATE_float32_1"]
    xs = [np.random.default_rng(s).integers(-128, 128, (1, 8), dtype=np.int8) for s in range(20)]
    diff = np.abs(run(ref, xs).astype(int) - run(acc, xs).astype(int))
    assert diff.max() <= 2                     # per-channel weights (second FC) included


class IntegerOnlyFC(FullyConnected):
    def prepare(self, ctx, node):
        inp = ctx.input(node, 0)
        is_float = inp.type == 0               # FLOAT32
        ctx.release(inp)
        if is_float:
            raise ctx.error("no float path")
        return super().prepare(ctx, node)


def test_an_op_whose_kernel_has_no_float_path_stays_integer():
    resolver = default_op_resolver().add(IntegerOnlyFC())
    it = MicroInterpreter(model_path("hello_world_int8"), resolver, 1 << 14)
    it.allocate_tensors()
    before = run(it, [np.array([[9]], np.int8)])
    d = FloatDelegate(op_resolver=resolver)
    it.modify_graph_with_delegate(d)
    assert d.claimed == [] and set(d.rejected) == {0, 1, 2}
    assert "no float path" in d.rejected[0]
    assert [op.name for op in it.model.main.operators] == ["FULLY_CONNECTED"] * 3
    assert run(it, [np.array([[9]], np.int8)]).tolist() == before.tolist()


def test_quantize_ops_are_left_to_the_integer_kernels():
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "INT8", quantization=(0.1, 0))
    y = g.add_tensor("y", (1, 4), "INT8", quantization=(0.2, 1))
    g.add_operator("QUANTIZE", [x], [y])
    g.inputs, g.outputs = [x], [y]
    d = FloatDelegate()
    from micro_runtime.delegates.delegate import DelegateContext
    ctx = DelegateContext(load_model(b.build()), [None])
    d.prepare(ctx)
    assert d.claimed == [] and "QUANTIZE converts types" in d.rejected[0]


# ------------------------------------------------------------------ zoo
@zoo_kernels
@pytest.mark.parametrize("name", ["person_detect", "vww_96_int8"])
def test_zoo_models_on_the_float_delegate(name):
    plain = MicroInterpreter(model_path(name), arena_size=1 << 21)
    plain.allocate_tensors()
    acc = MicroInterpreter(model_path(name), arena_size=1 << 21)
    d = FloatDelegate("fp32")
    acc.modify_graph_with_delegate(d)
    assert d.claimed == list(range(len(plain.model.main.operators)))
    image = plain.input(0).nbytes
    assert plain.head_bytes > 2 * image
    assert acc.head_bytes <= image + 32              # only the image and the scores stay
    r32 = measure_drift(model_path(name), "fp32", seeds=3)
    r16 = measure_drift(model_path(name), "fp16", seeds=3, clamp=True)
    for r, bound in ((r32, 8), (r16, 2)):
        out = r.outputs[0]
        assert out.unit == "quantized steps" and out.max_abs_diff <= bound
        assert out.top1_agreement == 1.0


@zoo_kernels
def test_clamp_separates_int8_saturation_from_precision():
    """kws_ref_model's ReLUs let random-noise activations run past the int8 range: the
    integer kernels saturate, the float path does not. Clamping every float op to its
    tensor's int range removes that part of the drift."""
    free = measure_drift(model_path("kws_ref_model"), "fp32", seeds=4)
    clamped = measure_drift(model_path("kws_ref_model"), "fp32", seeds=4, clamp=True)
    assert clamped.clamp and not free.clamp
    assert free.outputs[0].max_abs_diff > 50
    assert clamped.outputs[0].max_abs_diff <= 4 and clamped.outputs[0].top1_agreement == 1.0


def test_clamp_bounds_every_float_output_to_its_int_range():
    model = fc_custom_fc()
    resolver = default_op_resolver().add(Negate())
    it = MicroInterpreter(model, resolver, 1 << 14)
    d = FloatDelegate("fp16", op_resolver=resolver, clamp=True)
    it.modify_graph_with_delegate(d)
    first = it.subgraphs[0].nodes[0]
    nested = first.user_data.interpreter
    it.set_input(np.full((1, 8), 127, np.int8))
    it.invoke()
    h = nested.output(0)                       # layer 1 in float, before quantizing back
    lo, hi = 0.04 * -128, 0.04 * 127
    # clamped, then stored as binary16 (rounding is monotonic: the bounds round alike)
    lo16, hi16 = to_fp16_storage(np.array([lo, hi], np.float32))
    assert h.min() >= lo16 and h.max() <= hi16
    assert np.array_equal(h, to_fp16_storage(h))
    assert np.isclose(np.abs(h).max(), max(-lo, hi), atol=0.01)   # this input saturates
