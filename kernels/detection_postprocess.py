"""DETECTION_POSTPROCESS (custom ``TFLite_Detection_PostProcess``): SSD box decoding and
non-maximum suppression, as TFLM's micro kernel computes them.

Options (a flexbuffer map): max_detections, max_classes_per_detection, detections_per_class
(default 100), use_regular_nms (default false), nms_score_threshold, nms_iou_threshold,
num_classes, y_scale, x_scale, h_scale, w_scale; a missing key reads as 0.

Inputs: box encodings [1, boxes, >= 4] (y, x, h, w per anchor), class predictions
[1, boxes, classes (+1 background)], anchors [boxes, 4] (y, x, h, w). TFLM's micro kernel
decodes float32 encodings and scores only: other types pass prepare and fail at invoke
(with no message, as TFLM); anchors are read as float32 whatever their type, so anything
else is refused here (TFLM would read past them). Outputs (written as float32): boxes
(ymin, xmin, ymax, xmax), classes, scores, and the number of detections.

* decoding: center = encoding / scale * anchor size + anchor center and half size =
  0.5 * exp(encoding / scale) * anchor size, in double, rounded to float; the corners in
  float. ``exp`` is the C library's (TFLM calls ``std::exp(double)``: glibc's on the host,
  newlib's on Cortex-M, where the double adds are libgcc's soft-float ones too).
* NMS of one class: scores >= threshold, sorted by decreasing score (stable: equal
  scores keep anchor order), greedily kept while no kept box overlaps them with IoU >
  threshold (IoU in float32 as TFLM), at most ``max`` boxes; every decoded box must have
  ymin < ymax and xmin < xmax or invoke fails.
* regular NMS: per class, the NMS picks (at most detections_per_class) merged with the
  best so far, keeping the max_detections best (ties: earlier first); every output row
  written, zeros past the detections.
* fast NMS: per anchor its classes sorted (ties: lower class first), NMS on each anchor's
  best score, then for each kept anchor its max_classes_per_detection best classes. TFLM
  places detection ``k`` of class rank ``c`` at row ``n * k + c`` (n classes per anchor,
  k counted over all written rows), so with n > 1 rows are spread out; rows it does not
  write keep what they held. Writes past an output's end are refused.

Allocations: init takes the OpData from the tail; prepare asks for TFLM's 11 scratch
buffers (candidate flags, decoded boxes, scores, and the NMS work arrays).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.flexbuffer import FlexMap
from .internal.float_math import GLIBC, FloatMath, math_for
from .internal.tensor_utils import FLOAT32, type_name

BOX_ENCODINGS, CLASS_PREDICTIONS, ANCHORS = 0, 1, 2
DETECTION_BOXES, DETECTION_CLASSES, DETECTION_SCORES, NUM_DETECTIONS = 0, 1, 2, 3
DEFAULT_DETECTIONS_PER_CLASS = 100
_F32 = np.float32


class OpData:
    """TFLM's OpData (options, 11 scratch-buffer indices, the inputs' quantization)."""

    def __init__(self, options: FlexMap):
        self.max_detections = options.as_int32("max_detections")
        self.max_classes_per_detection = options.as_int32("max_classes_per_detection")
        self.detections_per_class = (DEFAULT_DETECTIONS_PER_CLASS
                                     if options.is_null("detections_per_class")
                                     else options.as_int32("detections_per_class"))
        self.use_regular_nms = (False if options.is_null("use_regular_nms")
                                else options.as_bool("use_regular_nms"))
        self.score_threshold = _F32(options.as_double("nms_score_threshold"))
        self.iou_threshold = _F32(options.as_double("nms_iou_threshold"))
        self.num_classes = options.as_int32("num_classes")
        # y, x, h, w scales (float in TFLM)
        self.scales = np.array([options.as_double(k) for k in
                                ("y_scale", "x_scale", "h_scale", "w_scale")], np.float32)
        self.scratch = {}
        self.num_boxes = 0


@register
class DetectionPostProcess(Kernel):
    custom_name = "TFLite_Detection_PostProcess"
    supported_types = ("float32",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("detection_postprocess.OpData"))
        try:
            return OpData(FlexMap(node.custom_options))
        except ValueError as e:
            raise ctx.error(f"custom options: {e}") from None

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) != 3:
            raise ctx.error(f"NumInputs(node) != 3 ({len(node.inputs)} != 3)")
        boxes = ctx.required_input(node, BOX_ENCODINGS, "the box encodings")
        scores = ctx.required_input(node, CLASS_PREDICTIONS, "the class predictions")
        anchors = ctx.required_input(node, ANCHORS, "the anchors")
        for what, t, rank in (("box encodings", boxes, 3), ("class predictions", scores, 3),
                              ("anchors", anchors, 2)):
            if len(t.shape) != rank:
                raise ctx.error(f"NumDimensions({what}) != {rank} ({len(t.shape)} != {rank})")
        if len(node.outputs) != 4:
            raise ctx.error(f"NumOutputs(node) != 4 ({len(node.outputs)} != 4)")
        num_boxes = int(boxes.shape[1])
        num_classes = data.num_classes
        max_det = data.max_detections
        if num_boxes < 0 or max_det < 1 or num_classes < 1:
            raise ctx.error(f"max_detections {max_det} and num_classes {num_classes} must be "
                            "positive (TFLM sizes its work buffers from them)")
        if anchors.type != FLOAT32 or anchors.num_elements < 4 * num_boxes:
            raise ctx.error(f"anchors must be float32 with {num_boxes} x 4 values, not "
                            f"{type_name(anchors.type)} {anchors.shape}: TFLM reads them as "
                            "float32 and would read past their end")
        data.quantization = [(t.scale, t.zero_point) for t in (boxes, scores, anchors)]
        request = ctx.request_scratch
        s = data.scratch
        s["active_candidate"] = request(num_boxes)
        s["decoded_boxes"] = request(num_boxes * 4 * 4)
        s["scores"] = request(int(scores.shape[1]) * int(scores.shape[2]) * 4)
        s["score_buffer"] = request(num_boxes * 4)
        s["keep_scores"] = request(num_boxes * 4)
        s["scores_after_regular_nms"] = request(max_det * num_boxes * 4)
        s["sorted_values"] = request(max_det * num_boxes * 4)
        s["keep_indices"] = request(num_boxes * 4)
        s["sorted_indices"] = request(max_det * num_boxes * 4)
        s["buffer"] = request(max(num_classes, max_det) * num_boxes * 4)
        s["selected"] = request(min(num_boxes, max_det) * num_boxes * 4)
        data.num_boxes = num_boxes
        ctx.release(boxes, scores, anchors)

    # ------------------------------------------------------------------ invoke
    def invoke(self, ctx, node):
        data = node.user_data
        encodings = node.input_arrays[BOX_ENCODINGS]
        if encodings.shape[0] != 1 or encodings.shape[2] < 4 or encodings.dtype != np.float32:
            raise ctx.error(f"box encodings {type_name_of(encodings)} {encodings.shape}: TFLM "
                            "decodes float32 [1, boxes, >= 4] only (invoke fails)")
        decoded = self._decode(data, encodings[0, :, :4],
                               node.input_arrays[ANCHORS].reshape(-1)[:4 * data.num_boxes]
                               .reshape(-1, 4), math_for(ctx.target))
        ctx.scratch(data.scratch["decoded_boxes"]).view(np.float32)[:] = decoded.reshape(-1)
        scores = node.input_arrays[CLASS_PREDICTIONS]
        ncb = scores.shape[2]
        if (scores.shape[0] != 1 or scores.shape[1] != data.num_boxes
                or ncb - data.num_classes > 1 or ncb < data.num_classes):
            raise ctx.error(f"class predictions {scores.shape} do not fit {data.num_boxes} boxes "
                            f"and {data.num_classes} classes (+ at most 1 background)")
        if scores.dtype != np.float32:
            raise ctx.error(f"class predictions {type_name_of(scores)}: TFLM's kernel reads "
                            "float32 scores only (invoke fails)")
        outputs = [_float_view(node.output_arrays[k]) for k in range(4)]
        if data.use_regular_nms:
            self._regular(ctx, data, decoded, scores[0], outputs)
        else:
            self._fast(ctx, data, decoded, scores[0], outputs)

    @staticmethod
    def _decode(data, enc: np.ndarray, anchors: np.ndarray, c_math: FloatMath = GLIBC) -> np.ndarray:
        """(boxes, 4) float32 corners (ymin, xmin, ymax, xmax); ``math``: the build's double
        exp and double add (glibc / IEEE; newlib / libgcc soft-float on Cortex-M:
        :func:`kernels.internal.float_math.math_for`)."""
        e = enc.astype(np.float64)
        a = anchors.astype(np.float64)
        sy, sx, sh, sw = (float(v) for v in data.scales)
        with np.errstate(all="ignore"):
            ycenter = c_math.dadd(e[:, 0] / sy * a[:, 2], a[:, 0]).astype(np.float32)
            xcenter = c_math.dadd(e[:, 1] / sx * a[:, 3], a[:, 1]).astype(np.float32)
            exp_h = c_math.exp64(e[:, 2] / sh)
            exp_w = c_math.exp64(e[:, 3] / sw)
            half_h = (0.5 * exp_h * a[:, 2]).astype(np.float32)
            half_w = (0.5 * exp_w * a[:, 3]).astype(np.float32)
            return np.stack([ycenter - half_h, xcenter - half_w, ycenter + half_h,
                             xcenter + half_w], axis=1).astype(np.float32)

    @staticmethod
    def _nms(ctx, data, boxes: np.ndarray, scores: np.ndarray, max_detections: int) -> list:
        """TFLM's NonMaxSuppressionSingleClassHelper: the kept anchors, in order."""
        if max_detections < 0:
            raise ctx.error("max_detections >= 0 was not true")
        thr = data.iou_threshold
        if not (thr > 0 and thr <= 1):
            raise ctx.error(f"the IoU threshold {float(thr)} must be in (0, 1]")
        if np.any((boxes[:, 0] >= boxes[:, 2]) | (boxes[:, 1] >= boxes[:, 3])):
            raise ctx.error("ValidateBoxes(decoded_boxes, num_boxes) was not true (a decoded "
                            "box has ymin >= ymax or xmin >= xmax)")
        keep = np.nonzero(scores >= data.score_threshold)[0]
        candidates = keep[np.argsort(-scores[keep], kind="stable")]
        output_size = min(candidates.size, max_detections)
        active = np.ones(candidates.size, dtype=bool)
        active_count = candidates.size
        selected = []
        for i in range(candidates.size):
            if active_count == 0 or len(selected) >= output_size:
                break
            if not active[i]:
                continue
            selected.append(int(candidates[i]))
            active[i] = False
            active_count -= 1
            rest = np.nonzero(active[i + 1:])[0] + i + 1
            if rest.size:
                overlap = _iou(boxes, int(candidates[i]), candidates[rest])
                suppressed = rest[overlap > thr]
                active[suppressed] = False
                active_count -= suppressed.size
        return selected

    def _regular(self, ctx, data, boxes, scores, outputs):
        num_boxes, ncb = scores.shape
        label_offset = ncb - data.num_classes
        if data.detections_per_class <= 0:
            raise ctx.error("num_detections_per_class > 0 was not true")
        max_det = data.max_detections
        capacity = min(max_det * num_boxes, max(data.num_classes, max_det) * num_boxes)
        codes = np.zeros(0, np.int64)
        best = np.zeros(0, np.float32)
        for col in range(data.num_classes):
            class_scores = scores[:, col + label_offset]
            selected = np.array(self._nms(ctx, data, boxes, class_scores,
                                          data.detections_per_class), np.int64)
            codes = np.concatenate([codes, selected * ncb + col + label_offset])
            best = np.concatenate([best, class_scores[selected]])
            if codes.size > capacity:
                raise ctx.error(f"{codes.size} candidate detections overflow TFLM's work buffers "
                                f"({capacity} entries)")
            order = _decreasing_order(best)[:min(codes.size, max_det)]
            codes, best = codes[order], best[order]
        count = codes.size
        det_boxes, det_classes, det_scores, num = outputs
        _check_rows(ctx, outputs, max_det)
        anchor = codes // ncb
        det_boxes[:4 * max_det] = 0
        det_classes[:max_det] = 0
        det_scores[:max_det] = 0
        det_boxes[:4 * count] = boxes[anchor].reshape(-1)
        det_classes[:count] = (codes - anchor * ncb - label_offset).astype(np.float32)
        det_scores[:count] = best
        num[0] = np.float32(count)

    def _fast(self, ctx, data, boxes, scores, outputs):
        num_boxes, ncb = scores.shape
        label_offset = ncb - data.num_classes
        if data.max_classes_per_detection <= 0:
            raise ctx.error("max_categories_per_anchor > 0 was not true")
        per_anchor = min(data.max_classes_per_detection, data.num_classes)
        class_scores = scores[:, label_offset:label_offset + data.num_classes]
        ranked = np.argsort(-class_scores, axis=1, kind="stable")[:, :per_anchor]
        max_scores = np.take_along_axis(class_scores, ranked[:, :1], axis=1)[:, 0]
        selected = self._nms(ctx, data, boxes, max_scores, data.max_detections)
        rows = np.arange(len(selected) * per_anchor)
        offsets = per_anchor * rows + rows % per_anchor      # TFLM's row of each write
        anchors = np.repeat(np.array(selected, np.int64), per_anchor)
        classes = ranked[anchors, rows % per_anchor] if rows.size else np.zeros(0, np.int64)
        det_boxes, det_classes, det_scores, num = outputs
        _check_rows(ctx, outputs, int(offsets.max()) + 1 if offsets.size else 0)
        if offsets.size:
            det_boxes.reshape(-1, 4)[offsets] = boxes[anchors]
            det_classes[offsets] = classes.astype(np.float32)
            det_scores[offsets] = class_scores[anchors, classes]
        num[0] = np.float32(rows.size)


def type_name_of(a: np.ndarray) -> str:
    return str(a.dtype).upper()


def _iou(boxes: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    """TFLM's ComputeIntersectionOverUnion of box ``i`` with each of ``others``, in
    float32 with std::max / std::min's NaN behaviour."""
    bi = boxes[i]
    bj = boxes[others]
    area_i = _F32((bi[2] - bi[0]) * (bi[3] - bi[1]))
    area_j = (bj[:, 2] - bj[:, 0]) * (bj[:, 3] - bj[:, 1])
    ymin = np.where(bi[0] < bj[:, 0], bj[:, 0], bi[0])      # std::max(a, b): a < b ? b : a
    xmin = np.where(bi[1] < bj[:, 1], bj[:, 1], bi[1])
    ymax = np.where(bj[:, 2] < bi[2], bj[:, 2], bi[2])      # std::min(a, b): b < a ? b : a
    xmax = np.where(bj[:, 3] < bi[3], bj[:, 3], bi[3])
    dy, dx = ymax - ymin, xmax - xmin
    inter = np.where(dy < 0, _F32(0), dy) * np.where(dx < 0, _F32(0), dx)
    with np.errstate(all="ignore"):
        iou = inter / (area_i + area_j - inter)
    return np.where((area_i <= 0) | (area_j <= 0), _F32(0), iou).astype(np.float32)


def _decreasing_order(values: np.ndarray) -> np.ndarray:
    """Indices by decreasing value, ties by increasing index (TFLM's partial sort key)."""
    return np.lexsort((np.arange(values.size), -values.astype(np.float64)))


def _float_view(array: np.ndarray) -> np.ndarray:
    """An output's bytes as float32 (TFLM writes floats whatever the tensor's type)."""
    raw = array.reshape(-1).view(np.uint8)
    return raw[:raw.size // 4 * 4].view(np.float32)


def _check_rows(ctx, outputs, rows: int) -> None:
    boxes, classes, scores, num = outputs
    for what, view, per_row in (("boxes", boxes, 4), ("classes", classes, 1),
                                ("scores", scores, 1)):
        if view.size < rows * per_row:
            raise ctx.error(f"detection {what} output holds {view.size // per_row} rows; TFLM "
                            f"writes {rows} (past its end)")
    if num.size < 1:
        raise ctx.error("the num_detections output is empty; TFLM writes one float there")
