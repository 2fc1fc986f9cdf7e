"""PRELU against TFLM: float32 (up to 4-D), int8 and int16 inputs with int8 alpha,
alpha broadcast per channel (constant or not) or in any numpy pattern, per-channel
quantized alpha (TFLM uses its first scale); clear errors for bad models."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from micro_runtime.errors import KernelError
from tests.helpers import TensorDef, compare_with_tflm, run_ours, single_op_model
from tests.strategies import arrays, scales
from tests.unary_helpers import float_values

pytestmark = pytest.mark.oracle
OP = "PRELU"


@st.composite
def prelu_shapes(draw, max_dims):
    rank = draw(st.integers(1, max_dims))
    full = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    kind = draw(st.sampled_from(["channel", "channel", "same", "general"]))
    if kind == "channel":
        alpha = full[-1:] if draw(st.booleans()) else (1,) * (rank - 1) + full[-1:]
    elif kind == "same":
        alpha = full
    else:
        keep = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        alpha = tuple(d if k else 1 for d, k in zip(full, keep))[draw(st.integers(0, rank - 1)):]
    inp = full
    if kind == "general" and draw(st.booleans()):     # the input broadcasts too
        keep = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        inp = tuple(d if k else 1 for d, k in zip(full, keep))
    out = tuple(np.broadcast_shapes(inp, alpha))
    return inp, alpha, out


@st.composite
def prelu_case(draw):
    kind = draw(st.sampled_from(["float32", "int8", "int16"]))
    const = draw(st.booleans())
    event(f"{kind} {'const' if const else 'input'} alpha")
    s_in, s_alpha, s_out = draw(prelu_shapes(4 if kind == "float32" else 6))
    if kind == "float32":
        x, a = float_values(draw, s_in), arrays(draw, s_alpha, "float32", -2.0, 2.0)
        tin = talpha = "FLOAT32"
        qin = qa = qout = None
    else:
        tin, talpha = kind.upper(), "INT8"
        x, a = arrays(draw, s_in, kind), arrays(draw, s_alpha, "int8")
        zp = (lambda: draw(st.integers(-128, 127))) if kind == "int8" else (lambda: 0)
        qin = (draw(scales(1e-3, 1.0)), zp())
        qout = (draw(scales(1e-3, 1.0)), zp())
        if draw(st.booleans()) and len(s_alpha) and s_alpha[-1] > 1:
            n = s_alpha[-1]
            qa = (np.linspace(draw(scales(1e-3, 0.1)), 0.2, n).astype(np.float32),
                  np.full(n, draw(st.integers(-10, 10)), np.int64), len(s_alpha) - 1)
        else:
            qa = (draw(scales(1e-3, 0.1)), draw(st.integers(-128, 127)))
    alpha_def = TensorDef(s_alpha, talpha, qa, data=a if const else None)
    model = single_op_model(OP, [TensorDef(s_in, tin, qin), alpha_def], [TensorDef(s_out, tin, qout)])
    return model, [x] if const else [x, a]


@given(prelu_case())
def test_prelu_matches_tflm(oracle, case):
    model, inputs = case
    compare_with_tflm(oracle, model, inputs, context=OP)


@pytest.mark.parametrize("io, q_in, q_alpha, q_out", [
    ("INT8", (1e30, 3), (0.02, -5), (1e-30, 1)),       # left shifts far beyond 31
    ("INT8", (0.5, 0), (1e20, 7), (1e-3, -2)),         # only the alpha multiplier huge
    ("INT8", (1.4e-45, 0), (1e-30, 0), (3.4e38, 0)),   # both flushed to zero
    ("INT16", (3.4e38, 0), (0.1, 0), (1.4e-45, 0)),    # an infinite multiplier
    ("INT16", (1e-3, 0), (1e10, 4), (1e-20, 0)),
])
def test_prelu_extreme_scales_match_tflm(oracle, io, q_in, q_alpha, q_out):
    """TFLM's prepare checks no multiplier: every one runs, shifted as the CPU does."""
    if io == "INT8":
        x, a = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    else:
        rng = np.random.default_rng(5)
        x = rng.integers(-32768, 32768, (256, 256)).astype(np.int16)
        a = rng.integers(-128, 128, (256, 256)).astype(np.int8)
    model = single_op_model(OP, [TensorDef(x.shape, io, q_in), TensorDef(a.shape, "INT8", q_alpha)],
                            [TensorDef(x.shape, io, q_out)])
    compare_with_tflm(oracle, model, [x, a], context=f"{OP} {io} {q_in} {q_alpha} {q_out}")


@pytest.mark.parametrize("types, shapes, message", [
    (("INT32", "INT32", "INT32"), ((2, 3), (3,), (2, 3)), "not supported"),
    (("INT8", "INT8", "INT16"), ((2, 3), (3,), (2, 3)), "differs"),
    (("INT16", "INT16", "INT16"), ((2, 3), (3,), (2, 3)), "alpha must be INT8"),
    (("FLOAT32", "INT8", "FLOAT32"), ((2, 3), (3,), (2, 3)), "alpha must be FLOAT32"),
    (("FLOAT32",) * 3, ((2, 3), (2,), (2, 3)), "do not broadcast"),
    (("FLOAT32",) * 3, ((2, 3), (3,), (3, 2)), "output has shape"),
    (("FLOAT32",) * 3, ((1, 2, 1, 2, 3), (3,), (1, 2, 1, 2, 3)), "at most 4"),
])
def test_prelu_rejects_bad_models(types, shapes, message):
    q = lambda t: None if t == "FLOAT32" or t == "INT32" else (0.1, 0)
    model = single_op_model(OP, [TensorDef(shapes[0], types[0], q(types[0])),
                                 TensorDef(shapes[1], types[1], q(types[1]))],
                            [TensorDef(shapes[2], types[2], q(types[2]))])
    with pytest.raises(KernelError, match=message) as info:
        run_ours(model, [])
    assert OP in str(info.value)
