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
    return out
