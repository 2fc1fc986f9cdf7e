"""Converter-style graphs built from the data-movement / matmul ops, checked against TFLM:
outputs bit for bit, allocation report lines, arena sizes.

* a 2-head self-attention block as the TFLite converter writes Keras' MultiHeadAttention
  (FULLY_CONNECTED -> RESHAPE -> TRANSPOSE -> BATCH_MATMUL(adj_y) -> SOFTMAX ->
  BATCH_MATMUL -> TRANSPOSE -> RESHAPE -> FULLY_CONNECTED), int8 and float32;
* an int8 upsampling head: reflect MIRROR_PAD + VALID conv, a dilated conv the way the
  converter lowers it (SPACE_TO_BATCH_ND -> CONV_2D -> BATCH_TO_SPACE_ND), a pixel shuffle
  (DEPTH_TO_SPACE) and RESIZE_BILINEAR (half-pixel centres), then SPACE_TO_DEPTH;
* a float32 head: SYMMETRIC MIRROR_PAD -> L2_POOL_2D -> RESIZE_BILINEAR (align corners);
* a token pipeline: EMBEDDING_LOOKUP -> REVERSE_V2 -> DYNAMIC_UPDATE_SLICE (run-time
  position) -> GATHER_ND.
"""
import numpy as np
import pytest

from micro_runtime import Interpreter
from micro_runtime.tools.model_writer import ModelBuilder
from tests.data_movement_helpers import assert_same_arena_fits
from tests.helpers import compare_with_tflm
from tests.oracle import Oracle

pytestmark = pytest.mark.oracle


def _weights(g, rng, name, shape, scale):
    return g.add_tensor(name, shape, "INT8", data=rng.integers(-127, 128, shape), quantization=(scale, 0))


def _bias(g, rng, name, n, scale):
    return g.add_tensor(name, (n,), "INT32", data=rng.integers(-2000, 2000, n), quantization=(scale, 0))


def attention_block(dtype: str, tokens: int = 8, width: int = 16, heads: int = 2) -> bytes:
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    g = b.subgraph("attention")
    quant = dtype == "INT8"
    head = width // heads

    def q(scale, zp=0):
        return (scale, zp) if quant else None

    def dense(name, x, x_scale, out_scale):
        if quant:
            w = _weights(g, rng, name + "/w", (width, width), 0.02)
            bias = _bias(g, rng, name + "/b", width, x_scale * 0.02)
        else:
            w = g.add_tensor(name + "/w", (width, width), "FLOAT32",
                             data=rng.uniform(-0.3, 0.3, (width, width)).astype(np.float32))
            bias = g.add_tensor(name + "/b", (width,), "FLOAT32", data=rng.uniform(-0.1, 0.1, width).astype(np.float32))
        y = g.add_tensor(name, (1, tokens, width), dtype, quantization=q(out_scale))
        g.add_operator("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function=0, keep_num_dims=True)
        return y

    def split_heads(name, x, scale):
        r = g.add_tensor(name + "/reshape", (1, tokens, heads, head), dtype, quantization=q(scale))
        shape = g.add_tensor(name + "/shape", (4,), "INT32", data=np.array([1, tokens, heads, head], np.int32))
        g.add_operator("RESHAPE", [x, shape], [r])
        t = g.add_tensor(name + "/heads", (1, heads, tokens, head), dtype, quantization=q(scale))
        perm = g.add_tensor(name + "/perm", (4,), "INT32", data=np.array([0, 2, 1, 3], np.int32))
        g.add_operator("TRANSPOSE", [r, perm], [t])
        return t

    x = g.add_tensor("x", (1, tokens, width), dtype, quantization=q(0.05))
    qh = split_heads("q", dense("q", x, 0.05, 0.1), 0.1)
    kh = split_heads("k", dense("k", x, 0.05, 0.1), 0.1)
    vh = split_heads("v", dense("v", x, 0.05, 0.1), 0.1)
    scores = g.add_tensor("scores", (1, heads, tokens, tokens), dtype, quantization=q(0.25, 3))
    g.add_operator("BATCH_MATMUL", [qh, kh], [scores], adj_x=False, adj_y=True)
    probs = g.add_tensor("probs", (1, heads, tokens, tokens), dtype, quantization=q(1 / 256, -128))
    g.add_operator("SOFTMAX", [scores], [probs], beta=0.35)
    ctx = g.add_tensor("context", (1, heads, tokens, head), dtype, quantization=q(0.1, -2))
    g.add_operator("BATCH_MATMUL", [probs, vh], [ctx], adj_x=False, adj_y=False)
    merged_t = g.add_tensor("context/t", (1, tokens, heads, head), dtype, quantization=q(0.1, -2))
    perm = g.add_tensor("context/perm", (4,), "INT32", data=np.array([0, 2, 1, 3], np.int32))
    g.add_operator("TRANSPOSE", [ctx, perm], [merged_t])
    merged = g.add_tensor("context/merged", (1, tokens, width), dtype, quantization=q(0.1, -2))
    shape = g.add_tensor("context/shape", (3,), "INT32", data=np.array([1, tokens, width], np.int32))
    g.add_operator("RESHAPE", [merged_t, shape], [merged])
    out = dense("out", merged, 0.1, 0.2)
    g.inputs, g.outputs = [x], [out]
    return b.build()


@pytest.mark.parametrize("dtype", ["INT8", "FLOAT32"])
def test_attention_block_matches_tflm(oracle, dtype):
    model = attention_block(dtype)
    rng = np.random.default_rng(17)
    for seed in range(3):
        x = (rng.integers(-128, 128, (1, 8, 16), dtype=np.int8) if dtype == "INT8"
             else rng.uniform(-3, 3, (1, 8, 16)).astype(np.float32))
        compare_with_tflm(oracle, model, [x], context=f"attention {dtype} seed {seed}")
    assert_same_arena_fits(oracle, model, [x])


def upsampling_head(tf_padding: bool = False) -> bytes:
    """int8 1x12x12x3 image -> 1x48x48x2 map, then back to 1x24x24x8 by SPACE_TO_DEPTH.
    The dilated conv: SPACE_TO_BATCH_ND without padding and a SAME conv, or (tf_padding)
    TensorFlow's lowering: paddings of 2 and a VALID conv."""
    rng = np.random.default_rng(9)
    b = ModelBuilder()
    g = b.subgraph("upsampling")
    x = g.add_tensor("image", (1, 12, 12, 3), "INT8", quantization=(0.02, -10))
    pads = g.add_tensor("pads", (4, 2), "INT32", data=np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
    padded = g.add_tensor("padded", (1, 14, 14, 3), "INT8", quantization=(0.02, -10))
    g.add_operator("MIRROR_PAD", [x, pads], [padded], mode=0)
    conv = g.add_tensor("conv", (1, 12, 12, 8), "INT8", quantization=(0.05, -128))
    g.add_operator("CONV_2D", [padded, _weights(g, rng, "conv/w", (8, 3, 3, 3), 0.01), _bias(g, rng, "conv/b", 8, 0.0002)],
                   [conv], padding=1, stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1,
                   fused_activation_function=1)
    block = g.add_tensor("block", (2,), "INT32", data=np.array([2, 2], np.int32))
    pad = 2 if tf_padding else 0
    s2b_pads = g.add_tensor("s2b/pads", (2, 2), "INT32", data=np.full((2, 2), pad, np.int32))
    s2b = g.add_tensor("s2b", (4, 6 + pad, 6 + pad, 8), "INT8", quantization=(0.05, -128))
    g.add_operator("SPACE_TO_BATCH_ND", [conv, block, s2b_pads], [s2b])
    dil = g.add_tensor("dilated", (4, 6, 6, 8), "INT8", quantization=(0.08, 5))
    g.add_operator("CONV_2D", [s2b, _weights(g, rng, "dil/w", (8, 3, 3, 8), 0.01), _bias(g, rng, "dil/b", 8, 0.0005)],
                   [dil], padding=1 if tf_padding else 0, stride_w=1, stride_h=1, dilation_w_factor=1,
                   dilation_h_factor=1, fused_activation_function=0)
    crops = g.add_tensor("b2s/crops", (2, 2), "INT32", data=np.zeros((2, 2), np.int32))
    b2s = g.add_tensor("b2s", (1, 12, 12, 8), "INT8", quantization=(0.08, 5))
    g.add_operator("BATCH_TO_SPACE_ND", [dil, block, crops], [b2s])
    shuffled = g.add_tensor("shuffled", (1, 24, 24, 2), "INT8", quantization=(0.08, 5))
    g.add_operator("DEPTH_TO_SPACE", [b2s], [shuffled], block_size=2)
    size = g.add_tensor("size", (2,), "INT32", data=np.array([48, 48], np.int32))
    up = g.add_tensor("upsampled", (1, 48, 48, 2), "INT8", quantization=(0.08, 5))
    g.add_operator("RESIZE_BILINEAR", [shuffled, size], [up], align_corners=False, half_pixel_centers=True)
    packed = g.add_tensor("packed", (1, 24, 24, 8), "INT8", quantization=(0.08, 5))
    g.add_operator("SPACE_TO_DEPTH", [up], [packed], block_size=2)
    g.inputs, g.outputs = [x], [up, packed]
    return b.build()


def test_upsampling_head_matches_tflm(oracle):
    """SPACE_TO_BATCH_ND without padding: TFLM's padding bytes (never initialised, see
    test_op_space_to_batch_nd) do not enter."""
    model = upsampling_head()
    rng = np.random.default_rng(3)
    for seed in range(2):
        x = rng.integers(-128, 128, (1, 12, 12, 3), dtype=np.int8)
        compare_with_tflm(oracle, model, [x], context=f"upsampling head seed {seed}")
    assert_same_arena_fits(oracle, model, [x])


def test_upsampling_head_with_tf_padding_in_a_fresh_tflm():
    """TensorFlow's dilated-conv lowering pads in SPACE_TO_BATCH_ND: TFLM fills the padding
    from its arena, which is zero only in a fresh one (a fresh TFLM process here)."""
    model = upsampling_head(tf_padding=True)
    x = np.random.default_rng(13).integers(-128, 128, (1, 12, 12, 3), dtype=np.int8)
    fresh = Oracle()
    try:
        compare_with_tflm(fresh, model, [x], context="upsampling head, TF padding")
    finally:
        fresh.close()


def float_head() -> bytes:
    b = ModelBuilder()
    g = b.subgraph("float head")
    x = g.add_tensor("x", (2, 9, 7, 4), "FLOAT32")
    pads = g.add_tensor("pads", (4, 2), "INT64", data=np.array([[0, 0], [2, 1], [0, 3], [0, 0]], np.int64))
    padded = g.add_tensor("padded", (2, 12, 10, 4), "FLOAT32")
    g.add_operator("MIRROR_PAD", [x, pads], [padded], mode=1)
    pooled = g.add_tensor("pooled", (2, 6, 5, 4), "FLOAT32")
    g.add_operator("L2_POOL_2D", [padded], [pooled], padding=0, stride_h=2, stride_w=2, filter_height=3,
                   filter_width=3, fused_activation_function=3)
    size = g.add_tensor("size", (2,), "INT32", data=np.array([17, 13], np.int32))
    up = g.add_tensor("up", (2, 17, 13, 4), "FLOAT32")
    g.add_operator("RESIZE_BILINEAR", [pooled, size], [up], align_corners=True, half_pixel_centers=False)
    g.inputs, g.outputs = [x], [up]
    return b.build()


def test_float_head_matches_tflm(oracle):
    model = float_head()
    x = np.random.default_rng(4).uniform(-4, 4, (2, 9, 7, 4)).astype(np.float32)
    compare_with_tflm(oracle, model, [x], context="float head")
    assert_same_arena_fits(oracle, model, [x])


def token_pipeline() -> bytes:
    rng = np.random.default_rng(6)
    b = ModelBuilder()
    g = b.subgraph("tokens")
    ids = g.add_tensor("ids", (5,), "INT32")
    table = g.add_tensor("table", (50, 6), "INT8", data=rng.integers(-128, 128, (50, 6)), quantization=(0.1, -4))
    emb = g.add_tensor("embedded", (5, 6), "INT8", quantization=(0.1, -4))
    g.add_operator("EMBEDDING_LOOKUP", [ids, table], [emb])
    axis = g.add_tensor("axis", (1,), "INT32", data=np.array([0], np.int32))
    rev = g.add_tensor("reversed", (5, 6), "INT8", quantization=(0.1, -4))
    g.add_operator("REVERSE_V2", [emb, axis], [rev])
    cache = g.add_tensor("cache", (12, 6), "INT8", data=rng.integers(-128, 128, (12, 6)), quantization=(0.1, -4))
    position = g.add_tensor("position", (2,), "INT64")
    updated = g.add_tensor("updated", (12, 6), "INT8", quantization=(0.1, -4))
    g.add_operator("DYNAMIC_UPDATE_SLICE", [cache, rev, position], [updated])
    pick = g.add_tensor("pick", (3, 2), "INT32", data=np.array([[0, 0], [11, 0], [4, 6]], np.int32))
    picked = g.add_tensor("picked", (3,), "INT8", quantization=(0.1, -4))
    g.add_operator("GATHER_ND", [updated, pick], [picked])
    g.inputs, g.outputs = [ids, position], [updated, picked]
    return b.build()


def test_token_pipeline_matches_tflm(oracle):
    model = token_pipeline()
    ids = np.array([3, 49, 0, 7, 7], np.int32)
    for start in ([0, 0], [4, 0], [9, 3], [-5, 1]):
        compare_with_tflm(oracle, model, [ids, np.array(start, np.int64)], context=f"tokens at {start}")
    assert_same_arena_fits(oracle, model, [ids, np.array([4, 0], np.int64)])


def test_resized_upsampling_head_runs_like_tflm_at_the_new_size(oracle):
    """resize_input_tensor carries a new batch through MIRROR_PAD, SPACE_TO_BATCH_ND,
    BATCH_TO_SPACE_ND, DEPTH_TO_SPACE, RESIZE_BILINEAR and SPACE_TO_DEPTH; the resized
    model gives what TFLM gives on the same model written at that size."""
    it = Interpreter.from_bytes(upsampling_head(), arena_size=1 << 18)
    it.resize_input_tensor(0, (3, 12, 12, 3))
    assert it.get_output_details(0)["shape"].tolist() == [3, 48, 48, 2]
    assert it.get_output_details(1)["shape"].tolist() == [3, 24, 24, 8]
    from micro_runtime.tools.model_writer import ModelBuilder as Writer
    written = Writer.from_model(it.micro_interpreter.model).build()
    x = np.random.default_rng(8).integers(-128, 128, (3, 12, 12, 3), dtype=np.int8)
    ours, _ = compare_with_tflm(oracle, written, [x], context="resized upsampling head")
    it.set_input(x, 0)
    it.invoke()
    assert it.get_output(0).tobytes() == ours[0].tobytes()


@pytest.mark.parametrize("build", [lambda: attention_block("INT8"), upsampling_head, float_head, token_pipeline],
                         ids=["attention", "upsampling", "float head", "tokens"])
def test_graphs_on_mcu32_compute_as_on_host64(build):
    """The 32-bit target changes struct sizes, never values: same outputs, smaller arena."""
    from micro_runtime import load_model
    from tests.helpers import run_ours
    raw = build()
    rng = np.random.default_rng(1)
    inputs = []
    main = load_model(raw).main
    for t in main.inputs:
        spec = main.tensors[t]
        if spec.dtype == np.float32:
            inputs.append(rng.uniform(-2, 2, spec.shape).astype(np.float32))
        elif spec.dtype == np.int8:
            inputs.append(rng.integers(-128, 128, spec.shape).astype(np.int8))
        else:                                   # ids and positions
            inputs.append(rng.integers(0, 5, spec.shape).astype(spec.dtype))
    host, _, host_it = run_ours(raw, inputs, target="host64")
    mcu, _, mcu_it = run_ours(raw, inputs, target="mcu32")
    assert all(a.tobytes() == b.tobytes() for a, b in zip(host, mcu))
    assert mcu_it.min_arena_bytes() < host_it.min_arena_bytes()
