"""DETECTION_POSTPROCESS (custom TFLite_Detection_PostProcess) against TFLM: box
decoding and NMS (regular per-class and fast class-agnostic), background class or not,
ties in scores, duplicate boxes, thresholds that keep all or none, several classes per
detection; a small int8 SSD graph (feature extractor, box and class heads, anchors) with
both NMS paths; TFLM's errors."""
import flatbuffers.flexbuffers as flex
import numpy as np
import pytest
from hypothesis import given, strategies as st

from micro_runtime import MicroInterpreter
from micro_runtime.errors import KernelError
from micro_runtime.tools.model_writer import ModelBuilder
from tests.helpers import TensorDef, run_ours, single_op_model

pytestmark = pytest.mark.oracle

OP = "TFLite_Detection_PostProcess"


def options(**values) -> bytes:
    return flex.Dumps(values)


def ssd_anchors(rng, n: int) -> np.ndarray:
    """(y, x, h, w) anchors: centres in the unit square, positive sizes."""
    return np.stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.uniform(0.05, 0.6, n),
                     rng.uniform(0.05, 0.6, n)], axis=1).astype(np.float32)


def written_rows(regular: bool, count: int, per_anchor: int, max_detections: int):
    """The output rows TFLM writes (the others keep what the arena held)."""
    if regular:
        return list(range(max_detections))
    return [per_anchor * k + k % per_anchor for k in range(count)]


def assert_detections_equal(ours, theirs, regular: bool, per_anchor: int, max_detections: int,
                            context: str = ""):
    assert ours[3].tobytes() == theirs[3].tobytes(), f"{context}: number of detections"
    rows = written_rows(regular, int(theirs[3].reshape(-1)[0]), per_anchor, max_detections)
    for k, (a, b) in enumerate(zip(ours[:3], theirs[:3])):
        a = a.reshape(a.shape[1], -1)[rows]
        b = b.reshape(b.shape[1], -1)[rows]
        assert a.tobytes() == b.tobytes(), f"{context}: output {k}\nours {a}\nTFLM {b}"


@st.composite
def detection_case(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    regular = draw(st.booleans())
    # regular NMS with a single box or max_detections 1 can overflow TFLM's work buffers
    # (refused here: see test_regular_nms_buffer_overflow_is_refused)
    n = draw(st.integers(2 if regular else 1, 64))
    classes = draw(st.integers(1, 6))
    background = draw(st.integers(0, 1))
    max_det = draw(st.integers(2 if regular else 1, 10))
    per_anchor = 1 if regular else draw(st.integers(1, 3))
    opts = dict(max_detections=max_det, max_classes_per_detection=per_anchor,
                use_regular_nms=regular, num_classes=classes,
                nms_score_threshold=draw(st.sampled_from([-1.0, 0.0, 0.2, 0.5, 0.9, 2.0])),
                nms_iou_threshold=draw(st.sampled_from([0.01, 0.3, 0.5, 0.6, 1.0])),
                y_scale=draw(st.sampled_from([10.0, 1.0, 5.0])),
                x_scale=draw(st.sampled_from([10.0, 1.0, 5.0])),
                h_scale=draw(st.sampled_from([5.0, 1.0, 2.5])),
                w_scale=draw(st.sampled_from([5.0, 1.0, 2.5])))
    if draw(st.booleans()):
        opts["detections_per_class"] = draw(st.integers(1, 8))
    anchors = ssd_anchors(rng, n)
    boxes = (rng.normal(size=(1, n, 4)) * draw(st.sampled_from([0.1, 1.0]))).astype(np.float32)
    scores = rng.uniform(0, 1, size=(1, n, classes + background)).astype(np.float32)
    if draw(st.booleans()):            # ties: scores from a few values
        scores = rng.choice(np.float32([0.1, 0.5, 0.7, 0.9]), size=scores.shape).astype(np.float32)
    if n > 1 and draw(st.booleans()):  # duplicate boxes (IoU 1)
        anchors[1] = anchors[0]
        boxes[0, 1] = boxes[0, 0]
    rows = max_det * per_anchor * per_anchor
    model = single_op_model(
        OP, [TensorDef((1, n, 4), "FLOAT32"), TensorDef((1, n, classes + background), "FLOAT32"),
             TensorDef((n, 4), "FLOAT32", data=anchors)],
        [TensorDef((1, rows, 4), "FLOAT32"), TensorDef((1, rows), "FLOAT32"),
         TensorDef((1, rows), "FLOAT32"), TensorDef((1,), "FLOAT32")],
        custom_options=options(**opts))
    # TFLM writes min(max_classes_per_detection, num_classes) rows per kept anchor
    return model, [boxes, scores], regular, min(per_anchor, classes), max_det, str(opts)


@given(detection_case())
def test_detection_postprocess_matches_tflm(oracle, case):
    model, inputs, regular, per_anchor, max_det, context = case
    theirs = oracle.run(model, inputs)
    assert theirs.ok, f"{context}: TFLM failed: {theirs.error}"
    ours, lines, _ = run_ours(model, inputs)
    assert_detections_equal(ours, theirs.outputs, regular, per_anchor, max_det, context)
    assert lines == theirs.lines


# ---------------------------------------------------------------- an SSD graph
def ssd_model(regular: bool, anchors_per_cell: int = 3, classes: int = 4, seed: int = 0) -> bytes:
    """int8 image -> CONV (features) -> box head and class head (1x1 CONVs) -> RESHAPE
    -> DEQUANTIZE (-> LOGISTIC for scores) -> DETECTION_POSTPROCESS with SSD anchors
    (a 4x4 grid, ``anchors_per_cell`` aspect ratios), background class included."""
    rng = np.random.default_rng(seed)
    a, c = anchors_per_cell, classes + 1
    n = 16 * a
    mb = ModelBuilder()
    g = mb.subgraph()
    image = g.add_tensor("image", (1, 8, 8, 3), "INT8", quantization=(0.02, -5))
    w1 = g.add_tensor("features/w", (8, 3, 3, 3), "INT8", quantization=(0.01, 0),
                      data=rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8))
    b1 = g.add_tensor("features/b", (8,), "INT32", quantization=(0.0002, 0),
                      data=rng.integers(-500, 500, 8).astype(np.int32))
    feat = g.add_tensor("features", (1, 4, 4, 8), "INT8", quantization=(0.05, -128))
    g.add_operator("CONV_2D", [image, w1, b1], [feat], padding=0, stride_w=2, stride_h=2,
                   fused_activation_function=1)
    heads = []
    for name, depth, scale in (("boxes", 4 * a, 0.04), ("classes", c * a, 0.08)):
        w = g.add_tensor(f"{name}/w", (depth, 1, 1, 8), "INT8", quantization=(0.01, 0),
                         data=rng.integers(-127, 128, (depth, 1, 1, 8)).astype(np.int8))
        b = g.add_tensor(f"{name}/b", (depth,), "INT32", quantization=(0.0005, 0),
                         data=rng.integers(-2000, 2000, depth).astype(np.int32))
        y = g.add_tensor(f"{name}/conv", (1, 4, 4, depth), "INT8", quantization=(scale, 0))
        g.add_operator("CONV_2D", [feat, w, b], [y], padding=0, stride_w=1, stride_h=1)
        r = g.add_tensor(f"{name}/reshape", (1, n, depth // a), "INT8", quantization=(scale, 0))
        g.add_operator("RESHAPE", [y], [r], new_shape=[1, n, depth // a])
        f = g.add_tensor(f"{name}/float", (1, n, depth // a), "FLOAT32")
        g.add_operator("DEQUANTIZE", [r], [f])
        heads.append(f)
    scores = g.add_tensor("scores", (1, n, c), "FLOAT32")
    g.add_operator("LOGISTIC", [heads[1]], [scores])
    cy, cx = np.meshgrid((np.arange(4) + 0.5) / 4, (np.arange(4) + 0.5) / 4, indexing="ij")
    anchors = []
    for y, x in zip(cy.reshape(-1), cx.reshape(-1)):
        for ratio in (1.0, 2.0, 0.5)[:a]:
            anchors.append([y, x, 0.3 / np.sqrt(ratio), 0.3 * np.sqrt(ratio)])
    anchor_t = g.add_tensor("anchors", (n, 4), "FLOAT32", data=np.array(anchors, np.float32))
    outs = [g.add_tensor("detection_boxes", (1, 10, 4), "FLOAT32"),
            g.add_tensor("detection_classes", (1, 10), "FLOAT32"),
            g.add_tensor("detection_scores", (1, 10), "FLOAT32"),
            g.add_tensor("num_detections", (1,), "FLOAT32")]
    g.add_operator(OP, [heads[0], scores, anchor_t], outs, custom_options=options(
        max_detections=10, max_classes_per_detection=1, detections_per_class=5,
        use_regular_nms=regular, nms_score_threshold=0.3, nms_iou_threshold=0.5,
        num_classes=classes, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0))
    g.inputs, g.outputs = [image], outs
    return mb.build()


@pytest.mark.parametrize("regular", [True, False], ids=["regular_nms", "fast_nms"])
def test_ssd_graph_matches_tflm(oracle, regular):
    model = ssd_model(regular)
    ours_min = MicroInterpreter(model, arena_size=1 << 20, target="host64",
                                recording=True).min_arena_bytes()
    detections = 0
    for seed in range(4):
        image = np.random.default_rng(seed).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
        theirs = oracle.run(model, [image], arena_size=ours_min)
        assert theirs.ok, theirs.error
        ours, lines, _ = run_ours(model, [image], arena_size=ours_min)
        assert_detections_equal(ours, theirs.outputs, regular, 1, 10, f"seed {seed}")
        assert lines == theirs.lines
        detections += int(ours[3][0])
    assert detections > 0
    assert not oracle.fits(model, ours_min - 1, [np.zeros((1, 8, 8, 3), np.int8)])


# -------------------------------------------------------------------- errors
def _model(box_type="FLOAT32", anchors=None, anchor_shape=None, iou=0.5, n=4):
    rng = np.random.default_rng(1)
    anchors = ssd_anchors(rng, n) if anchors is None else anchors
    return single_op_model(
        OP, [TensorDef((1, n, 4), box_type), TensorDef((1, n, 3), "FLOAT32"),
             TensorDef(anchor_shape or (n, 4), "FLOAT32", data=anchors.reshape(anchor_shape or (n, 4)))],
        [TensorDef((1, 3, 4), "FLOAT32"), TensorDef((1, 3), "FLOAT32"),
         TensorDef((1, 3), "FLOAT32"), TensorDef((1,), "FLOAT32")],
        custom_options=options(max_detections=3, max_classes_per_detection=1, num_classes=2,
                               nms_score_threshold=0.1, nms_iou_threshold=iou, y_scale=10.0,
                               x_scale=10.0, h_scale=5.0, w_scale=5.0))


def _inputs(box_dtype=np.float32, n=4):
    rng = np.random.default_rng(2)
    return [rng.normal(size=(1, n, 4)).astype(box_dtype), rng.uniform(size=(1, n, 3)).astype(np.float32)]


@pytest.mark.parametrize("what,model,inputs", [
    ("int8 box encodings", _model(box_type="INT8"), _inputs(np.int8)),
    ("an anchor of height 0", _model(anchors=np.float32([[.5, .5, 0, .2]] * 4)), _inputs()),
    ("IoU threshold 0", _model(iou=0.0), _inputs()),
])
def test_invoke_errors_match_tflm(oracle, what, model, inputs):
    theirs = oracle.run(model, inputs)
    assert not theirs.ok and theirs.stage == "invoke", (what, theirs.stage, theirs.error)
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    it.allocate_tensors()
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    with pytest.raises(KernelError):
        it.invoke()


def test_prepare_errors_match_tflm(oracle):
    model = _model(anchor_shape=(1, 4, 4))
    assert not oracle.run(model, _inputs()).ok
    with pytest.raises(KernelError, match="NumDimensions"):
        MicroInterpreter(model, target="host64", error_reporter=lambda m: None).allocate_tensors()


def test_regular_nms_buffer_overflow_is_refused():
    """max_detections 1 and one box: TFLM's regular NMS merges 2 candidates into work
    buffers of 1 entry (writing into the neighbouring scratch buffer); refused here."""
    model = single_op_model(
        OP, [TensorDef((1, 1, 4), "FLOAT32"), TensorDef((1, 1, 2), "FLOAT32"),
             TensorDef((1, 4), "FLOAT32", data=np.float32([[.5, .5, .2, .2]]))],
        [TensorDef((1, 1, 4), "FLOAT32"), TensorDef((1, 1), "FLOAT32"),
         TensorDef((1, 1), "FLOAT32"), TensorDef((1,), "FLOAT32")],
        custom_options=options(max_detections=1, max_classes_per_detection=1, num_classes=2,
                               use_regular_nms=True, nms_score_threshold=0.0,
                               nms_iou_threshold=0.5, y_scale=10.0, x_scale=10.0,
                               h_scale=5.0, w_scale=5.0))
    it = MicroInterpreter(model, target="host64", error_reporter=lambda m: None)
    it.allocate_tensors()
    it.set_input(np.zeros((1, 1, 4), np.float32), 0)
    it.set_input(np.float32([[[0.5, 0.7]]]), 1)
    with pytest.raises(KernelError, match="overflow"):
        it.invoke()
