"""resize_input_tensor (emulator extension) and the shape-inference rules behind it."""
import glob
import os

import numpy as np
import pytest

from kernels.base import BUILTIN_KERNELS, Kernel
from micro_runtime import (ArenaTooSmallError, InputError, Interpreter, InterpreterStateError,
                           MicroInterpreter, default_op_resolver, load_model)
from micro_runtime import schema
from micro_runtime.builtin_options import OpParams
from micro_runtime.model import OperatorSpec
from micro_runtime.tools.model_writer import ModelBuilder
from micro_runtime.shape_inference import RULES, OpShapes, ShapeRuleError, resize_inputs
from micro_runtime.tools.sizing import measure_arena
from tests.helpers import DATA, model_path

ZOO = sorted(glob.glob(os.path.join(DATA, "*.tflite")))


# ------------------------------------------------------------------ the rules
@pytest.mark.parametrize("path", ZOO, ids=[os.path.basename(p) for p in ZOO])
def test_rules_reproduce_every_stored_shape_of_the_zoo(path):
    sg = load_model(path).main
    checked = 0
    for op in sg.operators:
        rule = RULES.get(op.name)
        if rule is None:
            continue
        view = OpShapes(op, [sg.tensors[t].shape if t >= 0 else None for t in op.inputs],
                        [sg.tensors[t].data if t >= 0 else None for t in op.inputs],
                        [sg.tensors[t].shape for t in op.outputs])
        got = [tuple(s) for s in rule(view)]
        assert got == [sg.tensors[t].shape for t in op.outputs], op.describe()
        checked += 1
    assert checked > 0


def op_view(name, shapes, data=None, outputs=((),), **params):
    spec = OperatorSpec(0, 0, schema.BUILTIN_OP_CODES[name], None, 1, tuple(range(len(shapes))),
                        (len(shapes),), (), OpParams("x", params, True, None), None)
    data = data or [None] * len(shapes)
    return OpShapes(spec, [tuple(s) for s in shapes], list(data), [tuple(o) for o in outputs])


@pytest.mark.parametrize("shape,begin,end,strides,masks", [
    ((5, 7, 3), [1, 0, 0], [4, 7, 3], [1, 2, 1], {}),
    ((5, 7, 3), [-1, 6, 0], [0, 0, 3], [-1, -2, 1], {"begin_mask": 1}),
    ((5, 7, 3), [2, 1, 0], [3, 5, 2], [1, 1, 1], {"shrink_axis_mask": 1, "end_mask": 4}),
    ((4, 6), [1, 2], [2, 3], [1, 1], {"offset": True}),
    ((4, 6), [0, -3], [10, 100], [3, 1], {}),
])
def test_strided_slice_rule_matches_numpy(shape, begin, end, strides, masks):
    params = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
              "shrink_axis_mask": 0, "offset": False, **masks}
    view = op_view("STRIDED_SLICE", [shape, (len(begin),)] * 2,
                   [None, np.array(begin), np.array(end), np.array(strides)], **params)
    index = []
    for k in range(len(shape)):
        b = None if (params["begin_mask"] >> k) & 1 else begin[k]
        e = None if (params["end_mask"] >> k) & 1 else end[k]
        if params["offset"]:
            e = b + e
        index.append(b if (params["shrink_axis_mask"] >> k) & 1 else slice(b, e, strides[k]))
    assert RULES["STRIDED_SLICE"](view) == [np.empty(shape)[tuple(index)].shape]


def test_other_rules_against_numpy():
    x = np.empty((2, 3, 4))
    assert RULES["PAD"](op_view("PAD", [(2, 3, 4), (3, 2)], [None, np.array([[0, 1], [2, 0], [1, 1]])])) \
        == [np.pad(x, [[0, 1], [2, 0], [1, 1]]).shape]
    assert RULES["MEAN"](op_view("MEAN", [(2, 3, 4), (2,)], [None, np.array([-1, 0])], keep_dims=True)) \
        == [x.mean(axis=(0, 2), keepdims=True).shape]
    assert RULES["SUM"](op_view("SUM", [(2, 3, 4), (1,)], [None, np.array([1])], keep_dims=False)) \
        == [x.sum(axis=1).shape]
    assert RULES["TRANSPOSE"](op_view("TRANSPOSE", [(2, 3, 4), (3,)], [None, np.array([2, 0, 1])])) \
        == [x.transpose(2, 0, 1).shape]
    assert RULES["CONCATENATION"](op_view("CONCATENATION", [(2, 3, 4), (2, 5, 4)], axis=-2)) == [(2, 8, 4)]
    assert RULES["SQUEEZE"](op_view("SQUEEZE", [(1, 3, 1, 4)], squeeze_dims=())) == [(3, 4)]
    assert RULES["SQUEEZE"](op_view("SQUEEZE", [(1, 3, 1, 4)], squeeze_dims=(2,))) == [(1, 3, 4)]
    assert RULES["EXPAND_DIMS"](op_view("EXPAND_DIMS", [(3, 4), ()], [None, np.array(-1)])) == [(3, 4, 1)]
    assert RULES["ADD"](op_view("ADD", [(2, 1, 4), (3, 1)])) == [np.broadcast_shapes((2, 1, 4), (3, 1))]
    assert RULES["SPLIT_V"](op_view("SPLIT_V", [(6, 4), (3,), ()], [None, np.array([1, -1, 2]), np.array(0)],
                                    outputs=[(), (), ()])) == [(1, 4), (3, 4), (2, 4)]
    assert RULES["FULLY_CONNECTED"](op_view("FULLY_CONNECTED", [(2, 5, 8), (3, 8)], keep_num_dims=True)) \
        == [(2, 5, 3)]
    assert RULES["FULLY_CONNECTED"](op_view("FULLY_CONNECTED", [(2, 5, 8), (3, 8)], keep_num_dims=False)) \
        == [(10, 3)]
    a, b = np.empty((4, 1, 2, 3)), np.empty((5, 6, 2))
    assert RULES["BATCH_MATMUL"](op_view("BATCH_MATMUL", [a.shape, b.shape], adj_x=True, adj_y=True)) \
        == [np.matmul(a.swapaxes(-1, -2), b.swapaxes(-1, -2)).shape]
    with pytest.raises(ShapeRuleError, match="do not broadcast"):
        RULES["MUL"](op_view("MUL", [(2, 3), (4,)]))
    with pytest.raises(ShapeRuleError, match="not a multiple of the weights' depth 8"):
        RULES["FULLY_CONNECTED"](op_view("FULLY_CONNECTED", [(1, 12), (3, 8)]))


def test_space_batch_gather_and_lookup_rules():
    blocks, pairs = np.array([2, 2]), np.array([[1, 0], [0, 2]])
    assert RULES["BATCH_TO_SPACE_ND"](op_view("BATCH_TO_SPACE_ND", [(8, 2, 3, 5), (2,), (2, 2)],
                                              [None, blocks, pairs])) == [(2, 3, 4, 5)]
    assert RULES["SPACE_TO_BATCH_ND"](op_view("SPACE_TO_BATCH_ND", [(2, 3, 4, 5), (2,), (2, 2)],
                                              [None, blocks, pairs])) == [(8, 2, 3, 5)]
    assert RULES["SPACE_TO_BATCH_ND"](op_view("SPACE_TO_BATCH_ND", [(2, 5, 3), (1,), (1, 2)],
                                              [None, np.array([3]), np.array([[0, 1]])])) == [(6, 2, 3)]
    with pytest.raises(ShapeRuleError, match="not a positive multiple of block 2"):
        RULES["SPACE_TO_BATCH_ND"](op_view("SPACE_TO_BATCH_ND", [(1, 3, 4, 5), (2,), (2, 2)],
                                           [None, blocks, np.zeros((2, 2))]))
    with pytest.raises(ShapeRuleError, match="computed at run time"):
        RULES["BATCH_TO_SPACE_ND"](op_view("BATCH_TO_SPACE_ND", [(8, 2, 3, 5), (2,), (2, 2)]))
    assert RULES["EMBEDDING_LOOKUP"](op_view("EMBEDDING_LOOKUP", [(7,), (10, 3, 2)])) == [(7, 3, 2)]
    assert RULES["GATHER_ND"](op_view("GATHER_ND", [(3, 4, 5), (2, 6, 2)])) == [(2, 6, 5)]
    assert RULES["DYNAMIC_UPDATE_SLICE"](op_view("DYNAMIC_UPDATE_SLICE", [(4, 5), (2, 2), (2,)])) == [(4, 5)]
    assert RULES["REVERSE_V2"](op_view("REVERSE_V2", [(4, 5), (1,)])) == [(4, 5)]
    assert RULES["L2_POOL_2D"](op_view("L2_POOL_2D", [(1, 7, 6, 3)], padding=0, stride_h=3, stride_w=3,
                                       filter_height=3, filter_width=2)) == [(1, 3, 2, 3)]


def test_reshape_rule_minus_one_and_constant_batch():
    assert RULES["RESHAPE"](op_view("RESHAPE", [(4, 1, 1, 256), (2,)], [None, np.array([-1, 256])])) \
        == [(4, 256)]
    with pytest.raises(ShapeRuleError, match=r"constant \[1, 2\].*cannot follow a resized batch"):
        RULES["RESHAPE"](op_view("RESHAPE", [(4, 1, 1, 2), (2,)], [None, np.array([1, 2])]))
    with pytest.raises(ShapeRuleError, match="computed at run time"):
        RULES["RESHAPE"](op_view("RESHAPE", [(4, 2), (2,)], [None, None]))


def test_model_level_inference_on_zoo_graphs():
    original = load_model(model_path("vww_96_int8"))
    vww = resize_inputs(original, {0: (3, 128, 128, 3)})
    out = vww.main.tensors[vww.main.outputs[0]]
    assert out.shape == (3, 2)
    assert original.main.tensors[original.main.outputs[0]].shape == (1, 2)   # not modified
    # conv / depthwise / pool shapes all carried through; constants untouched
    for a, b in zip(original.main.tensors, vww.main.tensors):
        if a.data is not None:
            assert a.shape == b.shape and a.data is b.data
    # person_detect's RESHAPE has the constant shape [1, 2]: a batch cannot pass it
    with pytest.raises(InputError, match=r"operator #29 \(RESHAPE\).*constant \[1, 2\]"):
        resize_inputs(load_model(model_path("person_detect")), {0: (2, 96, 96, 1)})
    # ...but a larger image can (the pooled map is still 1x1)
    pd = resize_inputs(load_model(model_path("person_detect")), {0: (1, 128, 128, 1)})
    assert pd.main.tensors[pd.main.outputs[0]].shape == (1, 2)
    # an op without a rule fails only when a new shape reaches it, and is named
    with pytest.raises(InputError, match=r"operator #\d+ \(SVDF\) has no shape-inference rule"):
        resize_inputs(load_model(model_path("keyword_scrambled_8bit")), {0: (2, 96)})
    with pytest.raises(InputError, match="too small|smaller than the window"):
        resize_inputs(load_model(model_path("vww_96_int8")), {0: (1, 8, 8, 3)})


# ------------------------------------------------------------ interpreters
def conv_net(n, h, w, shapes) -> bytes:
    """An int8 CONV_2D -> DEPTHWISE_CONV_2D -> AVERAGE_POOL_2D -> FULLY_CONNECTED net, with
    the tensor shapes given (so a resized model can be compared with one built directly)."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("image", (n, h, w, 2), "INT8", quantization=(0.05, -3))
    cw = g.add_tensor("cw", (4, 3, 3, 2), "INT8", data=rng.integers(-90, 90, (4, 3, 3, 2)), quantization=(0.02, 0))
    cb = g.add_tensor("cb", (4,), "INT32", data=rng.integers(-500, 500, 4), quantization=(0.001, 0))
    c = g.add_tensor("conv", shapes[0], "INT8", quantization=(0.08, 2))
    dw = g.add_tensor("dw", (1, 3, 3, 4), "INT8", data=rng.integers(-90, 90, (1, 3, 3, 4)), quantization=(0.03, 0))
    db = g.add_tensor("db", (4,), "INT32", data=rng.integers(-500, 500, 4), quantization=(0.0024, 0))
    d = g.add_tensor("dwout", shapes[1], "INT8", quantization=(0.1, -1))
    p = g.add_tensor("pool", shapes[2], "INT8", quantization=(0.1, -1))
    fw = g.add_tensor("fw", (3, 4), "INT8", data=rng.integers(-90, 90, (3, 4)), quantization=(0.04, 0))
    y = g.add_tensor("scores", shapes[3], "INT8", quantization=(0.2, 0))
    g.add_operator("CONV_2D", [x, cw, cb], [c], padding=0, stride_w=2, stride_h=2,
                   dilation_w_factor=1, dilation_h_factor=1, fused_activation_function=1)
    g.add_operator("DEPTHWISE_CONV_2D", [c, dw, db], [d], padding=1, stride_w=1, stride_h=1,
                   depth_multiplier=1, dilation_w_factor=1, dilation_h_factor=1, fused_activation_function=0)
    g.add_operator("AVERAGE_POOL_2D", [d], [p], padding=1, stride_w=2, stride_h=2, filter_width=2,
                   filter_height=2, fused_activation_function=0)
    g.add_operator("FULLY_CONNECTED", [p, fw, -1], [y], fused_activation_function=0)
    g.inputs, g.outputs = [x], [y]
    return b.build()


# shapes worked out by hand: SAME 3x3/2, VALID 3x3/1, VALID pool 2x2/2, FC depth 4
SMALL = conv_net(1, 8, 8, [(1, 4, 4, 4), (1, 2, 2, 4), (1, 1, 1, 4), (1, 3)])
LARGE = conv_net(2, 12, 12, [(2, 6, 6, 4), (2, 4, 4, 4), (2, 2, 2, 4), (8, 3)])


def needs(*ops):
    missing = [op for op in ops if op not in BUILTIN_KERNELS]
    return pytest.mark.skipif(bool(missing), reason=f"kernels not written yet: {missing}")


@needs("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "FULLY_CONNECTED")
def test_resized_model_equals_the_model_built_at_that_size():
    it = Interpreter.from_bytes(SMALL, arena_size=1 << 16)
    needed = it.resize_input_tensor(0, (2, 12, 12, 2))
    assert it.get_input_details(0)["shape"].tolist() == [2, 12, 12, 2]
    assert it.get_output_details(0)["shape"].tolist() == [8, 3]
    direct = Interpreter.from_bytes(LARGE, arena_size=1 << 16)
    assert needed == measure_arena(LARGE, "host64").min_arena_bytes
    assert needed == direct.micro_interpreter.min_arena_bytes()
    x = np.random.default_rng(1).integers(-128, 128, (2, 12, 12, 2), dtype=np.int8)
    for interp in (it, direct):
        interp.set_input(x, 0)
        interp.invoke()
    assert it.get_output(0).tobytes() == direct.get_output(0).tobytes()
    # the resized plan really is used: tensor details show the new shapes and sizes
    details = {d["name"]: d for d in it.get_tensor_details()}
    assert details["conv"]["shape"].tolist() == [2, 6, 6, 4] and details["conv"]["bytes"] == 288


def test_batch_resize_runs_each_sample_like_batch_one():
    single = Interpreter.from_file(model_path("hello_world_int8"), arena_size=1 << 14)
    batched = Interpreter.from_file(model_path("hello_world_int8"), arena_size=1 << 14)
    needed = batched.resize_input_tensor(0, [5, 1])
    assert needed == batched.micro_interpreter.min_arena_bytes()
    xs = np.array([[-128], [-20], [0], [77], [127]], np.int8)
    batched.set_input(xs, 0)
    batched.invoke()
    got = batched.get_output(0)
    assert got.shape == (5, 1)
    for k in range(5):
        single.set_input(xs[k:k + 1], 0)
        single.invoke()
        assert single.get_output(0).tolist() == got[k:k + 1].tolist()
    with pytest.raises(InputError, match=r"expected shape \(5, 1\)"):
        batched.set_input(xs[:1], 0)


def test_resize_that_does_not_fit_keeps_the_old_shapes():
    messages = []
    it = Interpreter.from_file(model_path("hello_world_int8"), arena_size=4000, error_reporter=messages.append)
    it.set_input(np.array([[40]], np.int8), 0)
    it.invoke()
    before = it.get_output(0).copy()
    with pytest.raises(ArenaTooSmallError) as info:
        it.resize_input_tensor(0, (2000, 1))
    err = info.value
    big = resize_inputs(load_model(model_path("hello_world_int8")), {0: (2000, 1)})
    assert err.min_arena_bytes == measure_arena(big, "host64").min_arena_bytes > 4000
    assert err.available == 4000 and err.missing == err.min_arena_bytes - 4000
    assert messages and "does not fit" in messages[-1]
    assert it.get_input_details(0)["shape"].tolist() == [1, 1]
    it.set_input(np.array([[40]], np.int8), 0)
    it.invoke()
    assert it.get_output(0).tolist() == before.tolist()


def test_micro_interpreter_resize_needs_a_new_allocation():
    it = MicroInterpreter(model_path("hello_world_int8"), arena_size=1 << 14)
    it.allocate_tensors()
    needed = it.resize_input_tensor(0, (3, 1))
    with pytest.raises(InterpreterStateError, match="allocate_tensors"):
        it.input(0)                  # the old tensors are gone until the new allocation
    it.invoke()                      # allocates the new shapes, as TFLM's Invoke() does
    assert it.input(0).shape == (3, 1) and it.output(0).shape == (3, 1)
    assert it.min_arena_bytes() == needed


class Passthrough(Kernel):
    custom_name = "PASS"

    def invoke(self, ctx, node):
        node.output_arrays[0][...] = node.input_arrays[0]


def test_bad_requests_are_input_errors():
    it = Interpreter.from_file(model_path("hello_world_int8"), arena_size=1 << 14)
    for shape in [(0, 1), (-1, 1), "ab", (1.5, 1), None]:
        with pytest.raises(InputError):
            it.resize_input_tensor(0, shape)
    with pytest.raises(InputError, match="out of range"):
        it.resize_input_tensor(1, (1, 1))
    it.invoke()                                    # still usable
    ad01 = Interpreter.from_file(model_path("ad01_int8"), arena_size=1 << 16)
    with pytest.raises(InputError, match=r"operator #0 \(FULLY_CONNECTED\).*not a multiple of the weights' depth 640"):
        ad01.resize_input_tensor(0, (1, 641))
    ad01.invoke()
    b = ModelBuilder()
    g = b.subgraph()
    x = g.add_tensor("x", (1, 4), "FLOAT32")
    y = g.add_tensor("y", (1, 4), "FLOAT32")
    g.add_operator("PASS", [x], [y], custom_options=b"")
    g.inputs, g.outputs = [x], [y]
    custom = MicroInterpreter(b.build(), default_op_resolver().add(Passthrough()), 1 << 14)
    with pytest.raises(InputError, match=r"operator #0 \(PASS\) has no shape-inference rule"):
        custom.resize_input_tensor(0, (2, 4))


def test_resize_after_a_delegate_is_refused():
    from micro_runtime.delegates.float_delegate import FloatDelegate
    it = MicroInterpreter(model_path("hello_world_float"), arena_size=1 << 14)
    it.modify_graph_with_delegate(FloatDelegate())
    with pytest.raises(InterpreterStateError, match="resize first"):
        it.resize_input_tensor(0, (2, 1))


@pytest.mark.oracle
@needs("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "SOFTMAX")
def test_resized_person_detect_matches_tflm_on_a_model_written_at_that_size(oracle):
    """TFLM cannot resize, but it can run person_detect written out at 128x128: the
    emulator's resize must give TFLM's outputs, allocation report and exact arena."""
    import io
    model = load_model(model_path("person_detect"))
    resized = resize_inputs(model, {0: (1, 128, 128, 1)})
    mb = ModelBuilder.from_model(model)
    for t, spec in zip(mb.subgraphs[0].tensors, resized.main.tensors):
        t.shape, t.shape_signature = tuple(spec.shape), None
    written = mb.build()
    it = Interpreter.from_file(model_path("person_detect"), arena_size=200_000)
    needed = it.resize_input_tensor(0, (1, 128, 128, 1))
    x = np.random.default_rng(3).integers(-128, 128, (1, 128, 128, 1), dtype=np.int8)
    it.set_input(x, 0)
    it.invoke()
    theirs = oracle.run(written, [x], arena_size=needed)
    assert theirs.ok, theirs.error
    assert it.get_output(0).tobytes() == theirs.outputs[0].tobytes()
    buf = io.StringIO()
    it.micro_interpreter.print_allocations(buf)
    assert buf.getvalue().splitlines() == theirs.lines
    assert not oracle.fits(written, needed - 1, [x])      # the reported arena is the minimum
