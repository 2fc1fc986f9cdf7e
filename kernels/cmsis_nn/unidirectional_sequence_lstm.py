"""UNIDIRECTIONAL_SEQUENCE_LSTM as TFLM's CMSIS-NN build runs it
(``kernels/cmsis_nn/unidirectional_sequence_lstm.cc`` with ``arm_lstm_unidirectional_s8``
/ ``_s16``).

Allocations (what differs from the reference kernel):

* init: one OpData = the reference OpDataLSTM followed by ``cmsis_nn_lstm_params``;
* prepare, integer LSTMs (int8 or int16 activations, int16 cell state): eight persistent
  kernel-sum buffers of ``state_dimension`` int32 (int8 activations) or int64 (int16
  activations) each, on every core: effective biases of the four input FCs (bias +
  input offset x weight row sums) then of the four recurrent FCs (hidden offset x row
  sums, no bias); then three scratch buffers of batch x state int16 (the reference
  asks for four). Float LSTMs run the reference kernel with its four buffers.
* weights and biases must be constant tensors (TFLM refuses the node otherwise).

Arithmetic of ``arm_lstm_unidirectional_s8`` / ``_s16`` as TFLM calls them (no hidden
state buffer):

* every invoke starts from a zero cell state and no hidden state: the first time step
  has no recurrent term at all (not even the hidden zero point's), and the model's
  hidden / cell state variable tensors are neither read nor written, so nothing carries
  over between invokes;
* gate = clamp16(requant(recurrent acc) + clamp16(requant(input acc))): the recurrent
  term is not clamped on its own before the add (the reference saturates each term);
  int8 activations multiply raw values with effective biases (int32 wrap-around sums,
  the weights' zero point ignored); int16 activations accumulate per the core (see
  :func:`kernels.cmsis_nn.internal.kernel_sums.accumulate_s16_s8`) and requantise with
  ``arm_nn_requantize_s64`` (TFLM's 64-bit rounding, but with an int32 intermediate
  that wraps on huge accumulators);
* the cell gate uses tanh when the builtin activation is TANH and sigmoid for any other
  value (the reference leaves the sum as it is);
* the cell state is clipped to +-quantized cell clip only when that integer is > 0;
* sigmoid / tanh, the cell update and the output multiplication are otherwise TFLM's
  (same tables, same double-rounding requantisation).
"""
from __future__ import annotations

import numpy as np

from kernels.base import register_variant
from kernels.internal.lut import apply_int16_table, int16_table, logistic_int16
from kernels.internal.matmul import exact_int_matmul
from kernels.internal.quantization import ACT_TANH, multiply_by_quantized_multiplier, wrap_int32
from kernels.internal.sample_rows import batch_axis_rows
from kernels.unidirectional_sequence_lstm import (BIASES, CELL_STATE, HIDDEN_STATE, INPUT,
                                                  INPUT_WEIGHTS, OpData, RECURRENT_WEIGHTS,
                                                  UnidirectionalSequenceLstm)

from .internal.kernel_sums import accumulate_s16_s8, requantize_s64, vector_sum_s8, vector_sum_s8_s64

#: the reference gate order (input, forget, cell, output) is kept for the side-by-side
#: weight matrices; CMSIS-NN computes forget first, which changes no value.
_GATES = range(4)


def _clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


class CmsisNnLstmData(OpData):
    """The reference OpDataLSTM plus the CMSIS-NN parameters (host-side form)."""
    cmsis = False            # integer LSTM run by CMSIS-NN
    kernel_sums = None       # the eight persistent buffers (views), for inspection


@register_variant("cmsis-nn")
class CmsisNnUnidirectionalSequenceLstm(UnidirectionalSequenceLstm):
    op = "UNIDIRECTIONAL_SEQUENCE_LSTM"
    supported_types = ("float32", "int8 (cell state int16)", "int16 x int8 (cell state int16)")
    weights_input = 2

    def sample_rows(self, block):
        """Batch-major sequences are independent rows: the integer kernels start every
        invoke from a zero cell state and no hidden state (the state tensors are neither
        read nor written) and compute each batch row on its own (the int16 column split
        is per row and per core, not per batch count); float runs the reference with one
        state row per batch. The sample axis replaces the unit batch axis; time-major
        inputs keep time first and run sample by sample."""
        if block.params.time_major:
            return False
        return batch_axis_rows(block, (INPUT, HIDDEN_STATE, CELL_STATE))

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("cmsis_nn.unidirectional_sequence_lstm.OpData"))
        return CmsisNnLstmData()

    def _prepare(self, ctx, node, data, t, out):
        for i in INPUT_WEIGHTS + RECURRENT_WEIGHTS + BIASES:
            if not t[i].is_constant:
                raise ctx.error(f"input {i} (weights / bias) must be a constant tensor")
        super()._prepare(ctx, node, data, t, out)

    def _request_buffers(self, ctx, data, tensors, cell_size: int) -> None:
        if data.kind == "float32":
            super()._request_buffers(ctx, data, tensors, cell_size)
            return
        data.cmsis = True
        self._port_op_data(ctx, data, tensors)
        data.buffer_indices = tuple(
            ctx.request_scratch(data.batch_size * data.state_dimension * cell_size)
            for _ in range(3))

    # ---------------------------------------------------------------- prepare
    def _port_op_data(self, ctx, data, t) -> None:
        """The eight kernel sums (persistent, written in prepare) and the host-side
        matrices of the CMSIS-NN gates."""
        n = data.state_dimension
        wide = data.kind == "int16"
        sum_dtype = np.int64 if wide else np.int32
        buffers = [ctx.persistent_array(sum_dtype, n, written=True) for _ in range(8)]
        w_in = [np.asarray(t[INPUT_WEIGHTS[g]].data, np.int64).reshape(n, -1) for g in _GATES]
        w_rec = [np.asarray(t[RECURRENT_WEIGHTS[g]].data, np.int64).reshape(n, n) for g in _GATES]
        biases = [np.asarray(t[BIASES[g]].data, np.int64).reshape(-1) for g in _GATES]
        hidden_offset = data.rec_offset            # -(hidden state zero point)
        if wide:
            eff_in = [vector_sum_s8_s64(w_in[g], data.in_offset, biases[g], ctx.target.mve)
                      for g in _GATES]
            eff_rec = [vector_sum_s8_s64(w_rec[g], hidden_offset, None, ctx.target.mve)
                       for g in _GATES]
        else:
            eff_in = [vector_sum_s8(w_in[g], data.in_offset, biases[g]) for g in _GATES]
            eff_rec = [vector_sum_s8(w_rec[g], hidden_offset, None) for g in _GATES]
        # TFLM's order: input-FC sums of the input, forget, cell, output gates, then the
        # recurrent ones
        for g in _GATES:
            buffers[g][...] = eff_in[g]
            buffers[4 + g][...] = eff_rec[g]
        data.kernel_sums = buffers
        data.cmsis_w_in = np.concatenate([w.T for w in w_in], axis=1).astype(np.float64)
        data.cmsis_w_rec = np.concatenate([w.T for w in w_rec], axis=1).astype(np.float64)
        data.cmsis_eff_in = np.concatenate(eff_in)
        data.cmsis_eff_rec = np.concatenate(eff_rec)
        data.cmsis_dsp, data.cmsis_mve = bool(ctx.target.dsp), bool(ctx.target.mve)
        q = data.quantized_cell_clip
        data.cmsis_cell_bounds = (-q, q) if q > 0 else (-32768, 32767)
        data.cmsis_sigmoid = int16_table(lambda v: logistic_int16(v, 0, 0))
        # the cell gate: TANH, or sigmoid for every other builtin activation
        data.cmsis_cell_gate = (data.cell_gate_table
                                if data.cell_gate_nonlinear_type == ACT_TANH
                                else data.cmsis_sigmoid)

    # ----------------------------------------------------------------- invoke
    def invoke(self, ctx, node):
        data = node.user_data
        if not data.cmsis:
            return super().invoke(ctx, node)
        x = node.input_arrays[0]
        out = node.output_arrays[0]
        steps = x if data.time_major else x.transpose(1, 0, 2)
        self._run_cmsis(data, steps, out)
        return None

    def _requantize_fc(self, data, acc, multipliers, shifts):
        if data.kind == "int8":
            return multiply_by_quantized_multiplier(wrap_int32(acc), multipliers, shifts)
        return requantize_s64(acc, multipliers, shifts)

    def _fc(self, data, lhs, weights, effective_bias):
        """Accumulators of one FC kind for every gate: (rows, 4n) int64."""
        if data.kind == "int8":
            return wrap_int32(exact_int_matmul(np.asarray(lhs, np.float64), weights)
                              + effective_bias)
        return accumulate_s16_s8(lhs, weights, effective_bias, data.cmsis_dsp, data.cmsis_mve)

    def _run_cmsis(self, data, steps, out):
        n = data.state_dimension
        t_steps, n_batch = steps.shape[0], steps.shape[1]
        lo_out, hi_out = (-128, 127) if data.kind == "int8" else (-32768, 32767)
        # input terms of every step and gate, clamped to int16 as CMSIS-NN stores them
        acc = self._fc(data, steps.reshape(t_steps * n_batch, -1), data.cmsis_w_in,
                       data.cmsis_eff_in)
        gate_in = _clamp(self._requantize_fc(data, acc, data.in_multipliers, data.in_shifts),
                         -32768, 32767).reshape(t_steps, n_batch, 4 * n)
        fc, im, om = data.forget_cell_mul, data.input_mul, data.output_mul
        cell_lo, cell_hi = data.cmsis_cell_bounds
        cell = np.zeros((n_batch, n), np.int64)
        hidden = None
        for t in range(t_steps):
            pre = gate_in[t]
            if hidden is not None:
                rec = self._requantize_fc(data, self._fc(data, hidden, data.cmsis_w_rec,
                                                         data.cmsis_eff_rec),
                                          data.rec_multipliers, data.rec_shifts)
                pre = _clamp(rec + pre, -32768, 32767)
            sig = apply_int16_table(data.cmsis_sigmoid, pre)
            input_gate, forget, output_gate = sig[:, 0:n], sig[:, n:2 * n], sig[:, 3 * n:]
            cell_gate = apply_int16_table(data.cmsis_cell_gate, pre[:, 2 * n:3 * n])
            cell = _clamp(multiply_by_quantized_multiplier(forget * cell, fc.multiplier, fc.shift),
                          -32768, 32767)
            cell = _clamp(multiply_by_quantized_multiplier(input_gate * cell_gate, im.multiplier,
                                                           im.shift) + cell, cell_lo, cell_hi)
            tanh_cell = apply_int16_table(data.tanh_cell_table, cell)
            hidden = _clamp(multiply_by_quantized_multiplier(output_gate * tanh_cell, om.multiplier,
                                                             om.shift) + om.offset, lo_out, hi_out)
            self._store(data, out, t, hidden)
