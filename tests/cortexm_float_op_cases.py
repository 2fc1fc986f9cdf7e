"""Single-op float32 models whose outputs TFLM's Cortex-M builds computed under QEMU
(tests/data/cortexm_float_ops/<profile>.json; tests/test_cortexm_float_ops.py): the ops
whose float kernels call the C library (newlib's fdlibm functions on Cortex-M) and the
square-root ones (IEEE, the same everywhere). Inputs are generated here from fixed seeds;
the data files hold only what TFLM output.

``cases()`` -> {name: (model bytes, [input array])}.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from tests.helpers import TensorDef, single_op_model
from tests.unary_helpers import SPECIALS

_N = 1024


def _elementwise_inputs(seed: int, low: float, high: float) -> np.ndarray:
    """1024 float32 values: the special values, 256 random bit patterns, the rest uniform
    in [low, high)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32).view(np.float32)
    rest = rng.uniform(low, high, _N - SPECIALS.size - bits.size).astype(np.float32)
    return np.concatenate([SPECIALS, bits, rest]).astype(np.float32)


#: op -> (seed, low, high) of the element-wise cases
_ELEMENTWISE = {
    "TANH": (1, -10.0, 10.0),
    "LOGISTIC": (2, -20.0, 20.0),
    "EXP": (3, -105.0, 90.0),
    "LOG": (4, 0.0, 100.0),
    "SIN": (5, -300.0, 300.0),
    "COS": (6, -300.0, 300.0),
    "ELU": (7, -20.0, 5.0),
    "RSQRT": (8, 0.0, 1000.0),
    "SQRT": (9, 0.0, 1000.0),
}


def _rows_inputs(seed: int) -> np.ndarray:
    """(16, 64) float32 logits: rows of different spreads; one row with a NaN, one with
    +inf, one with -inf."""
    rng = np.random.default_rng(seed)
    spreads = np.float32([0.5, 2, 5, 10, 30, 80, 120, 1])[np.arange(16) % 8]
    x = (rng.uniform(-1, 1, (16, 64)) * spreads[:, None]).astype(np.float32)
    x[13, 5] = np.nan
    x[14, 9] = np.inf
    x[15, 2] = -np.inf
    return x


def _binary_inputs(seed: int):
    """Two 1024-element float32 operands: every pair of 15 NaN / infinity / zero / number
    values (225), random bit patterns, the rest uniform in [-10, 10) (with exact zeros)."""
    from tests.newlib_float_inputs import arithmetic_inputs
    rng = np.random.default_rng(seed)
    pairs = arithmetic_inputs()
    bits = rng.integers(0, 2**32, (200, 2), dtype=np.uint64).astype(np.uint32).view(np.float32)
    rest = rng.uniform(-10, 10, (_N - len(pairs) - len(bits), 2)).astype(np.float32)
    rest[::17] = 0.0
    both = np.concatenate([pairs, bits, rest]).astype(np.float32)
    return [np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])]


def detection_case() -> Tuple[bytes, List[np.ndarray]]:
    """DETECTION_POSTPROCESS (fast NMS, one class, every box kept: IoU threshold 1, score
    threshold -1, distinct scores) over 256 anchors: box decoding in double with the C
    library's exp -- a quarter of the size encodings put exp's argument in
    (-2^-32, -2^-33) and a quarter of the centre encodings make a centre offset 33 binades
    below the anchor centre, where libgcc's soft-float double add rounds otherwise than
    IEEE."""
    from flatbuffers import flexbuffers as flex
    rng = np.random.default_rng(21)
    n = 256
    anchors = np.stack([rng.uniform(0.25, 1, n), rng.uniform(0.25, 1, n), rng.uniform(0.05, 0.6, n),
                        rng.uniform(0.05, 0.6, n)], axis=1).astype(np.float32)
    boxes = rng.normal(size=(n, 4)).astype(np.float32)
    tiny = -(2.0 ** -32.5) * rng.uniform(0.75, 1.3, (n // 4, 2)) * 5.0
    boxes[: n // 4, 2:] = tiny.astype(np.float32)
    offset = (2.0 ** -33.5) * anchors[n // 4: n // 2, :2] / anchors[n // 4: n // 2, 2:]
    boxes[n // 4: n // 2, :2] = (offset * 10.0 * rng.choice([-1, 1], (n // 4, 2))).astype(np.float32)
    scores = rng.permutation(n).astype(np.float32).reshape(1, n, 1) / np.float32(n)
    options = flex.Dumps(dict(max_detections=n, max_classes_per_detection=1, use_regular_nms=False,
                              num_classes=1, nms_score_threshold=-1.0, nms_iou_threshold=1.0,
                              y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0))
    model = single_op_model(
        "TFLite_Detection_PostProcess",
        [TensorDef((1, n, 4), "FLOAT32"), TensorDef((1, n, 1), "FLOAT32"),
         TensorDef((n, 4), "FLOAT32", data=anchors)],
        [TensorDef((1, n, 4), "FLOAT32"), TensorDef((1, n), "FLOAT32"), TensorDef((1, n), "FLOAT32"),
         TensorDef((1,), "FLOAT32")],
        custom_options=options)
    return model, [boxes.reshape(1, n, 4), scores]


def cases() -> Dict[str, Tuple[bytes, List[np.ndarray]]]:
    out = {}
    for op, (seed, low, high) in _ELEMENTWISE.items():
        x = _elementwise_inputs(seed, low, high)
        model = single_op_model(op, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")])
        out[op.lower()] = (model, [x])
    for name, op, options, seed in (("softmax", "SOFTMAX", {"beta": np.float32(1.0)}, 10),
                                    ("softmax_beta", "SOFTMAX", {"beta": np.float32(0.37)}, 11),
                                    ("log_softmax", "LOG_SOFTMAX", {}, 12)):
        x = _rows_inputs(seed)
        model = single_op_model(op, [TensorDef(x.shape, "FLOAT32")], [TensorDef(x.shape, "FLOAT32")],
                                **options)
        out[name] = (model, [x])
    for seed, op in enumerate(("ADD", "SUB", "MUL", "DIV"), start=20):
        a, b = _binary_inputs(seed)
        model = single_op_model(op, [TensorDef(a.shape, "FLOAT32"), TensorDef(b.shape, "FLOAT32")],
                                [TensorDef(a.shape, "FLOAT32")])
        out[op.lower()] = (model, [a, b])
        # broadcast: (4, 256) with (1, 256), TFLM's broadcast loops
        a4, b1 = a.reshape(4, 256), b[:256].reshape(1, 256)
        model = single_op_model(op, [TensorDef(a4.shape, "FLOAT32"), TensorDef(b1.shape, "FLOAT32")],
                                [TensorDef(a4.shape, "FLOAT32")])
        out[op.lower() + "_broadcast"] = (model, [a4, b1])
    a, b = _binary_inputs(30)
    c = b[::-1].copy()
    model = single_op_model("ADD_N", [TensorDef(a.shape, "FLOAT32")] * 3, [TensorDef(a.shape, "FLOAT32")])
    out["add_n"] = (model, [a, b, c])
    model = single_op_model("SQUARED_DIFFERENCE", [TensorDef(a.shape, "FLOAT32"), TensorDef(b.shape, "FLOAT32")],
                            [TensorDef(a.shape, "FLOAT32")])
    out["squared_difference"] = (model, [a, b])
    return out
