"""The fused float64 output stage (kernels.internal.quantization.FusedRequant) and the
kernel paths that use it (CONV_2D's folded product, DEPTHWISE_CONV_2D's row layout),
against the plain transcription of TFLM's integer routines in tests/test_edge_requant.py,
on accumulators placed at the rounding boundaries.

FusedRequant claims: ``[cols, 1] @ weights(w)`` and ``scale_into`` give x * k + c exactly,
the sign correction is a comparison of t, and clip + float -> unsigned cast + top-bit flip
is floor + clamp + narrowing. Each path is swept here over every boundary accumulator of
every multiplier of the boundary table, for right shifts 0..18 (|x| <= 2^18), with and
without a bias, for int8 outputs with an output offset and a full range (the sign
correction matters), a ReLU-like range starting at the offset (it is skipped), and int16
outputs.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernels.internal.quantization import ChannelRequantizer, FusedRequant
from tests.helpers import TensorDef, run_ours, single_op_model
from tests.test_edge_requant import (_boundary_table, _channel_matrix, _kernel_channels, ref_mbqm)

#: (output dtype, output offset, act_min, act_max)
OUTPUT_STAGES = [(np.int8, -37, -128, 127), (np.int8, 5, 5, 127), (np.int8, 0, -128, 127),
                 (np.int16, 0, -32768, 32767), (np.int16, 100, -300, 30000)]


def _expected(pre, bias, table, offset, lo, hi):
    """(N, C) reference outputs for accumulators ``pre`` (C, N) (+ bias)."""
    C, N = pre.shape
    out = np.zeros((N, C), np.int64)
    for c, (m, s, xs) in enumerate(table):
        b = 0 if bias is None else int(bias[c])
        for j in range(N):
            out[j, c] = min(max(ref_mbqm(int(pre[c, j]) + b, int(m), int(s)) + offset, lo), hi)
    return out


def _cases():
    lo, hi = -(1 << 18), (1 << 18)
    for shift in range(-18, 1):
        table = _boundary_table(lo, hi, shifts=(shift,))
        acc, m, s = _channel_matrix(table)
        for bias in (None, np.full(len(table), 12345, np.int64)):
            pre = acc if bias is None else acc - bias[:, None]
            yield shift, table, pre, m, s, bias


def test_cast_to_unsigned_truncates():
    """The narrowing relies on numpy's float64 -> uint8 / uint16 conversion dropping the
    fraction of values in range (C's conversion), including just below an integer."""
    below = np.nextafter(np.arange(1.0, 256.0), 0.0)
    values = np.concatenate([np.arange(0.0, 256.0), below, np.arange(0.0, 255.0) + 0.5])
    got = np.empty(values.shape, np.uint8)
    np.copyto(got, values, casting="unsafe")
    assert np.array_equal(got, np.floor(values).astype(np.int64))
    wide = np.concatenate([np.arange(0.0, 65536.0), np.nextafter(np.arange(1.0, 65536.0), 0.0)])
    got16 = np.empty(wide.shape, np.uint16)
    np.copyto(got16, wide, casting="unsafe")
    assert np.array_equal(got16, np.floor(wide).astype(np.int64))


def test_fused_product_and_scale_at_boundaries():
    """Both ways of building t (the folded product with identity weights, whose sums are the
    accumulators themselves, and scale_into on float32 / float64 sums tiled over 3 pixels)
    followed by finish, against the reference, for every output stage."""
    count = planned = shifted = unshifted = 0
    for shift, table, pre, m, s, bias in _cases():
        C, N = pre.shape
        for out_dtype, offset, lo, hi in OUTPUT_STAGES:
            rq = ChannelRequantizer(m, s, bias, offset, lo, hi, False, float(np.abs(pre).max()))
            fused = rq.fused(out_dtype)
            if fused is None:
                # the fused form exists whenever the float64 plan does
                assert rq.float64 is None
                continue
            planned += 1
            shifted += fused.unsigned is not None
            unshifted += fused.unsigned is None
            want = _expected(pre, bias, table, offset, lo, hi)
            # the product: [x, 1] @ [[I * k], [c]]
            cols = np.ones((N, C + 1))
            cols[:, :C] = pre.T
            t = cols @ fused.weights(np.eye(C, dtype=np.int64))
            got = np.empty((N, C), out_dtype)
            fused.finish(t, got)
            bad = np.argwhere(got.astype(np.int64) != want)
            assert not len(bad), (f"product path, shift {shift}, {np.dtype(out_dtype).name} offset {offset}: "
                                  f"acc {pre[bad[0][1], bad[0][0]]} m {m[bad[0][1]]} gives "
                                  f"{got[tuple(bad[0])]}, TFLM {want[tuple(bad[0])]}")
            count += want.size
            # scale_into on rows of 3 pixels, from float32 (exact: |x| <= 2^18) and float64
            for acc_dtype in (np.float32, np.float64):
                rows = np.concatenate([pre.T, pre.T[::-1], pre.T], axis=1).astype(acc_dtype)
                t3 = np.empty(rows.shape)
                fused.scale_into(rows, t3, 3)
                got3 = np.empty(rows.shape, out_dtype)
                fused.finish(t3, got3, 3)
                want3 = np.concatenate([want, want[::-1], want], axis=1)
                assert np.array_equal(got3.astype(np.int64), want3), (
                    f"scale path ({np.dtype(acc_dtype).name}), shift {shift}, offset {offset}")
                count += want3.size
    assert planned >= 19 * 2 * 3 and count > 100000
    # both narrowings were exercised: the shifted unsigned cast and the explicit floor
    assert shifted and unshifted


def test_fused_form_refused_outside_its_range():
    """No fused form without the float64 plan (unknown bound), for int32 outputs, or when
    the clamp range leaves the output type."""
    m = np.array([1 << 30], np.int64)
    s = np.array([-5], np.int64)
    assert ChannelRequantizer(m, s, None, 0, -128, 127, False, None).fused(np.int8) is None
    assert ChannelRequantizer(m, s, None, 0, -128, 127, False, 1000.0).fused(np.int32) is None
    assert ChannelRequantizer(m, s, None, 0, -128, 127, True, 1000.0).fused(np.int8) is None
    assert ChannelRequantizer(m, s, None, 0, -200, 127, False, 1000.0).fused(np.int8) is None
    assert isinstance(ChannelRequantizer(m, s, None, 0, -128, 127, False, 1000.0).fused(np.int8),
                      FusedRequant)


# ------------------------------------------------------------- the kernels end to end
def _centre_tap_case(op: str, per_channel: bool, seed: int, geometry, cin: int, shifts=None):
    """A CONV_2D or DEPTHWISE_CONV_2D with C = 6 output channels whose channel c computes
    bias_c + (x - zp) at the centre tap only (every other weight 0), so that every
    channel's accumulators sweep 256 consecutive values around a rounding boundary of its
    multiplier; expected outputs from the reference. The input has ``cin`` channels: a
    depthwise of multiplier 1 (``cin`` = C) reads channel c, each with its own order of
    the values; otherwise every output channel reads input channel 0 (a depthwise from
    one channel has depth multiplier C)."""
    rng = np.random.default_rng(seed)
    fh, fw, sh, sw = geometry
    C = 6
    # right shifts up to 12: the float64 plan (hence the fused output stage) applies
    if shifts is None:
        shifts = [int(v) for v in rng.integers(-12, 1, C)] if per_channel else [int(rng.integers(-12, 1))] * C
    s_in, s_out, chans = _kernel_channels("INT8", per_channel, shifts, rng)
    zp_in = int(rng.integers(-128, 128))
    zp_out = int(rng.integers(-20, 20))
    # 256 output pixels in a 16 x 16 image, each reading every channel at one input value
    values = np.arange(-128, 128, dtype=np.int64)
    out_h = out_w = 16
    # SAME padding (schema value 0): the centre tap of output (y, x) reads input pixel
    # (y sh + fh // 2 - pad_top, x sw + fw // 2 - pad_left), TFLM's padding rule
    in_h, in_w = out_h * sh, out_w * sw
    pad_top = max((out_h - 1) * sh + fh - in_h, 0) // 2
    pad_left = max((out_w - 1) * sw + fw - in_w, 0) // 2
    rows = np.arange(out_h) * sh + fh // 2 - pad_top
    cols = np.arange(out_w) * sw + fw // 2 - pad_left
    # the other pixels (read by the zero taps only) random
    x = rng.integers(-128, 128, (1, in_h, in_w, cin)).astype(np.int8)
    depthwise = op == "DEPTHWISE_CONV_2D"
    per_input = depthwise and cin == C        # channel c reads input channel c
    perms = ([rng.permutation(256) for _ in range(C)] if per_input
             else [rng.permutation(256)] * C)
    for c in (range(C) if per_input else [0]):
        x[0, rows[:, None], cols[None, :], c] = values[perms[c]].reshape(out_h, out_w)
    if depthwise:
        w = np.zeros((1, fh, fw, C), np.int8)
        w[0, fh // 2, fw // 2, :] = 1
        options = dict(depth_multiplier=C // cin)
    else:
        w = np.zeros((C, fh, fw, cin), np.int8)
        w[:, fh // 2, fw // 2, 0] = 1
        options = {}
    bias = np.array([center for _, center, _, _ in chans], np.int64)
    w_scales = [ws for ws, _, _, _ in chans]
    wq = (w_scales, [0] * C, 3 if depthwise else 0) if per_channel else ([w_scales[0]], [0])
    bq = ([s_in * ws for ws in w_scales], [0] * C) if per_channel else ([s_in * w_scales[0]], [0])
    model = single_op_model(
        op,
        [TensorDef((1, in_h, in_w, cin), "INT8", quant=(s_in, zp_in)),
         TensorDef(w.shape, "INT8", data=w, quant=wq),
         TensorDef((C,), "INT32", data=bias.astype(np.int32), quant=bq)],
        [TensorDef((1, out_h, out_w, C), "INT8", quant=(s_out, zp_out))],
        padding=0, stride_w=sw, stride_h=sh, **options)
    expected = np.empty((out_h * out_w, C), np.int64)
    for c, (_, center, m, s) in enumerate(chans):
        acc = values[perms[c]] - zp_in + center
        expected[:, c] = [min(max(ref_mbqm(int(a), m, s) + zp_out, -128), 127) for a in acc]
    return model, x, expected


def _depthwise_model(per_channel: bool, seed: int, geometry, shifts=None):
    """The sweep for a DEPTHWISE_CONV_2D of multiplier 1 over several input channels (the
    row layout)."""
    return _centre_tap_case("DEPTHWISE_CONV_2D", per_channel, seed, geometry, 6, shifts)


@pytest.mark.parametrize("geometry", [(3, 3, 1, 1), (3, 3, 2, 2), (5, 3, 2, 1), (1, 1, 1, 1), (3, 5, 1, 2)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_depthwise_rows_at_boundaries(geometry, per_channel):
    """The depthwise row layout (stride phases, computed-and-dropped columns, fused output
    stage) on accumulators around rounding boundaries, strides 1 and 2, against the
    reference; the test checks that the row layout is the path taken."""
    import kernels.depthwise_conv as dwmod
    for seed in range(3):
        model, x, expected = _depthwise_model(per_channel, seed, geometry)
        outs, _, it = run_ours(model, [x])
        assert np.array_equal(outs[0].reshape(-1, expected.shape[1]).astype(np.int64), expected)
        # the path taken: the node built a row-layout plan
        data = it.subgraphs[0].nodes[0].user_data
        assert data.rows is not None and isinstance(data.rows[1][0], dwmod.DepthwiseRows)


def _conv_model(per_channel: bool, seed: int, geometry, cin: int = 1):
    """The sweep for a CONV_2D of ``cin`` input channels (input channel 0 carries it)."""
    return _centre_tap_case("CONV_2D", per_channel, seed, geometry, cin)


@pytest.mark.parametrize("geometry", [(1, 1, 1, 1), (3, 3, 1, 1), (3, 3, 2, 2), (1, 1, 2, 2)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_conv_fused_product_at_boundaries(geometry, per_channel):
    """CONV_2D's folded float64 product (direct 1x1 and im2col, depths <= FUSED_MAX_DEPTH)
    on accumulators around rounding boundaries, against the reference; the test checks
    that the fused path is the one taken."""
    for seed in range(3):
        model, x, expected = _conv_model(per_channel, seed, geometry)
        outs, _, it = run_ours(model, [x])
        assert np.array_equal(outs[0].reshape(-1, expected.shape[1]).astype(np.int64), expected)
        data = it.subgraphs[0].nodes[0].user_data
        assert data.fused is not None and data.fused[1] is not None


@pytest.mark.parametrize("geometry, cin", [((1, 1, 1, 1), 20), ((3, 3, 1, 1), 4), ((3, 3, 2, 2), 8)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_conv_fused_output_stage_at_boundaries(geometry, cin, per_channel):
    """CONV_2D deeper than FUSED_MAX_DEPTH: the float32 product, then FusedRequant's
    scale_into and finish (rows of one sample's pixels), on accumulators around rounding
    boundaries, against the reference; the folded product is not the path taken."""
    for seed in range(3):
        model, x, expected = _conv_model(per_channel, seed, geometry, cin)
        outs, _, it = run_ours(model, [x])
        assert np.array_equal(outs[0].reshape(-1, expected.shape[1]).astype(np.int64), expected)
        data = it.subgraphs[0].nodes[0].user_data
        assert data.fused is not None and data.fused[1] is None
        assert data.cache[2].fused(np.int8) is not None


def _single_channel_depthwise_model(per_channel: bool, seed: int, geometry):
    """The sweep for a DEPTHWISE_CONV_2D from one input channel (depth multiplier C:
    every output channel reads the same input values, the im2col path of that case)."""
    return _centre_tap_case("DEPTHWISE_CONV_2D", per_channel, seed, geometry, 1)


@pytest.mark.parametrize("geometry", [(3, 3, 2, 2), (3, 3, 1, 1), (1, 1, 1, 1), (5, 5, 1, 1), (5, 4, 2, 2)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_single_channel_depthwise_fused_at_boundaries(geometry, per_channel):
    """DEPTHWISE_CONV_2D from one input channel (depth multiplier C): its folded float64
    product (up to FUSED_MAX_DEPTH taps), else the float product then FusedRequant's
    output stage, on accumulators around rounding boundaries; the test checks which."""
    from kernels.conv import FUSED_MAX_DEPTH
    for seed in range(3):
        model, x, expected = _single_channel_depthwise_model(per_channel, seed, geometry)
        outs, _, it = run_ours(model, [x])
        assert np.array_equal(outs[0].reshape(-1, expected.shape[1]).astype(np.int64), expected)
        data = it.subgraphs[0].nodes[0].user_data
        folded = geometry[0] * geometry[1] <= FUSED_MAX_DEPTH
        assert data.fused is not None and (data.fused[1] is not None) == folded
        assert data.cache[2].fused(np.int8) is not None


# --------------------------------------- channels of near-zero scale, unfolded offsets
def _dead_channel_case(seed: int, boundary_bias: bool):
    """Multipliers / shifts / biases / accumulators of a requantizer mixing ordinary channels
    (right shifts 0..10, boundary accumulators) with channels of shift -31 (total shift
    62: their outputs do not depend on the accumulator), and the accumulator bound."""
    rng = np.random.default_rng(seed)
    bound = 1 << 18
    normal = _boundary_table(-bound, bound, shifts=tuple(range(-10, 1)))[:20]
    dead = [(int(m), -31, None) for m in rng.choice([1 << 30, (1 << 31) - 1, 1234567891], 6)]
    table = normal + dead
    width = max(len(xs) for _, _, xs in normal)
    acc = np.zeros((len(table), width), np.int64)
    for c, (_, _, xs) in enumerate(table):
        if xs is None:
            xs = [-bound, bound, 0, 1, -1] + [int(v) for v in rng.integers(-bound, bound + 1, width - 5)]
        acc[c, :len(xs)] = xs
        acc[c, len(xs):] = xs[0]
    m = np.array([t[0] for t in table], np.int64)
    s = np.array([t[1] for t in table], np.int64)
    bias = rng.integers(-5000, 5000, len(table)).astype(np.int64)
    if boundary_bias:
        # a dead channel whose rounding boundary sits inside the accumulator range:
        # x * m + bias * m crosses -2^61 (SRDHM's q then RoundingDivideByPOT's tie)
        c = len(normal)
        bias[c] = -((1 << 61) // int(m[c])) - 1
    return table, acc, m, s, bias, float(bound)


@pytest.mark.parametrize("boundary_bias", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plan_with_constant_channels_and_unfolded_offset(seed, boundary_bias):
    """ChannelRequantizer's float64 plan with channels whose total shift is 62 (constant
    outputs, folded in as constants) and an output offset the integer form cannot fold
    (folded by the plan): the plan's own call and both FusedRequant paths against the
    reference; with a dead channel whose output does change within the bound, the plan
    is refused and the integer form still gives the reference."""
    table, acc, m, s, bias, bound = _dead_channel_case(seed, boundary_bias)
    C, N = acc.shape
    pre = acc - bias[:, None]
    for offset, lo, hi in ((-128, -128, 127), (-128, -128, -100), (37, -128, 127), (5, 5, 127)):
        rq = ChannelRequantizer(m, s, bias, offset, lo, hi, False, float(np.abs(pre).max()))
        want = np.empty((N, C), np.int64)
        for c in range(C):
            for j in range(N):
                want[j, c] = min(max(ref_mbqm(int(acc[c, j]), int(m[c]), int(s[c])) + offset, lo), hi)
        got = np.asarray(rq(pre.astype(np.float32))).astype(np.int64)
        assert np.array_equal(got.T, want), f"offset {offset}: ChannelRequantizer differs"
        if boundary_bias:
            assert rq.float64 is None, "a dead channel that changes within the bound was taken as constant"
            continue
        assert rq.float64 is not None and rq._constant[0][-6:].all() and not rq._constant[0][:-6].any()
        fused = rq.fused(np.int8)
        cols = np.ones((N, C + 1))
        cols[:, :C] = pre.T
        t = cols @ fused.weights(np.eye(C, dtype=np.int64))
        out = np.empty((N, C), np.int8)
        fused.finish(t, out)
        assert np.array_equal(out.astype(np.int64), want), f"offset {offset}: fused product differs"
        rows = pre.T.astype(np.float32).reshape(N // 2, 2 * C) if N % 2 == 0 else pre.T.astype(np.float32)
        reps = 2 if N % 2 == 0 else 1
        t2 = np.empty(rows.shape)
        fused.scale_into(rows, t2, reps)
        out2 = np.empty(rows.shape, np.int8)
        fused.finish(t2, out2, reps)
        assert np.array_equal(out2.reshape(N, C).astype(np.int64), want), f"offset {offset}: scale path differs"


# ------------------------------------------------------------------ run-time bounds
def test_runtime_bound_plan_at_boundaries():
    """A requantizer whose static accumulator bound is too large for the float64 plan gets
    the plan for the largest bound B it allows, used only on calls whose accumulators lie
    within +-B: boundary accumulators inside (the plan) and the same with values beyond B
    added (the integer form), against the reference, for the requantizer and its fused
    stage."""
    static = float(1 << 22)
    for shift in (-4, -8, -12):
        table = _boundary_table(-(1 << 19), 1 << 19, shifts=(shift,))
        acc, m, s = _channel_matrix(table)
        for offset, lo, hi in ((-37, -128, 127), (0, -128, 127)):
            rq = ChannelRequantizer(m, s, None, offset, lo, hi, False, static)
            assert rq.runtime_bound is not None and rq.float64 is not None
            bound = int(rq.runtime_bound)
            assert (1 << 19) <= bound < static
            over = np.concatenate([acc, np.full((acc.shape[0], 2), bound + 1, np.int64),
                                   np.full((acc.shape[0], 1), -bound - 1, np.int64),
                                   np.full((acc.shape[0], 2), bound, np.int64)], axis=1)
            for data in (acc, over):
                want = np.array([[min(max(ref_mbqm(int(v), int(m[c]), int(s[c])) + offset, lo), hi)
                                  for v in data[c]] for c in range(data.shape[0])])
                inside = bool(np.abs(data).max() <= bound)
                assert rq.covers(data.astype(np.float32)) == inside
                got = np.asarray(rq(data.astype(np.float64))).astype(np.int64)
                assert np.array_equal(got, want), f"shift {shift}, offset {offset}, inside {inside}"
                fused = rq.fused(np.int8)
                assert fused.runtime_bound == rq.runtime_bound
                if inside:
                    t = np.empty(data.T.shape)
                    fused.scale_into(data.T.astype(np.float64), t)
                    out = np.empty(data.T.shape, np.int8)
                    fused.finish(t, out)
                    assert np.array_equal(out.T.astype(np.int64), want)


def _wide_sum_model(op: str, seed: int):
    """A one-pixel CONV_2D (1x1, 40 input channels) or DEPTHWISE_CONV_2D (7x7 VALID, 4
    channels) with all weights 127: the static accumulator bound (40 or 49 x 127 x 255)
    exceeds the run-time bound (about 2^51 / m, m near 2^31) of its float64 plan."""
    rng = np.random.default_rng(seed)
    C = 4
    s_in, s_out, chans = _kernel_channels("INT8", True, [-9, -10, -11, -9], rng)
    zp_in, zp_out = -128, int(rng.integers(-20, 20))
    bias = rng.integers(-3000, 3000, C).astype(np.int64)
    w_scales = [ws for ws, _, _, _ in chans]
    bq = ([s_in * ws for ws in w_scales], [0] * C)
    if op == "CONV_2D":
        in_shape, w = (1, 1, 1, 40), np.full((C, 1, 1, 40), 127, np.int8)
        wq, options = (w_scales, [0] * C, 0), dict(padding=1, stride_w=1, stride_h=1)
    else:
        in_shape, w = (1, 7, 7, C), np.full((1, 7, 7, C), 127, np.int8)
        wq, options = (w_scales, [0] * C, 3), dict(padding=1, stride_w=1, stride_h=1, depth_multiplier=1)
    model = single_op_model(
        op, [TensorDef(in_shape, "INT8", quant=(s_in, zp_in)), TensorDef(w.shape, "INT8", data=w, quant=wq),
             TensorDef((C,), "INT32", data=bias.astype(np.int32), quant=bq)],
        [TensorDef((1, 1, 1, C), "INT8", quant=(s_out, zp_out))], **options)
    return model, in_shape, bias, chans, zp_in, zp_out


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_runtime_bound_in_the_kernels(op):
    """Inputs whose sums stay within the run-time bound (the fused stage) and inputs at the
    top of the range (sums beyond it: the integer form), end to end, against the
    reference on sums computed here."""
    for seed in range(2):
        model, in_shape, bias, chans, zp_in, zp_out = _wide_sum_model(op, seed)
        rng = np.random.default_rng(seed + 10)
        took_plan = False
        for kind in ("small", "top", "mixed"):
            if kind == "small":
                x = rng.integers(-128, -100, in_shape)
            elif kind == "top":
                x = np.full(in_shape, 127)
            else:
                x = rng.integers(-128, 128, in_shape)
            x = x.astype(np.int8)
            outs, _, it = run_ours(model, [x])
            shifted = x.astype(np.int64) - zp_in
            sums = (shifted.reshape(-1).sum() * 127 + bias if op == "CONV_2D"
                    else shifted.reshape(-1, len(bias)).sum(axis=0) * 127 + bias)
            want = [min(max(ref_mbqm(int(sums[c]), m, s) + zp_out, -128), 127)
                    for c, (_, _, m, s) in enumerate(chans)]
            assert outs[0].reshape(-1).astype(np.int64).tolist() == want, (op, kind)
            rq = it.subgraphs[0].nodes[0].user_data.cache[2]
            assert rq.runtime_bound is not None
            within = bool(np.abs(sums - bias).max() <= rq.runtime_bound)
            took_plan |= within
            if kind == "top":
                assert not within     # the integer form's branch is the one exercised
        assert took_plan


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_runtime_filter_cache_follows_the_values(op):
    """A filter given at run time (a model input): the cache built from its values is reused
    only while they repeat; changed values give the outputs of the new filter (reference
    on sums computed here), and the first filter again its own."""
    rng = np.random.default_rng(5)
    C = 3
    s_in, s_out, chans = _kernel_channels("INT8", False, [-8] * C, rng)
    s_w = chans[0][0]
    m, s = chans[0][2], chans[0][3]
    zp_in, zp_out = 3, -2
    bias = np.array([100, -200, 300], np.int64)
    if op == "CONV_2D":
        w_shape, options = (C, 1, 1, 2), dict(padding=1, stride_w=1, stride_h=1)
        in_shape = (1, 4, 4, 2)
    else:
        w_shape, options = (1, 1, 1, C), dict(padding=1, stride_w=1, stride_h=1, depth_multiplier=1)
        in_shape = (1, 4, 4, C)
    model = single_op_model(
        op, [TensorDef(in_shape, "INT8", quant=(s_in, zp_in)),
             TensorDef(w_shape, "INT8", quant=([s_w], [0])),
             TensorDef((C,), "INT32", data=bias.astype(np.int32), quant=([s_in * s_w], [0]))],
        [TensorDef(in_shape[:3] + (C,), "INT8", quant=(s_out, zp_out))], **options)
    x = rng.integers(-128, 128, in_shape).astype(np.int8)
    filters = [rng.integers(-127, 128, w_shape).astype(np.int8) for _ in range(2)]
    from micro_runtime import MicroInterpreter
    it = MicroInterpreter(model, arena_size=1 << 20, target="host64")
    it.allocate_tensors()
    for w in (filters[0], filters[0], filters[1], filters[0]):
        it.set_input(x, 0)
        it.set_input(w, 1)
        it.invoke()
        got = np.array(it.output(0)).reshape(-1, C).astype(np.int64)
        shifted = x.astype(np.int64).reshape(-1, in_shape[3]) - zp_in
        sums = (shifted @ w.astype(np.int64).reshape(C, -1).T if op == "CONV_2D"
                else shifted * w.astype(np.int64).reshape(1, C)) + bias
        want = np.array([[min(max(ref_mbqm(int(v), m, s) + zp_out, -128), 127) for v in row] for row in sums])
        assert np.array_equal(got, want)


def test_runtime_bound_with_constant_channels():
    """A run-time bound plan next to channels of total shift 62 (no room at all in the
    float64 range: they must be constant over the bound): within the bound, the plan;
    beyond it, the integer form; both against the reference."""
    table, acc, m, s, bias, bound = _dead_channel_case(0, False)
    pre = acc - bias[:, None]
    rq = ChannelRequantizer(m, s, bias, -128, -128, 127, False, float(1 << 22))
    assert rq.runtime_bound is not None and rq.float64 is not None
    assert rq._constant[0][-6:].all()
    big = np.concatenate([pre, np.full((pre.shape[0], 1), int(rq.runtime_bound) + 5, np.int64)], axis=1)
    for data in (pre, big):
        got = np.asarray(rq(data.astype(np.float64))).astype(np.int64)
        full = data + bias[:, None]
        want = np.array([[min(max(ref_mbqm(int(v), int(m[c]), int(s[c])) - 128, -128), 127) for v in full[c]]
                         for c in range(full.shape[0])])
        assert np.array_equal(got, want)



@pytest.mark.parametrize("geometry", [(3, 3, 1, 1), (3, 3, 2, 2)])
def test_depthwise_rows_integer_stage_at_boundaries(geometry):
    """The row layout's sums through the integer output stage (left shifts and total shifts
    past the float64 range: no fused form), around rounding boundaries, against the
    reference; the row layout is the path taken."""
    import kernels.depthwise_conv as dwmod
    for seed in range(3):
        model, x, expected = _depthwise_model(True, seed, geometry, shifts=[2, 1, -22, -24, 0, -5])
        outs, _, it = run_ours(model, [x])
        assert np.array_equal(outs[0].reshape(-1, expected.shape[1]).astype(np.int64), expected)
        data = it.subgraphs[0].nodes[0].user_data
        assert isinstance(data.rows[1][0], dwmod.DepthwiseRows) and data.rows[1][1] is None
