"""Which NaN comes out of a float operation on two NaNs (or on a NaN and an invalid
product) is decided by the operand order of the compiled loop: x86 keeps the first
operand's NaN, quieted, and makes 0xffc00000 from 0 * inf. The package's orders differ
per kernel and per broadcast path; these cases are run by the tflite-micro package and
compared bit for bit (float_math.x86_input2_first, FULLY_CONNECTED's sum)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import TensorDef, run_ours, single_op_model

pytestmark = pytest.mark.oracle

NAN_A, NAN_B, NAN_C = 0x7FC0000A, 0xFFC0000B, 0x7FC0000C
SIGNALLING = 0x7FA00001


def _f32(*bits) -> np.ndarray:
    return np.array(bits, np.uint32).view(np.float32)


SHAPES = [((1, 2), (1, 2)), ((2, 2), (1, 2)), ((1, 2), (2, 2)), ((1, 2), (1, 1)), ((1, 1), (1, 2)),
          ((2, 3, 4), (4,)), ((4,), (2, 3, 4)), ((1, 1, 1, 1, 1, 3), (2, 1, 1, 1, 1, 3)), ((3,), (1,)),
          ((1,), (3,)), ((2, 1), (1, 2))]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV", "SQUARED_DIFFERENCE", "MAXIMUM", "MINIMUM"])
def test_binary_ops_keep_the_package_nan(oracle, op):
    pairs = [(NAN_A, NAN_B), (NAN_B, NAN_A), (NAN_A, SIGNALLING), (SIGNALLING, NAN_B)]
    for s1, s2 in SHAPES:
        for p, q in pairs:
            a = np.full(s1, _f32(p)[0], np.float32)
            b = np.full(s2, _f32(q)[0], np.float32)
            opts = dict(fused_activation_function=0) if op in ("ADD", "SUB", "MUL", "DIV") else {}
            model = single_op_model(op, [TensorDef(s1, "FLOAT32"), TensorDef(s2, "FLOAT32")],
                                    [TensorDef(np.broadcast_shapes(s1, s2), "FLOAT32")], **opts)
            theirs = oracle.run(model, [a, b])
            ours = run_ours(model, [a, b], recording=False)[0][0]
            assert theirs.ok
            assert np.asarray(ours).tobytes() == theirs.outputs[0].tobytes(), (op, s1, s2, hex(p), hex(q))


def test_fully_connected_float_sums_keep_the_package_nan(oracle):
    """``total += input * weight`` from 0, then ``bias + total``: of two NaNs the input's
    in a product, the running total's in the sum, the bias's at the end; 0 * inf gives
    the default NaN, which a later NaN term does not replace."""
    inf = np.float32(np.inf)
    cases = [(_f32(NAN_A), _f32(NAN_B), None), (_f32(NAN_A, NAN_B), np.ones(2, np.float32), None),
             (_f32(NAN_A), np.ones(1, np.float32), _f32(NAN_C)),
             (np.array([inf, _f32(NAN_A)[0]], np.float32), np.array([0, 1], np.float32), None),
             (_f32(NAN_B, NAN_A, NAN_C), _f32(NAN_C, SIGNALLING, NAN_A), _f32(NAN_B))]
    for x, w, bias in cases:
        x, w = x.reshape(1, -1), w.reshape(1, -1)
        ins = [TensorDef(x.shape, "FLOAT32"), TensorDef(w.shape, "FLOAT32", data=w)]
        if bias is not None:
            ins.append(TensorDef(bias.shape, "FLOAT32", data=bias))
        model = single_op_model("FULLY_CONNECTED", ins, [TensorDef((1, 1), "FLOAT32")])
        theirs = oracle.run(model, [x])
        ours = run_ours(model, [x], recording=False)[0][0]
        assert np.asarray(ours).tobytes() == theirs.outputs[0].tobytes(), (x.view(np.uint32), w.view(np.uint32))
