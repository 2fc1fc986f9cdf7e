"""UNIDIRECTIONAL_SEQUENCE_LSTM as TFLM's kernel: the standard LSTM (all four gates, no
peephole, no projection, no layer norm), time-major or batch-major, in three type paths:

* float32 everywhere;
* int8 activations (input, hidden state, output), int8 weights, int32 biases, int16 cell
  state ("8x8->16");
* int16 activations, int8 weights, int64 biases, int16 cell state ("16x8->16").

Integer step, per gate: int16 = requant(FC(input) + bias) saturating-plus
requant(FC(hidden)) with the FC outputs on a fixed 2^-12 scale, then the int16 sigmoid
read from TFLM's sigmoid table; the cell gate takes the builtin activation instead (TANH;
any other value leaves the sum as it is, which is what TFLM's release build does after
its debug assertion). The cell state becomes forget*cell + input*cell_gate (int16
multiplies requantised to the cell scale, saturating add, clip at cell_clip when > 0),
the hidden state tanh(cell)*output_gate (tanh input scaled by the cell scale's rounded
log2) requantised to the hidden state's scale and zero point; the output at each step is
a copy of the hidden state. Multipliers come from the tensors' scales as in TFLM's
prepare (the LSTM's intermediate tensors are not read).

Vectorisation: batches are independent, so both layouts are computed for every batch at
once per time step (TFLM walks batch-major inputs one batch at a time; the arithmetic is
the same), the four gates' weights sit side by side (one matmul per FC kind), and the
input FCs of all time steps are computed before the time loop. The int8 path runs
:class:`_FastInt8Plan` where its preconditions hold (checked in prepare: accumulators that
cannot wrap, sums exact in float64, multipliers as QuantizeMultiplier makes them): the
same integer results in folded passes (kernels/internal/folded_stages.py), gate layout
(gate rows, samples). Float32 FC sums keep
TFLM's order (sequential over depth); sigmoid / tanh are the C library's expf / tanhf
(glibc's; newlib's on Cortex-M: :mod:`kernels.internal.float_math`).
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import batch_axis_rows
from .internal.float_math import FloatMath, math_for
from .internal.folded_stages import FoldedFcStage, ProductRequant
from .internal.libm_float import ACT_SIGMOID, sigmoid_reference_float
from .internal.lut import apply_int16_table, int16_table, logistic_int16, tanh_int16
from .internal.matmul import exact_float_dtype, exact_int_matmul, float32_sequential_matmul
from .internal.quantization import (c_float_to_int32, ieee_div, wrap_int16, ACT_TANH, ChannelRequantizer, checked_log2, clip_into, multiply_by_quantized_multiplier,
                           multiply_by_quantized_multiplier_64, quantize_multiplier,
                           quantized_convolution_multiplier, wrap_int32)
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, INT64, flat_size, type_name

INPUT = 0
INPUT_WEIGHTS = (1, 2, 3, 4)            # input-to-{input, forget, cell, output}
RECURRENT_WEIGHTS = (5, 6, 7, 8)        # recurrent-to-{input, forget, cell, output}
PEEPHOLE = (9, 10, 11)
BIASES = (12, 13, 14, 15)               # {input, forget, cell, output} gate bias
PROJECTION = (16, 17)
HIDDEN_STATE, CELL_STATE = 18, 19
LAYER_NORM = (20, 21, 22, 23)
NUM_INPUTS = 24

_FLT_MAX = np.float32(np.finfo(np.float32).max)
_NONLINEAR_INPUT_SCALE = 2.0 ** -12      # gate FC outputs: Q3.12
_NONLINEAR_OUTPUT_SCALE = 2.0 ** -15     # sigmoid / tanh outputs: Q0.15


class Gate:
    """One gate's two fully connected layers (host-side form of GateParameters)."""
    w_in = w_rec = bias = None
    in_multiplier = in_shift = rec_multiplier = rec_shift = 0
    in_offset = rec_offset = 0


class MulParams:
    """The ArithmeticParams fields of an inter-gate multiplication."""

    def __init__(self, scale1: float, scale2: float, out_scale: float, out_type: int,
                 out_zero_point: int = 0):
        effective = ieee_div(float(np.float32(scale1)) * float(np.float32(scale2)), float(np.float32(out_scale)))
        self.multiplier, self.shift = quantize_multiplier(effective)
        self.offset = int(out_zero_point)
        self.lo, self.hi = (-128, 127) if out_type == INT8 else (-32768, 32767)


class OpData:
    """TFLM's OpDataLSTM plus host-side caches."""
    time_major = False
    batch_size = time_steps = input_dimension = state_dimension = 0
    weights_at_invoke = False   # weights or biases computed at run time (DECODE outputs)
    cell_clip = 0.0
    quantized_cell_clip = 0
    cell_state_scale_power = 0
    cell_gate_nonlinear_type = 0
    gates = None
    forget_cell_mul = input_mul = output_mul = None
    buffer_indices = (-1, -1, -1, -1)
    kind = "float32"
    rec_sums_checked = True     # check the recurrent sums' float64 exactness per step
    rec_dtype = None            # float dtype of the exact recurrent products (None: checked float64)
    fast = None                 # _FastInt8Plan of the int8 path (None: the plain path)


def _clamp(x, lo, hi):
    """std::min(std::max(x, lo), hi) on integers (cheaper than np.clip on small arrays)."""
    return np.minimum(np.maximum(x, lo), hi)


def _cell_clip_bounds(quantized_clip: int):
    """(lo, hi) of the int16 cell-state clip, applied as min(max(c, lo), hi) with lo =
    -clip as int16. The order matters only for a negative clip (a negative cell scale):
    every value becomes the clip itself, as measured on the tflite-micro package."""
    return int(wrap_int16(-quantized_clip)), quantized_clip


def _clamp_float(x):
    """ActivationFunctionWithMinMax with kTfLiteActNone's range (lowest .. max)."""
    return np.minimum(np.maximum(x, -_FLT_MAX), _FLT_MAX)


@register
class UnidirectionalSequenceLstm(Kernel):
    op = "UNIDIRECTIONAL_SEQUENCE_LSTM"
    supported_types = ("float32", "int8 (cell state int16)", "int16 x int8 (cell state int16)")
    weights_input = 2

    def sample_rows(self, block):
        """Batch-major sequences are independent rows, with one hidden and cell state row
        each: the sample axis replaces the unit batch axis (time-major inputs keep time
        first and run sample by sample)."""
        if block.params.time_major:
            return False
        return batch_axis_rows(block, (INPUT, HIDDEN_STATE, CELL_STATE))

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("unidirectional_sequence_lstm.OpDataLSTM"))
        return OpData()

    # ------------------------------------------------------------------ prepare
    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.outputs) != 1:
            raise ctx.error(f"needs exactly 1 output, got {len(node.outputs)}")
        if len(node.inputs) != NUM_INPUTS:
            raise ctx.error(f"needs {NUM_INPUTS} inputs, got {len(node.inputs)}")
        tensors = [ctx.input(node, i) for i in range(NUM_INPUTS)]
        out = ctx.output(node, 0)
        try:
            self._validate(ctx, tensors, out)
            self._prepare(ctx, node, data, tensors, out)
        finally:
            ctx.release(*tensors, out)

    def _validate(self, ctx, t, out):
        inp, hidden, cell = t[INPUT], t[HIDDEN_STATE], t[CELL_STATE]
        if inp is None:
            raise ctx.error("needs an input tensor")
        if hidden is None or not hidden.is_variable:
            raise ctx.error("the hidden (output) state must be a variable tensor")
        if hidden.type != inp.type:
            raise ctx.error(f"hidden state type {type_name(hidden.type)} must match the input "
                            f"type {type_name(inp.type)}")
        if cell is None or not cell.is_variable:
            raise ctx.error("the cell state must be a variable tensor")
        if out is None:
            raise ctx.error("needs an output tensor")
        if out.type != inp.type:
            raise ctx.error(f"output type {type_name(out.type)} must match the input type "
                            f"{type_name(inp.type)}")
        weight_type = t[2].type if t[2] is not None else None
        for i in INPUT_WEIGHTS + RECURRENT_WEIGHTS:
            if t[i] is None:
                raise ctx.error(f"weights input {i} is required (CIFG is not supported)")
            if t[i].type != weight_type:
                raise ctx.error(f"weights input {i} has type {type_name(t[i].type)}, "
                                f"not {type_name(weight_type)}")
        bias_type = t[13].type if t[13] is not None else None
        for i in BIASES:
            if t[i] is None:
                raise ctx.error(f"bias input {i} is required")
            if t[i].type != bias_type:
                raise ctx.error(f"bias input {i} has type {type_name(t[i].type)}, "
                                f"not {type_name(bias_type)}")
        for group, what in ((PEEPHOLE, "peephole"), (PROJECTION, "projection"),
                            (LAYER_NORM, "layer norm")):
            if any(t[i] is not None for i in group):
                raise ctx.error(f"{what} tensors are not supported by TFLM's LSTM")

    def _prepare(self, ctx, node, data, t, out):
        params = node.params
        inp, hidden, cell = t[INPUT], t[HIDDEN_STATE], t[CELL_STATE]
        if len(inp.shape) != 3:
            raise ctx.error(f"input shape {inp.shape} must be 3-D")
        if len(hidden.shape) < 2:
            raise ctx.error(f"hidden state shape {hidden.shape} must have 2 dimensions")
        data.time_major = bool(params.time_major)
        data.batch_size = inp.shape[1] if data.time_major else inp.shape[0]
        data.time_steps = inp.shape[0] if data.time_major else inp.shape[1]
        data.input_dimension = inp.shape[2]
        data.state_dimension = hidden.shape[1]
        n_batch, n_input, n_state = data.batch_size, data.input_dimension, data.state_dimension
        for i in INPUT_WEIGHTS:
            if tuple(t[i].shape) != (n_state, n_input):
                raise ctx.error(f"input weights {i} shape {t[i].shape} must be ({n_state}, {n_input})")
        for i in RECURRENT_WEIGHTS:
            if tuple(t[i].shape) != (n_state, n_state):
                raise ctx.error(f"recurrent weights {i} shape {t[i].shape} must be "
                                f"({n_state}, {n_state})")
        for i in BIASES:
            if tuple(t[i].shape) != (n_state,):
                raise ctx.error(f"bias {i} shape {t[i].shape} must be ({n_state},)")
        if flat_size(hidden.shape) != n_batch * n_state or flat_size(cell.shape) != n_batch * n_state:
            raise ctx.error(f"hidden {hidden.shape} and cell {cell.shape} states must hold "
                            f"{n_batch} x {n_state} values")
        if len(out.shape) != 3 or out.shape[0] != inp.shape[0] or out.shape[1] != inp.shape[1] \
                or out.shape[2] != n_state:
            raise ctx.error(f"output shape {out.shape} must be ({inp.shape[0]}, {inp.shape[1]}, "
                            f"{n_state})")

        data.cell_gate_nonlinear_type = int(params.fused_activation_function)
        if cell.type == FLOAT32:
            cell_size = 4
            data.cell_clip = float(np.float32(params.cell_clip))
            self._prepare_float(ctx, data, t)
        elif cell.type == INT16:
            cell_size = 2
            self._prepare_integer(ctx, data, t, params)
        else:
            raise ctx.error(f"Cell state type {type_name(cell.type)} ({cell.type}) not supported. "
                            "The quantized Unidirectional Sequence LSTM Op only support int16 "
                            "cell state")
        self._request_buffers(ctx, data, t, cell_size)

    def _request_buffers(self, ctx, data, tensors, cell_size: int) -> None:
        """The scratch buffers of one batch x state each (``cell_size`` bytes per value):
        TFLM's reference kernel asks for four. (Kernel variants that allocate more at
        the end of prepare override this; ``tensors`` are the node's input tensors.)"""
        data.buffer_indices = tuple(
            ctx.request_scratch(data.batch_size * data.state_dimension * cell_size)
            for _ in range(4))

    def _prepare_float(self, ctx, data, t):
        for i in INPUT_WEIGHTS + RECURRENT_WEIGHTS + BIASES + (INPUT, HIDDEN_STATE):
            if t[i].type != FLOAT32:
                raise ctx.error(f"tensor input {i} has type {type_name(t[i].type)}; a float32 "
                                "cell state needs float32 inputs, weights and biases")
        data.kind = "float32"
        data.gates = [Gate() for _ in range(4)]
        self._load_weights(data, [None if x is None else x.data for x in t])

    @staticmethod
    def _load_weights(data, arrays) -> None:
        """The gates' weights and biases from ``arrays`` (indexed by input), side by side
        (gate order input, forget, cell, output: one matmul computes every gate's FC),
        and what depends on them. Done at prepare for constant weights, at each invoke
        for weights computed at run time (DECODE outputs)."""
        if any(arrays[i] is None for i in INPUT_WEIGHTS + RECURRENT_WEIGHTS + BIASES):
            data.weights_at_invoke = True
            return
        for g, gate in enumerate(data.gates):
            w_in, w_rec = arrays[INPUT_WEIGHTS[g]], arrays[RECURRENT_WEIGHTS[g]]
            if data.kind == "float32":
                gate.w_in = np.ascontiguousarray(np.asarray(w_in, np.float32).T)
                gate.w_rec = np.ascontiguousarray(np.asarray(w_rec, np.float32).T)
                gate.bias = np.asarray(arrays[BIASES[g]], np.float32).reshape(-1)
            else:
                gate.w_in = np.ascontiguousarray((np.asarray(w_in, np.float64) - gate.w_in_zp).T)
                gate.w_rec = np.ascontiguousarray((np.asarray(w_rec, np.float64) - gate.w_rec_zp).T)
                gate.bias = np.asarray(arrays[BIASES[g]], np.int64).reshape(-1)
        gates = data.gates
        data.w_in_all = np.ascontiguousarray(np.concatenate([g.w_in for g in gates], axis=1))
        data.w_rec_all = np.ascontiguousarray(np.concatenate([g.w_rec for g in gates], axis=1))
        data.bias_all = np.concatenate([g.bias for g in gates])
        if data.kind != "float32":
            # the recurrent FCs' output stage, fixed per gate column (exact, fewer passes)
            hidden_limit = (128 if data.kind == "int8" else 32768) + abs(data.rec_offset)
            rec_bound = float((np.abs(data.w_rec_all).sum(axis=0) * hidden_limit).max(initial=0))
            # below 2^53 every recurrent sum is exact in float64: no run-time check per step
            data.rec_sums_checked = not rec_bound < 2.0 ** 53
            # below 2^24 every product and partial sum is an integer float32 holds exactly
            # (any summation order): a float32 product, fed to the requantizer as it is
            data.rec_dtype = exact_float_dtype(rec_bound)
            data.w_rec_exact = data.w_rec_all.astype(data.rec_dtype or np.float64)
            # the input FCs' output stage (bias, requantisation, int16 clamp) likewise
            input_limit = (128 if data.kind == "int8" else 32768) + abs(data.in_offset)
            in_bound = float((np.abs(data.w_in_all).sum(axis=0) * input_limit).max(initial=0))
            data.in_sums_checked = not in_bound < 2.0 ** 53
            data.in_requantizer = ChannelRequantizer(
                data.in_multipliers, data.in_shifts, data.bias_all, 0, -32768, 32767,
                int64_accum=data.kind == "int16", acc_bound=in_bound)
            data.rec_requantizer = ChannelRequantizer(
                data.rec_multipliers, data.rec_shifts, None, 0, -32768, 32767,
                int64_accum=data.kind == "int16", acc_bound=rec_bound)
            data.fast = _FastInt8Plan.build(data) if data.kind == "int8" else None

    def _prepare_integer(self, ctx, data, t, params):
        inp, hidden, cell = t[INPUT], t[HIDDEN_STATE], t[CELL_STATE]
        if inp.type == INT8:
            data.kind, bias_type = "int8", INT32
        elif inp.type == INT16:
            data.kind, bias_type = "int16", INT64
        else:
            raise ctx.error(f"Input type {type_name(inp.type)} ({inp.type}) not supported.")
        weight_type = t[INPUT_WEIGHTS[0]].type
        if weight_type != INT8:
            raise ctx.error(f"Filter type {type_name(weight_type)} ({weight_type}) not supported.")
        if t[BIASES[0]].type != bias_type:
            raise ctx.error(f"{type_name(inp.type)} activations need {type_name(bias_type)} "
                            f"biases, not {type_name(t[BIASES[0]].type)}")
        for i in (INPUT, HIDDEN_STATE, CELL_STATE) + INPUT_WEIGHTS + RECURRENT_WEIGHTS:
            q = t[i].quantization
            if q is None:
                raise ctx.error(f"tensor input {i} needs quantization parameters")
            if q.scales.size > 1:
                # TFLM allocates per-channel multipliers but then runs with per-tensor
                # parameters it never set: refuse per-channel LSTM weights.
                raise ctx.error(f"tensor input {i}: per-channel quantization is not supported")

        # cell state: scale power (rounded log2) and the quantized clip
        _, data.cell_state_scale_power = checked_log2(cell.scale)
        cell_clip = np.float32(params.cell_clip)
        data.cell_clip = float(cell_clip)
        clip = ieee_div(float(cell_clip), float(np.float32(cell.scale)))
        # static_cast<int16_t> of the clamped float (nan stays nan: C's conversion)
        data.quantized_cell_clip = int(wrap_int16(c_float_to_int32(np.trunc(min(max(clip, -32768.0), 32767.0)))))

        gates = []
        for g in range(4):
            gate = Gate()
            w_in, w_rec = t[INPUT_WEIGHTS[g]], t[RECURRENT_WEIGHTS[g]]
            try:
                real_in = quantized_convolution_multiplier(inp.scale, w_in.scale,
                                                           _NONLINEAR_INPUT_SCALE)
                real_rec = quantized_convolution_multiplier(hidden.scale, w_rec.scale,
                                                            _NONLINEAR_INPUT_SCALE)
            except ValueError as e:
                raise ctx.error(str(e)) from None
            gate.in_multiplier, gate.in_shift = quantize_multiplier(real_in)
            gate.rec_multiplier, gate.rec_shift = quantize_multiplier(real_rec)
            gate.in_offset = -inp.zero_point
            gate.rec_offset = -hidden.zero_point
            gate.w_in_zp, gate.w_rec_zp = w_in.zero_point, w_rec.zero_point
            gates.append(gate)
        data.gates = gates
        n = data.state_dimension
        data.in_offset, data.rec_offset = gates[0].in_offset, gates[0].rec_offset
        data.in_multipliers = np.repeat([g.in_multiplier for g in gates], n).astype(np.int64)
        data.in_shifts = np.repeat([g.in_shift for g in gates], n).astype(np.int64)
        data.rec_multipliers = np.repeat([g.rec_multiplier for g in gates], n).astype(np.int64)
        data.rec_shifts = np.repeat([g.rec_shift for g in gates], n).astype(np.int64)
        cell_scale = cell.scale
        data.forget_cell_mul = MulParams(_NONLINEAR_OUTPUT_SCALE, cell_scale, cell_scale, INT16)
        data.input_mul = MulParams(_NONLINEAR_OUTPUT_SCALE, _NONLINEAR_OUTPUT_SCALE,
                                   cell_scale, INT16)
        data.output_mul = MulParams(_NONLINEAR_OUTPUT_SCALE, _NONLINEAR_OUTPUT_SCALE,
                                    hidden.scale, hidden.type, hidden.zero_point)
        self._load_weights(data, [None if x is None else x.data for x in t])
        # host-side tables of the gate non-linearities: their inputs are int16 values
        # (clamped gate sums, the clamped cell state), so one lookup per step replaces
        # the fixed-point evaluation
        data.sigmoid_table = int16_table(lambda v: logistic_int16(v, 0, 0))
        data.cell_gate_table = None
        if data.cell_gate_nonlinear_type in (ACT_SIGMOID, ACT_TANH):
            data.cell_gate_table = int16_table(
                lambda v: self._activate_integer(v, data.cell_gate_nonlinear_type))
        cell_shift = int(wrap_int32(15 + data.cell_state_scale_power - 3))     # C int32
        if cell_shift < 0:
            data.tanh_cell_table = int16_table(lambda v: tanh_int16(v, 3, int(wrap_int32(-cell_shift))))
        else:
            data.tanh_cell_table = int16_table(lambda v: tanh_int16(v, 0, cell_shift))

    # ------------------------------------------------------------------- invoke
    def invoke(self, ctx, node):
        data = node.user_data
        if data.weights_at_invoke:
            self._load_weights(data, node.input_arrays)
        x = node.input_arrays[INPUT]
        out = node.output_arrays[0]
        hidden = node.input_arrays[HIDDEN_STATE].reshape(data.batch_size, data.state_dimension)
        cell = node.input_arrays[CELL_STATE].reshape(data.batch_size, data.state_dimension)
        # (time, batch, input) view: batches are independent, so batch-major inputs are
        # computed all batches at once too
        steps = x if data.time_major else x.transpose(1, 0, 2)
        if data.kind == "float32":
            self._run_float(data, steps, hidden, cell, out, math_for(ctx.target), ctx.target.float_fma)
        else:
            self._run_integer(data, steps, hidden, cell, out)

    @staticmethod
    def _store(data, out, t, hidden):
        if data.time_major:
            out[t] = hidden
        else:
            out[:, t, :] = hidden

    # integer -------------------------------------------------------------
    @staticmethod
    def _activate_integer(values, activation):
        if activation == ACT_SIGMOID:
            return logistic_int16(values, 0, 0)
        if activation == ACT_TANH:
            return tanh_int16(values, 0, 0)      # Tanh with scale power -12: x3, no shift
        return values     # TFLM asserts (a no-op in its release build): the sum is kept

    @staticmethod
    def _mul(a, b, p: MulParams):
        prod = multiply_by_quantized_multiplier(np.asarray(a, np.int64) * np.asarray(b, np.int64),
                                                p.multiplier, p.shift)
        return _clamp(prod + p.offset, p.lo, p.hi)

    def _run_integer(self, data, steps, hidden, cell, out):
        if data.fast is not None and data.fast.ready(data):
            data.fast.run(data, steps, hidden, cell, out)
            return
        n = data.state_dimension
        t_steps, n_batch = steps.shape[0], steps.shape[1]
        # the input FCs of all four gates for every time step at once: (T, B, 4n)
        xin = steps.reshape(t_steps * n_batch, -1).astype(np.float64) + data.in_offset
        sums = exact_int_matmul(xin, data.w_in_all, check=data.in_sums_checked)
        gate_in = data.in_requantizer(sums.T).T.astype(np.int64)
        gate_in = gate_in.reshape(t_steps, n_batch, 4 * n)
        for t in range(t_steps):
            if data.rec_dtype is None:
                h = hidden.astype(np.float64) + data.rec_offset
                rec = data.rec_requantizer(
                    exact_int_matmul(h, data.w_rec_all, check=data.rec_sums_checked).T).T
            else:
                h = hidden.astype(data.rec_dtype)
                h += data.rec_offset
                rec = data.rec_requantizer((h @ data.w_rec_exact).T).T
            pre = _clamp(gate_in[t] + rec, -32768, 32767)
            sig = apply_int16_table(data.sigmoid_table, pre)   # (cell gate columns unused)
            input_gate, forget, output_gate = sig[:, 0:n], sig[:, n:2 * n], sig[:, 3 * n:]
            cell_gate = pre[:, 2 * n:3 * n]
            if data.cell_gate_table is not None:
                cell_gate = apply_int16_table(data.cell_gate_table, cell_gate)
            c = self._mul(forget, cell, data.forget_cell_mul)
            c = _clamp(c + self._mul(input_gate, cell_gate, data.input_mul), -32768, 32767)
            if data.cell_clip > 0:
                c = _clamp(c, *_cell_clip_bounds(data.quantized_cell_clip))
            cell[...] = c
            tanh_cell = apply_int16_table(data.tanh_cell_table, c)
            hidden[...] = self._mul(tanh_cell, output_gate, data.output_mul)
            self._store(data, out, t, hidden)

    # float ---------------------------------------------------------------
    @staticmethod
    def _activate_float(values, activation, math: FloatMath):
        if activation == ACT_SIGMOID:
            return sigmoid_reference_float(values, math.expf)
        if activation == ACT_TANH:
            return math.tanhf(values)
        return values

    def _run_float(self, data, steps, hidden, cell, out, math: FloatMath, fused: bool = False):
        """``math``: the C library's float functions of the target's build (:func:`math_for`);
        ``fused``: the gate FCs' sums are fused multiply-adds (Target.float_fma)."""
        exp = math.expf
        n = data.state_dimension
        t_steps, n_batch = steps.shape[0], steps.shape[1]
        xin = np.asarray(steps, np.float32).reshape(t_steps * n_batch, -1)
        # input FCs (sequential float32 sums, + bias, clamp) of every step and gate at once
        gate_in = _clamp_float(float32_sequential_matmul(xin, data.w_in_all, fused) + data.bias_all)
        gate_in = gate_in.reshape(t_steps, n_batch, 4 * n)
        zero = np.float32(0.0)
        for t in range(t_steps):
            # recurrent FCs have no bias: TFLM still adds 0.0f
            rec = _clamp_float(float32_sequential_matmul(hidden, data.w_rec_all, fused) + zero)
            pre = gate_in[t] + rec
            sig = sigmoid_reference_float(pre, exp)   # (the cell gate's columns are unused)
            input_gate, forget, output_gate = sig[:, 0:n], sig[:, n:2 * n], sig[:, 3 * n:]
            cell_gate = self._activate_float(pre[:, 2 * n:3 * n], data.cell_gate_nonlinear_type, math)
            c = _clamp_float(forget * cell) + _clamp_float(input_gate * cell_gate)
            if data.cell_clip > 0:
                clip = np.float32(data.cell_clip)
                c = np.where(c < clip, c, clip)          # std::min(clip, c): NaN -> clip
                c = np.where(c < -clip, -clip, c)        # std::max(c, -clip)
            cell[...] = c
            hidden[...] = _clamp_float(math.tanhf(c) * output_gate)
            self._store(data, out, t, hidden)


#: gate order of the fast path's rows: the three sigmoid gates (input, forget, output)
#: side by side, then the cell gate
_FAST_GATE_ORDER = (0, 1, 3, 2)
#: samples per pass of the fast path's time loop: its per-step arrays stay in the cache
_FAST_CHUNK = 1024
#: at most this many (step, sample) columns: the input FCs of all steps in one pass
_FAST_BULK_COLUMNS = 256


class _FastInt8Plan:
    """The int8 LSTM step in folded passes (every one proven equal to TFLM's integer
    routine on every input, see :mod:`kernels.internal.folded_stages`; tests:
    tests/test_folded_stages.py). Layout: (gate rows, samples) -- rows are the four
    gates' units in :data:`_FAST_GATE_ORDER`, columns the batch (each column one
    independent sequence), so every per-step array is contiguous per gate.

    Per step: both gate FCs with their requantisation and int16 clamp
    (:class:`FoldedFcStage`, results offset by a constant), their saturating sum as one
    clamp of the offset sum, the sigmoid / cell-gate values read from tables indexed by
    that offset sum (the int16 tables of the plain path, laid out by value and shifted by
    the offset), the two cell products and the hidden product requantised by
    :class:`ProductRequant` (int32 when it fits), the cell clamp and clip as one clip
    (the products' own int16 clamps are skipped where the product's range cannot reach
    them), tanh of the cell from its table."""

    @classmethod
    def build(cls, data) -> "_FastInt8Plan":
        n = data.state_dimension
        order = np.concatenate([np.arange(g * n, (g + 1) * n) for g in _FAST_GATE_ORDER])
        w_in = np.rint(data.w_in_all.T[order]).astype(np.int64)
        w_rec = np.rint(data.w_rec_all.T[order]).astype(np.int64)
        stage_in = FoldedFcStage(w_in, data.in_offset, (-128, 127), data.bias_all[order],
                                 data.in_multipliers[order], data.in_shifts[order], 0, -32768, 32767,
                                 min_offset=16384)
        stage_rec = FoldedFcStage(w_rec, data.rec_offset, (-128, 127), None,
                                  data.rec_multipliers[order], data.rec_shifts[order], 0,
                                  -32768, 32767, min_offset=16384)
        if stage_in.available and stage_rec.available and stage_in.offset != stage_rec.offset:
            # one offset for both: their int32 passes run once on the stacked products
            # (when the larger offset fits both)
            common = max(stage_in.offset_o, stage_rec.offset_o)
            same_in = FoldedFcStage(w_in, data.in_offset, (-128, 127), data.bias_all[order],
                                    data.in_multipliers[order], data.in_shifts[order], 0,
                                    -32768, 32767, min_offset=common)
            same_rec = FoldedFcStage(w_rec, data.rec_offset, (-128, 127), None,
                                     data.rec_multipliers[order], data.rec_shifts[order], 0,
                                     -32768, 32767, min_offset=common)
            if same_in.available and same_rec.available:
                stage_in, stage_rec = same_in, same_rec
        products = 1 << 30          # |int16 x int16| (sigmoid / tanh outputs and cell states)
        fcm, im, om = data.forget_cell_mul, data.input_mul, data.output_mul
        forget = ProductRequant(fcm.multiplier, fcm.shift, fcm.offset, fcm.lo, fcm.hi, products)
        inp = ProductRequant(im.multiplier, im.shift, im.offset, im.lo, im.hi, products)
        output = ProductRequant(om.multiplier, om.shift, om.offset, om.lo, om.hi, products)
        if not all(p.available for p in (stage_in, stage_rec, forget, inp, output)):
            return None
        if forget.zp or inp.zp or fcm.offset or im.offset:
            return None
        plan = cls()
        plan.n = n
        plan.stage_in, plan.stage_rec = stage_in, stage_rec
        plan.stacked = stage_in.offset == stage_rec.offset
        plan.forget, plan.input, plan.output = forget, inp, output
        plan.sum_offset = stage_in.offset + stage_rec.offset
        if data.cell_clip > 0:
            plan.cell_lo, plan.cell_hi = _cell_clip_bounds(data.quantized_cell_clip)
        else:
            plan.cell_lo, plan.cell_hi = -32768, 32767
        plan.tables = None
        return plan

    def ready(self, data) -> bool:
        """Builds the offset tables from the plain path's int16 tables on first use."""
        if self.tables is None:
            def by_value(table):        # int16_table is ordered by the two-byte pattern
                return np.concatenate([table[32768:], table[:32768]]).astype(np.int32)
            cell_gate = (data.cell_gate_table if data.cell_gate_table is not None
                         else int16_table(lambda v: v))          # the sum itself
            # entry sum_offset + v holds f(v) for every int16 v, the entries below f(-32768):
            # read with mode="clip", an index below sum_offset - 32768 (or below 0) gives
            # f(-32768) and one above sum_offset + 32767 gives f(32767), which is the
            # saturating int16 sum of the two gate terms
            base = self.sum_offset - 32768
            tables = []
            for table in (data.sigmoid_table, cell_gate):
                values = by_value(table)
                padded = np.empty(base + 65536, np.int32)
                padded[:base] = values[0]
                padded[base:] = values
                tables.append(padded)
            self.tables = tables
            self.tanh_cell_by_pattern = np.asarray(data.tanh_cell_table, np.int32)
        return True

    def run(self, data, steps, hidden, cell, out) -> None:
        """``steps``: (time, batch, input) int8; ``hidden`` (batch, n) int8 and ``cell``
        (batch, n) int16 states, updated; ``out``: the op's output array."""
        t_steps, n_batch = steps.shape[0], steps.shape[1]
        for start in range(0, n_batch, _FAST_CHUNK):
            stop = min(n_batch, start + _FAST_CHUNK)
            hs = self._run_chunk(steps[:, start:stop], hidden[start:stop], cell[start:stop])
            if data.time_major:
                out[:, start:stop, :] = hs.transpose(0, 2, 1)
            else:
                out[start:stop] = hs.transpose(2, 0, 1)

    def _run_chunk(self, steps, hidden, cell):
        n = self.n
        t_steps, cols, depth = steps.shape
        rows = 4 * n
        x_in = np.ones((depth + 1, cols), np.float64)
        x_rec = np.ones((n + 1, cols), np.float64)
        x_rec[:n] = hidden.T
        work_in = np.empty((rows, cols), np.float64)
        work_rec = np.empty((rows, cols), np.float64)
        c = cell.T.astype(np.int32)
        hs = np.empty((t_steps, n, cols), np.int8)
        index = np.empty((rows, cols), np.int32)
        gates = np.empty((rows, cols), np.int32)
        sig_table, cell_table = self.tables
        tanh_table = self.tanh_cell_by_pattern
        forget, input_mul, output = self.forget, self.input, self.output
        cell_lo, cell_hi = self.cell_lo, self.cell_hi
        s3 = 3 * n
        bulk = None
        if t_steps * cols <= _FAST_BULK_COLUMNS or not self.stacked:
            # few samples (a single invoke; or stages with different offsets): the input
            # FCs of every step in one pass -- the same arithmetic, column by column
            x_all = np.ones((depth + 1, t_steps * cols), np.float64)
            x_all[:depth] = steps.reshape(t_steps * cols, depth).T
            bulk = self.stage_in(x_all, np.empty((rows, t_steps * cols), np.float64))
        else:
            work = np.empty((2 * rows, cols), np.float64)
            limits, shifts = self.stage_in.stacked_constants(self.stage_rec, cols)
            in_matrix, rec_matrix = self.stage_in.matrix, self.stage_rec.matrix
            finish = self.stage_in.finish
        for t in range(t_steps):
            if bulk is None:
                # both FCs' products stacked, their int32 passes in one go
                x_in[:depth] = steps[t].T
                np.matmul(in_matrix, x_in, out=work[:rows])
                np.matmul(rec_matrix, x_rec, out=work[rows:])
                q = finish(work, limits, shifts)
                np.add(q[:rows], q[rows:], out=index)
            else:
                g_rec = self.stage_rec(x_rec, work_rec)
                np.add(bulk[:, t * cols:(t + 1) * cols], g_rec, out=index)
            sig_table.take(index[:s3], out=gates[:s3], mode="clip")
            cell_table.take(index[s3:], out=gates[s3:], mode="clip")
            fc = np.multiply(gates[n:2 * n], c)
            fc = forget(fc)
            ic = np.multiply(gates[:n], gates[s3:])
            ic = input_mul(ic)
            np.add(fc, ic, out=c)
            clip_into(c, cell_lo, cell_hi, out=c)
            tanh_c = tanh_table.take(c, mode="wrap")     # c's two-byte pattern
            tanh_c *= gates[2 * n:s3]
            h = output(tanh_c)
            x_rec[:n] = h
            hs[t] = h
        hidden[...] = hs[-1].T if t_steps else hidden
        cell[...] = c.T
        return hs
