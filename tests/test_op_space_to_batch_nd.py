"""SPACE_TO_BATCH_ND against TFLM: float32 / int8, 3-D and 4-D, blocks 1 to 3, paddings
(negative ones too, which TFLM turns into crops), outputs of any batch / size, constant or
run-time block shape and paddings; errors.

TFLM fills padding with the byte of a never-written struct field (whatever the arena
held): the package, asked many models in one process, shows left-over bytes there. So
padded pixels are compared in a fresh TFLM process (zero-filled arena: zeros, as ours),
and everywhere else only the copied pixels are compared bit for bit."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

from tests.data_movement_helpers import (any_array, assert_both_reject, assert_rejected,
                                         assert_same_min_arena, quant_or_none)
from tests.helpers import TensorDef, assert_bit_exact, run_ours, single_op_model
from tests.oracle import Oracle

pytestmark = pytest.mark.oracle


def padded_pixels(in_shape, out_shape, block, pads):
    """Output pixels TFLM pads, by a plain loop over the output (reference for the test)."""
    ib, ih = in_shape[0], in_shape[1]
    iw = in_shape[2] if len(in_shape) == 4 else 1
    ob, oh = out_shape[0], out_shape[1]
    ow = out_shape[2] if len(out_shape) == 4 else 1
    bh, bw = block[0], (block[1] if len(in_shape) == 4 else 1)
    top, left = pads[0], (pads[2] if len(in_shape) == 4 else 0)
    mask = np.zeros((ob, oh, ow), bool)
    for b in range(ob):
        shift = b // ib
        for h in range(oh):
            for w in range(ow):
                y, x = h * bh + shift // bw - top, w * bw + shift % bw - left
                mask[b, h, w] = not (0 <= y < ih and 0 <= x < iw)
    return mask


@st.composite
def space_to_batch_case(draw):
    dtype = draw(st.sampled_from(["float32", "int8"]))
    rank = draw(st.sampled_from([3, 4]))
    bh = draw(st.integers(1, 3))
    bw = draw(st.integers(1, 3)) if rank == 4 else 1
    ib, ih, d = draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(1, 3))
    iw = draw(st.integers(1, 5)) if rank == 4 else 1
    low = -1 if draw(st.integers(0, 4)) == 0 else 0
    top, left = draw(st.integers(low, 2)), (draw(st.integers(low, 2)) if rank == 4 else 0)
    oh = draw(st.integers(1, (ih + max(top, 0) + 2) // bh + 1))
    ow = draw(st.integers(1, (iw + max(left, 0) + 2) // bw + 1)) if rank == 4 else 1
    ob = ib * bh * bw if draw(st.integers(0, 4)) else draw(st.integers(1, 2 * ib * bh * bw))
    bottom, right = oh * bh - ih - top, ow * bw - iw - left
    in_shape = (ib, ih, iw, d) if rank == 4 else (ib, ih, d)
    out_shape = (ob, oh, ow, d) if rank == 4 else (ob, oh, d)
    block = np.array([bh, bw] if rank == 4 else [bh], np.int32)
    pads = np.array([[top, bottom], [left, right]] if rank == 4 else [[top, bottom]], np.int32)
    const = draw(st.booleans())
    q = quant_or_none(draw, dtype)
    x = any_array(draw, in_shape, dtype)
    event(f"{dtype} rank={rank} const={const}")
    model = single_op_model("SPACE_TO_BATCH_ND", [
        TensorDef(in_shape, dtype.upper(), q), TensorDef(block.shape, "INT32", data=block if const else None),
        TensorDef(pads.shape, "INT32", data=pads if const else None)], [TensorDef(out_shape, dtype.upper(), q)])
    mask = padded_pixels(in_shape, out_shape, block.tolist(), pads.reshape(-1).tolist())
    return model, ([x] if const else [x, block, pads]), mask


def compare_copied_pixels(oracle, model, inputs, mask, context):
    """Outputs equal on every pixel TFLM copies, ours zero where it pads; report lines equal."""
    theirs = oracle.run(model, inputs)
    assert theirs.ok, f"{context}: TFLM failed: {theirs.error}"
    ours, lines, _ = run_ours(model, inputs)
    a, b = ours[0], theirs.outputs[0]
    assert a.dtype == b.dtype and a.shape == b.shape
    pixels = a.reshape(mask.size, -1)
    assert_bit_exact([pixels[~mask.reshape(-1)]], [b.reshape(mask.size, -1)[~mask.reshape(-1)]], context)
    assert not pixels[mask.reshape(-1)].view(np.uint8).any(), f"{context}: padding is not zero bytes"
    assert lines == theirs.lines, f"{context}: allocation report differs"


@given(space_to_batch_case())
def test_space_to_batch_nd_matches_tflm(oracle, case):
    model, inputs, mask = case
    compare_copied_pixels(oracle, model, inputs, mask, "SPACE_TO_BATCH_ND")


def test_space_to_batch_nd_padding_in_a_fresh_arena():
    """In a fresh process TFLM's arena is zero-filled: its padding is 0 bytes, even for
    int8 with a non-zero zero point (TFLM never sets SpaceToBatchParams.output_offset)."""
    x = np.arange(1, 1 + 2 * 4 * 6 * 3, dtype=np.int64).reshape(2, 4, 6, 3).astype(np.int8)
    model = single_op_model("SPACE_TO_BATCH_ND", [
        TensorDef(x.shape, "INT8", (0.1, 7)), TensorDef((2,), "INT32", data=np.array([2, 3], np.int32)),
        TensorDef((2, 2), "INT32", data=np.array([[1, 1], [2, 1]], np.int32))], [TensorDef((12, 3, 3, 3), "INT8", (0.1, 7))])
    fresh = Oracle()
    try:
        theirs = fresh.run(model, [x])
    finally:
        fresh.close()
    ours, lines, _ = run_ours(model, [x])
    assert_bit_exact(ours, theirs.outputs, "SPACE_TO_BATCH_ND fresh arena")
    assert lines == theirs.lines
    assert (ours[0] == 0).sum() == 180


def _model(in_shape=(1, 4, 4, 1), out_shape=(4, 2, 2, 1), block=(2, 2), pads=((0, 0), (0, 0)), dtype="FLOAT32",
           out_dtype=None):
    b, p = np.array(block, np.int32), np.array(pads, np.int32)
    return single_op_model("SPACE_TO_BATCH_ND", [TensorDef(in_shape, dtype), TensorDef(b.shape, "INT32", data=b),
                                                 TensorDef(p.shape, "INT32", data=p)],
                           [TensorDef(out_shape, out_dtype or dtype)])


def test_space_to_batch_nd_errors(oracle):
    x = np.zeros((1, 4, 4, 1), np.float32)
    assert_both_reject(oracle, _model(in_shape=(1, 2, 2, 2, 1), out_shape=(4, 1, 1, 2, 1)), [np.zeros((1, 2, 2, 2, 1), np.float32)],
                       "must have 3 or 4 dimensions")
    assert_both_reject(oracle, _model(out_dtype="INT8"), [x], "input type FLOAT32 and output type INT8 differ")
    assert_both_reject(oracle, _model(dtype="INT32"), [x.astype(np.int32)], "Type INT32 (2) not supported.",
                       tflm_stage="invoke")
    assert_rejected(_model(block=(2, 0)), [x], "block shape (2, 0) must be >= 1")
    assert_rejected(_model(pads=((0, 0),)), [x], "holds fewer than the 3 int32 values")
    assert_rejected(_model(out_shape=(4, 2, 2)), [x], "must have the same number of dimensions")


def test_space_to_batch_nd_min_arena(oracle):
    assert_same_min_arena(oracle, _model(dtype="INT8"), [np.zeros((1, 4, 4, 1), np.int8)])
