"""Seeded single-op models for the CMSIS-NN kernel variants of UNIDIRECTIONAL_SEQUENCE_LSTM,
SVDF, TRANSPOSE_CONV, BATCH_MATMUL, MAXIMUM / MINIMUM, PAD and TRANSPOSE: random shapes
and quantisation, with the edge cases where CMSIS-NN's arithmetic or allocations part
from the reference kernels (non-zero state zero points, saturating recurrent terms,
int16 dot products longer than CMSIS-NN's 512-column fast path, non-TANH cell gates,
MVE-only buffers ...).

``generate(op, count, seed)`` returns ``[(name, model bytes, [input arrays])]``, the same
for the same arguments. tests/record_cmsis_nn_cases.py writes them with the Cortex-M
oracle's figures into tests/data/cmsis_nn_cases/; the tests read the stored models, so
changing a generator here changes nothing until the cases are recorded again.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import numpy as np

from tests.helpers import TensorDef, single_op_model
from tests.test_op_svdf import svdf_model
from tests.test_op_unidirectional_sequence_lstm import Spec, input_generator, lstm_model, rng_gen

Case = Tuple[str, bytes, List[np.ndarray]]

TANH = 4


def _f32(x: float) -> float:
    return float(np.float32(x))


def _log_uniform(rng, lo: float, hi: float) -> float:
    return _f32(np.exp(rng.uniform(np.log(lo), np.log(hi))))


# ------------------------------------------------------------------------- LSTM
def _lstm_quantization(rng, kind: str, n_input: int, n_state: int, recurrent_boost: float):
    """Scales putting the gate sums mostly inside the Q3.12 range; ``recurrent_boost``
    > 1 makes the recurrent term saturate int16 on its own."""
    spread = lambda: 2.0 ** rng.uniform(-3.0, 1.0)
    if kind == "int8":
        s_in, zp_in = _log_uniform(rng, 2e-3, 0.2), int(rng.integers(-128, 128))
        x_typical = 100.0
        s_h = _f32(2.0 ** rng.uniform(-8.0, -5.0))
        zp_h = int(rng.choice([0, int(rng.integers(-128, 128))]))
        h_typical = min(0.5 / s_h, 100.0)
    else:
        s_in, zp_in = _log_uniform(rng, 1e-4, 1e-2), 0
        x_typical = 19000.0
        s_h = _f32(2.0 ** rng.uniform(-15.0, -12.0))
        zp_h = 0
        h_typical = min(0.5 / s_h, 19000.0)
    s_w_in = [_f32(3.0 * spread() / (s_in * 74.0 * x_typical * np.sqrt(n_input)))
              for _ in range(4)]
    s_w_rec = [_f32(3.0 * spread() * recurrent_boost / (s_h * 74.0 * h_typical * np.sqrt(n_state)))
               for _ in range(4)]
    bias_range = [int(min(2.0 / (s_in * w), 2 ** 30)) for w in s_w_in]
    if rng.random() < 0.5:
        s_cell = 2.0 ** -int(rng.integers(8, 16))
    else:
        s_cell = _log_uniform(rng, 2.0 ** -15, 2.0 ** -8)
    return dict(s_in=s_in, zp_in=zp_in, s_h=s_h, zp_h=zp_h, s_w_in=s_w_in, s_w_rec=s_w_rec,
                bias_range=bias_range, s_cell=s_cell)


def lstm_case(rng, index: int) -> Tuple[str, bytes, List[np.ndarray]]:
    kinds = ("int8", "int8", "int16", "int8", "int16", "float32")
    kind = kinds[index % len(kinds)]
    time_major = bool(rng.integers(0, 2))
    batch, steps = int(rng.integers(1, 4)), int(rng.integers(1, 7))
    n_input, n_state = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    if kind == "int16" and index % 4 == 2:
        n_input = int(rng.integers(513, 600))      # past CMSIS-NN's 32-bit fast path
    activation = TANH if rng.random() < 0.7 else int(rng.choice([0, 1, 3, 6]))
    cell_clip = 0.0 if rng.random() < 0.5 else _f32(rng.uniform(0.05, 20.0))
    boost = 1.0 if rng.random() < 0.6 else 40.0
    q = _lstm_quantization(rng, kind, n_input, n_state, boost) if kind != "float32" else None
    spec = Spec(kind, batch, steps, n_input, n_state, time_major, activation, cell_clip,
                int(kind == "int8" and rng.random() < 0.3), q)
    gen = rng_gen(rng)
    model = lstm_model(spec, gen)
    x = input_generator(spec, gen)()
    name = (f"lstm_{index:02d}_{kind}_{'tm' if time_major else 'bm'}_b{batch}_t{steps}"
            f"_i{n_input}_s{n_state}_act{activation}")
    return name, model, [x]


def trained_lstm_layer(rng) -> Tuple[bytes, np.ndarray]:
    """The layer of tests/data/trained_lstm_int8.tflite (28 x 28 inputs, 20 cells)."""
    q = dict(s_in=0.00392157, zp_in=-128, s_h=0.00781679, zp_h=0,
             s_w_in=[0.01177761, 0.00936705, 0.00740102, 0.00898651],
             s_w_rec=[0.00822722, 0.00494504, 0.00578341, 0.00928544],
             bias_range=[20000] * 4, s_cell=2.0 ** -12)
    spec = Spec("int8", 1, 28, 28, 20, False, TANH, 10.0, 1, q)
    gen = rng_gen(rng)
    return lstm_model(spec, gen), input_generator(spec, gen)()


# ------------------------------------------------------------------------- SVDF
def _svdf_quantization(rng, kind: str, input_size: int, memory: int, rank: int):
    spread = lambda: 2.0 ** rng.uniform(-3.0, 2.0)
    s_in, s_wf = _log_uniform(rng, 1e-3, 0.5), _log_uniform(rng, 1e-3, 0.05)
    typical_dot = 100.0 * 74.0 * np.sqrt(input_size)
    if kind == "int8_state16":
        state_max, wt_typical = 32767, 19000.0
        zp_state = 0
        s_wt = _log_uniform(rng, 1e-5, 5e-3)
    else:
        state_max, wt_typical = 127, 74.0
        zp_state = int(rng.integers(-128, 128))
        s_wt = _log_uniform(rng, 1e-3, 0.05)
    target_state = state_max / 4 * spread()
    s_state = _f32(s_in * s_wf * typical_dot / target_state)
    typical_acc = wt_typical * min(target_state, state_max) * np.sqrt(memory * rank)
    s_out = _f32(s_state * s_wt * typical_acc / (64 * spread()))
    q = (s_in, int(rng.integers(-128, 128)), s_wf, s_state, zp_state, s_wt, s_out,
         int(rng.integers(-128, 128)))
    return q, int(min(typical_acc, 2 ** 30))


def svdf_case(rng, index: int) -> Case:
    kinds = ("int8_state16", "int8_state8", "int8_state16", "int8_state8", "float32")
    kind = kinds[index % len(kinds)]
    batch, input_size = int(rng.integers(1, 5)), int(rng.integers(1, 25))
    units, rank, memory = int(rng.integers(1, 9)), int(rng.integers(1, 4)), int(rng.integers(1, 9))
    activation = int(rng.integers(0, 6))
    q, bias_range = (_svdf_quantization(rng, kind, input_size, memory, rank)
                     if kind != "float32" else (None, 0))
    model, make_input = svdf_model(kind, batch, input_size, units, rank, memory, rng=rng,
                                   activation=activation, q=q, bias_range=bias_range)
    name = f"svdf_{index:02d}_{kind}_b{batch}_i{input_size}_u{units}_r{rank}_m{memory}"
    return name, model, [make_input()]


# ------------------------------------------------------------------ TRANSPOSE_CONV
PADDING_SAME, PADDING_VALID = 0, 1


def transpose_conv_case(rng, index: int) -> Case:
    """int8 through CMSIS-NN's ring buffer (few input channels, any stride) or its
    reverse convolution (> 16 channels, strides <= 2), int16 (bias int64 / int16 /
    none), float32; fused activations (ignored by the quantized CMSIS-NN paths);
    occasionally an output size that is not the padding's natural one."""
    kinds = ("int8", "int8_wide", "int8", "int16", "int8", "float32", "int16_int16_bias", "int8_wide")
    kind = kinds[index % len(kinds)]
    batches = int(rng.integers(1, 3))
    in_h, in_w = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    if kind == "int8_wide":
        sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        in_c = int(rng.integers(17, 40))
    else:
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        in_c = int(rng.integers(1, 17))
    out_c = int(rng.integers(1, 9))
    pad = int(rng.integers(0, 2))

    def natural(size, k, s):
        return size * s if pad == PADDING_SAME else (size - 1) * s + k
    out_h, out_w = natural(in_h, kh, sh), natural(in_w, kw, sw)
    if rng.random() < 0.15:
        out_h = int(rng.integers(1, in_h * sh + kh + 1))
    act = int(rng.choice([0, 0, 1, 3]))
    options = dict(padding=pad, stride_w=sw, stride_h=sh, fused_activation_function=act)
    x_shape, w_shape = (batches, in_h, in_w, in_c), (out_c, kh, kw, in_c)
    o_shape = (batches, out_h, out_w, out_c)
    shape_t = TensorDef((4,), "INT32", data=np.array(o_shape, np.int32))
    name = (f"tconv_{index:02d}_{kind}_b{batches}_in{in_h}x{in_w}x{in_c}_k{kh}x{kw}_s{sh}x{sw}"
            f"_{'same' if pad == PADDING_SAME else 'valid'}_out{out_h}x{out_w}x{out_c}_act{act}")
    if kind == "float32":
        w = rng.uniform(-1, 1, w_shape).astype(np.float32)
        inputs = [shape_t, TensorDef(w_shape, "FLOAT32", data=w), TensorDef(x_shape, "FLOAT32")]
        if rng.random() < 0.7:
            inputs.append(TensorDef((out_c,), "FLOAT32",
                                    data=rng.uniform(-1, 1, out_c).astype(np.float32)))
        model = single_op_model("TRANSPOSE_CONV", inputs, [TensorDef(o_shape, "FLOAT32")], **options)
        return name, model, [rng.uniform(-3, 3, x_shape).astype(np.float32)]
    io = "int16" if kind.startswith("int16") else "int8"
    info = np.iinfo(io)
    in_zp = int(rng.integers(-128, 128)) if io == "int8" else 0
    out_zp = int(rng.integers(-128, 128)) if io == "int8" else 0
    in_scale = _log_uniform(rng, 1e-3, 0.1) if io == "int8" else _log_uniform(rng, 1e-4, 1e-2)
    per_channel = rng.random() < 0.7
    fscales = [_log_uniform(rng, 1e-3, 0.05) for _ in range(out_c if per_channel else 1)]
    taps = max(1, -(-kh // sh)) * max(1, -(-kw // sw)) * in_c
    typical = (100.0 if io == "int8" else 19000.0) * 74.0 * np.sqrt(taps)
    out_scale = _f32(in_scale * float(np.mean(fscales)) * typical
                     / ((32.0 if io == "int8" else 8000.0) * 2.0 ** rng.uniform(-2, 2)))
    fq = (np.array(fscales, np.float32), np.zeros(len(fscales), np.int64), 0) if per_channel \
        else (fscales[0], 0)
    inputs = [shape_t, TensorDef(w_shape, "INT8", data=rng.integers(-127, 128, w_shape).astype(np.int8),
                                 quant=fq),
              TensorDef(x_shape, io.upper(), quant=(in_scale, in_zp))]
    bias_scales = np.array([_f32(in_scale * f) for f in fscales], np.float32)
    bq = (bias_scales, np.zeros(len(fscales), np.int64), 0) if per_channel else (float(bias_scales[0]), 0)
    if kind == "int16":
        inputs.append(TensorDef((out_c,), "INT64",
                                data=rng.integers(-(1 << 20), 1 << 20, out_c).astype(np.int64), quant=bq))
    elif kind == "int16_int16_bias":
        inputs.append(TensorDef((out_c,), "INT16",
                                data=rng.integers(-30000, 30000, out_c).astype(np.int16), quant=bq))
    elif rng.random() < 0.75:
        inputs.append(TensorDef((out_c,), "INT32",
                                data=rng.integers(-20000, 20000, out_c).astype(np.int32), quant=bq))
    model = single_op_model("TRANSPOSE_CONV", inputs,
                            [TensorDef(o_shape, io.upper(), quant=(out_scale, out_zp))], **options)
    x = rng.integers(info.min, int(info.max) + 1, x_shape).astype(io)
    return name, model, [x]


# ----------------------------------------------------------- MAXIMUM / MINIMUM
_MAXMIN_SHAPES = (
    ((2, 3, 4, 5), (2, 3, 4, 5)), ((1, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (1,)),
    ((2, 1, 4, 5), (2, 3, 4, 5)), ((2, 3, 1, 5), (2, 3, 4, 5)), ((2, 3, 4, 1), (2, 3, 4, 5)),
    ((2, 1, 4, 1), (2, 3, 4, 5)), ((1, 3, 1, 5), (2, 3, 4, 5)), ((3, 4, 5), (5,)),
    ((4, 1), (1, 6)), ((7,), (7,)), ((2, 3, 1, 1), (1, 3, 1, 1)), ((1, 1, 4, 5), (3, 1, 4, 5)),
    ((5, 1, 3), (5, 2, 3)),
    # CMSIS-NN's walk leaves the first input here (one value per row, broadcast against
    # wider rows): TFLM reads past it, the emulator refuses the node
    ((1, 3, 1, 1), (1, 3, 4, 5)), ((2, 1, 1, 1), (2, 3, 4, 5)),
)


def maximum_minimum_case(rng, index: int) -> Case:
    """int8 with same shapes and every broadcasting pattern of CMSIS-NN's pointer walk;
    int16 / float32 / int32 (reference code)."""
    op = "MAXIMUM" if index % 2 == 0 else "MINIMUM"
    shapes = _MAXMIN_SHAPES[(index // 2) % len(_MAXMIN_SHAPES)]
    if rng.random() < 0.5:
        shapes = shapes[::-1]
    dtype = "int8" if index % 5 != 4 else str(rng.choice(["int16", "float32", "int32"]))
    out_shape = tuple(np.broadcast_shapes(*shapes))
    quant = (0.05, 3) if dtype in ("int8", "int16") else None
    model = single_op_model(op, [TensorDef(shapes[0], dtype.upper(), quant=quant),
                                 TensorDef(shapes[1], dtype.upper(), quant=quant)],
                            [TensorDef(out_shape, dtype.upper(), quant=quant)])
    if dtype == "float32":
        xs = [rng.uniform(-4, 4, s).astype(np.float32) for s in shapes]
    else:
        info = np.iinfo(dtype)
        xs = [rng.integers(info.min, int(info.max) + 1, s).astype(dtype) for s in shapes]
    name = (f"maxmin_{index:02d}_{op.lower()}_{dtype}_{'x'.join(map(str, shapes[0]))}"
            f"_{'x'.join(map(str, shapes[1]))}")
    return name, model, xs


# ------------------------------------------------------------------------ PAD
def pad_case(rng, index: int) -> Case:
    """int8 (arm_pad_s8) of rank 1..5 with and without a constant value, PADV2;
    float32 / int16 / int32 (reference code)."""
    rank = (1, 2, 3, 4, 4, 5)[index % 6]
    dtype = "int8" if index % 4 != 3 else str(rng.choice(["int16", "float32", "int32"]))
    shape = tuple(int(v) for v in rng.integers(1, 5, rank))
    pads = rng.integers(0, 3, (rank, 2)).astype(np.int32)
    out_shape = tuple(int(d + a + b) for d, (a, b) in zip(shape, pads))
    zp = int(rng.integers(-128, 128)) if dtype == "int8" else 0
    quant = (0.05, zp) if dtype in ("int8", "int16") else None
    op = "PADV2" if rng.random() < 0.4 else "PAD"
    inputs = [TensorDef(shape, dtype.upper(), quant=quant),
              TensorDef((rank, 2), "INT32", data=pads)]
    if op == "PADV2":
        value = (np.array([rng.uniform(-2, 2)], np.float32) if dtype == "float32" else
                 np.array([rng.integers(-100, 100)], dtype))
        inputs.append(TensorDef((1,), dtype.upper(), quant=quant, data=value))
    model = single_op_model(op, inputs, [TensorDef(out_shape, dtype.upper(), quant=quant)])
    if dtype == "float32":
        x = rng.uniform(-4, 4, shape).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)
    name = f"pad_{index:02d}_{op.lower()}_{dtype}_{'x'.join(map(str, shape))}"
    return name, model, [x]


# ------------------------------------------------------------------ TRANSPOSE
def transpose_case(rng, index: int) -> Case:
    """int8 (arm_transpose_s8) of rank 1..4 with random and identity permutations, rank
    5 (refused by CMSIS-NN for int8); float32 / int16 (reference code)."""
    rank = (1, 2, 2, 3, 4, 4, 3, 5)[index % 8]
    dtype = "int8" if index % 5 != 4 else str(rng.choice(["int16", "float32"]))
    shape = tuple(int(v) for v in rng.integers(1, 6, rank))
    perm = np.arange(rank) if (index % 3 == 1) else rng.permutation(rank)
    out_shape = tuple(shape[p] for p in perm)
    quant = (0.05, 1) if dtype in ("int8", "int16") else None
    model = single_op_model("TRANSPOSE", [TensorDef(shape, dtype.upper(), quant=quant),
                                          TensorDef((rank,), "INT32", data=perm.astype(np.int32))],
                            [TensorDef(out_shape, dtype.upper(), quant=quant)])
    if dtype == "float32":
        x = rng.uniform(-4, 4, shape).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)
    name = f"transpose_{index:02d}_{dtype}_{'x'.join(map(str, shape))}_p{''.join(map(str, perm))}"
    return name, model, [x]


# --------------------------------------------------------------- BATCH_MATMUL
def batch_matmul_case(rng, index: int) -> Case:
    """int8 (zero points any), int16 (zero points 0), float32; ranks 2..4 with broadcast
    batch dimensions (a broadcast rhs dimension folded by TFLM's CMSIS-NN glue
    included), adj_x / adj_y, constant or run-time rhs."""
    kind = ("int8", "int16", "int8", "float32", "int8", "int16")[index % 6]
    rank_a, rank_b = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    rank = max(rank_a, rank_b)
    batch = [int(v) for v in rng.integers(1, 4, rank - 2)]
    m, k, n = (int(v) for v in rng.integers(1, 9, 3))
    if index % 4 == 1:
        k = int(rng.integers(16, 80))

    def batch_dims(r):
        dims = batch[len(batch) - (r - 2):] if r > 2 else []
        return [d if rng.random() < 0.7 else 1 for d in dims]
    ba, bb = batch_dims(rank_a), batch_dims(rank_b)
    adj_x, adj_y = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    a_shape = tuple(ba + ([k, m] if adj_x else [m, k]))
    b_shape = tuple(bb + ([n, k] if adj_y else [k, n]))
    ext_a = [1] * (rank - len(ba) - 2) + ba
    ext_b = [1] * (rank - len(bb) - 2) + bb
    out_shape = tuple(max(x, y) for x, y in zip(ext_a, ext_b)) + (m, n)
    const_rhs = rng.random() < 0.5
    if kind == "float32":
        a = rng.uniform(-2, 2, a_shape).astype(np.float32)
        b = rng.uniform(-2, 2, b_shape).astype(np.float32)
        qa = qb = qo = None
    else:
        info = np.iinfo(kind)
        a = rng.integers(info.min, int(info.max) + 1, a_shape).astype(kind)
        b = rng.integers(info.min, int(info.max) + 1, b_shape).astype(kind)
        zp = (lambda: int(rng.integers(-128, 128))) if kind == "int8" else (lambda: 0)
        sa, sb = _log_uniform(rng, 1e-3, 0.1), _log_uniform(rng, 1e-3, 0.1)
        typical = (74.0 if kind == "int8" else 19000.0) ** 2 * np.sqrt(k)
        so = _f32(sa * sb * typical / ((40.0 if kind == "int8" else 10000.0) * 2.0 ** rng.uniform(-2, 2)))
        qa, qb, qo = (sa, zp()), (sb, zp()), (so, zp())
    dt = kind.upper()
    inputs = [TensorDef(a_shape, dt, quant=qa),
              TensorDef(b_shape, dt, quant=qb, data=b if const_rhs else None)]
    model = single_op_model("BATCH_MATMUL", inputs, [TensorDef(out_shape, dt, quant=qo)],
                            adj_x=adj_x, adj_y=adj_y)
    name = (f"bmm_{index:02d}_{kind}_{'x'.join(map(str, a_shape))}_{'x'.join(map(str, b_shape))}"
            f"_adj{int(adj_x)}{int(adj_y)}{'_const' if const_rhs else ''}")
    return name, model, [a] if const_rhs else [a, b]


#: op module name -> case builder (rng, index) -> (name, model, inputs)
BUILDERS: Dict[str, Callable] = {
    "unidirectional_sequence_lstm": lstm_case,
    "svdf": svdf_case,
    "transpose_conv": transpose_conv_case,
    "maximum_minimum": maximum_minimum_case,
    "pad": pad_case,
    "transpose": transpose_case,
    "batch_matmul": batch_matmul_case,
}


def generate(op: str, count: int, seed: int) -> List[Case]:
    """``count`` cases of ``op`` (a key of :data:`BUILDERS`) from ``seed``."""
    rng = np.random.default_rng(seed)
    cases = [BUILDERS[op](rng, i) for i in range(count)]
    if op == "unidirectional_sequence_lstm":
        # the zoo's trained_lstm_int8 layer on a random input (its output through the
        # zoo model's softmax saturates, so the layer is checked on its own)
        model, x = trained_lstm_layer(np.random.default_rng(seed + 1000))
        cases.append(("lstm_trained_layer", model, [x]))
        cases.append(("lstm_int16_wide_extreme", *lstm_int16_extreme()))
    return cases


def lstm_int16_extreme() -> Tuple[bytes, List[np.ndarray]]:
    """An int16 LSTM whose input dot products leave int32 within CMSIS-NN's 512-column
    fast path: 600 inputs of -32768 times input weights of -128 (2^22 a column, 2^31
    after 512): DSP cores wrap that partial sum, no-DSP cores sum in 64 bits."""
    rng = np.random.default_rng(77)
    n_input, n_state = 600, 3
    q = dict(s_in=1e-4, zp_in=0, s_h=_f32(2.0 ** -13), zp_h=0,
             s_w_in=[_f32(1e-6)] * 4, s_w_rec=[_f32(1e-3)] * 4, bias_range=[1000] * 4,
             s_cell=2.0 ** -11)
    spec = Spec("int16", 1, 2, n_input, n_state, False, TANH, 0.0, 0, q)

    def gen(shape, dtype, lo=None, hi=None):
        if dtype == "int8" and tuple(shape) == (n_state, n_input):
            return np.full(shape, -128, np.int8)
        return rng_gen(rng)(shape, dtype, lo, hi)
    model = lstm_model(spec, gen)
    return model, [np.full(spec.input_shape, -32768, np.int16)]

# CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, SOFTMAX, pooling, ADD and MUL
from tests.cmsis_nn_group1_cases import BUILDERS as _GROUP1_BUILDERS  # noqa: E402

BUILDERS.update(_GROUP1_BUILDERS)
