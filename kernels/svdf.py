"""SVDF: float32, and int8 input with int8 feature weights and either int16 time weights +
int16 activation state or int8 time weights + int8 activation state (int32 bias), as
TFLM's reference kernel.

Per invoke the activation state (a variable tensor, batch x filters x memory) shifts left
by one element over its whole flat buffer, the feature matmul writes each filter's newest
value into the last memory slot, the time weights reduce every filter's memory, and the
filters of each unit (``rank`` of them) are summed into the output.

Integer exactness: feature and time dot products are exact int64 sums wrapped to int32 (C
int32 accumulation); float32 sums keep TFLM's order (one float32 multiply-add per step),
and the float activation is TFLM's ActivationValFloat (TANH through glibc's tanhf). The
int8 output ignores the fused activation (TFLM's integer kernel only clamps to int8).

Host-side shortcuts (same integers): int8 states read both output stages from tables
(:class:`OutputTable`); in batched evaluation, a block whose state rows all hold the reset
value (checked each invoke) skips the no-op shift, and for rank 1 takes each output from a
per-filter table of the newest value (built by the plain path) after the folded feature FC.

Refused although TFLM's prepare accepts them (TFLM then crashes or reads out of bounds):
a missing bias, and int8 models whose time weights and state differ in type.
"""
from __future__ import annotations

import numpy as np

from .base import Kernel, register
from .internal.sample_rows import batch_axis_rows
from .internal.float_math import math_for
from .internal.folded_stages import FoldedFcStage, OutputTable
from .internal.libm_float import activation_value_float
from .internal.matmul import float32_sequential_matmul
from .internal.quantization import clip_into, multiply_by_quantized_multiplier, quantize_multiplier, wrap_int32
from .internal.tensor_utils import FLOAT32, INT8, INT16, INT32, type_name

INPUT, WEIGHTS_FEATURE, WEIGHTS_TIME, BIAS, ACTIVATION_STATE = range(5)
OUTPUT = 0


class OpData:
    """TFLM's OpDataSvdf plus host-side caches."""
    effective_scale_1_a = 0
    effective_scale_1_b = 0
    effective_scale_2_a = 0
    effective_scale_2_b = 0
    scratch_tensor_index = -1
    scratch_output_tensor_index = -1
    input_zero_point = 0
    output_zero_point = 0
    activation_state_zero_point = 0
    fast = None     # FoldedFcStage of the int8 feature FC when the table path applies


@register
class Svdf(Kernel):
    op = "SVDF"
    supported_types = ("float32", "int8 (time weights and state int16 or int8)")
    weights_input = 1

    def sample_rows(self, block):
        """Batch rows are independent, the activation state one row per batch: the
        sample axis replaces the unit batch axis of the input, state and output (the
        whole-buffer shift moves one value across rows, into a slot every row then
        overwrites)."""
        return batch_axis_rows(block, (INPUT, ACTIVATION_STATE))

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("svdf.OpDataSvdf"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        params = node.params
        # TFLM's order: input, weights_feature, weights_time, bias, state, then output
        inp = ctx.input(node, INPUT)
        wf = ctx.input(node, WEIGHTS_FEATURE)
        wt = ctx.input(node, WEIGHTS_TIME)
        bias = ctx.input(node, BIAS)
        state = ctx.input(node, ACTIVATION_STATE)
        out = None
        try:
            if inp is None or wf is None or wt is None or state is None:
                raise ctx.error("needs input, weights_feature, weights_time and activation "
                                "state tensors")
            rank = int(params.rank)
            if len(inp.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
                raise ctx.error(f"input {inp.shape}, weights_feature {wf.shape} and weights_time "
                                f"{wt.shape} must all be 2-D")
            batch_size, input_size = inp.shape
            num_filters = wf.shape[0]
            if rank <= 0 or num_filters % rank != 0:
                raise ctx.error(f"{num_filters} filters are not a multiple of rank {rank}")
            num_units = num_filters // rank
            memory_size = wt.shape[1]
            if inp.type not in (FLOAT32, INT8):
                raise ctx.error(f"input type {type_name(inp.type)} not supported (float32 or int8)")
            if len(node.outputs) != 1:
                raise ctx.error(f"needs exactly one output, got {len(node.outputs)}")
            out = ctx.output(node, OUTPUT)
            if out is None:
                raise ctx.error("needs an output tensor")
            if tuple(out.shape) != (batch_size, num_units):
                raise ctx.error(f"output shape {out.shape} must be ({batch_size}, {num_units})")
            if wf.shape[1] != input_size:
                raise ctx.error(f"weights_feature shape {wf.shape} does not match input size "
                                f"{input_size}")
            if wt.shape[0] != num_filters or memory_size <= 0:
                raise ctx.error(f"weights_time shape {wt.shape} must be ({num_filters}, memory)")
            if bias is not None and (len(bias.shape) < 1 or bias.shape[0] != num_units):
                raise ctx.error(f"bias shape {bias.shape} must have {num_units} elements")
            if tuple(state.shape) != (batch_size, memory_size * num_filters):
                raise ctx.error(f"activation state shape {state.shape} must be "
                                f"({batch_size}, {memory_size * num_filters})")
            if not state.is_variable:
                raise ctx.error("the activation state must be a variable tensor")
            if len(node.inputs) != 5:
                raise ctx.error(f"needs 5 inputs, got {len(node.inputs)}")
            if bias is None:
                # TFLM dereferences the bias without checking it (the int8 prepare reads
                # its scale, the float eval its data): it crashes on a bias-less SVDF.
                raise ctx.error("SVDF without a bias tensor is not supported (TFLM's kernel "
                                "dereferences the missing bias)")

            if inp.type == INT8:
                self._prepare_int8(ctx, data, inp, wf, wt, bias, state, out,
                                   batch_size, num_filters, num_units)
            else:
                for name, t in (("weights_feature", wf), ("weights_time", wt),
                                ("activation state", state)):
                    if t.type != FLOAT32:
                        raise ctx.error(f"{name} type {type_name(t.type)} must be float32")
                if bias.type != FLOAT32:
                    raise ctx.error(f"bias type {type_name(bias.type)} must be float32")
                if out.type != FLOAT32:
                    raise ctx.error(f"output type {type_name(out.type)} must be float32")
                data.scratch_tensor_index = ctx.request_scratch(batch_size * num_filters * 4)
                data.activation = int(params.fused_activation_function)
            data.batch_size, data.input_size = batch_size, input_size
            data.num_filters, data.num_units = num_filters, num_units
            data.memory_size, data.rank = memory_size, rank
            data.integer = inp.type == INT8
            # the state's reset value (the interpreter's: the zero point of an int8
            # variable, else 0) and whether this node is the only one touching it
            data.state_start = int(state.zero_point) if state.type == INT8 else 0
            data.state_private = _only_user(ctx, node, node.inputs[ACTIVATION_STATE])
            data.state_epoch = ctx.reset_epoch
            # weights and bias from a DECODE operator arrive at invoke
            data.constant = wf.data is not None and wt.data is not None and bias.data is not None
            if data.constant:
                self._cache_weights(data, wf.data, wt.data, bias.data)
        finally:
            ctx.release(inp, wf, wt, state, out, bias)

    def _prepare_int8(self, ctx, data, inp, wf, wt, bias, state, out,
                      batch_size, num_filters, num_units):
        if wf.type != INT8:
            raise ctx.error(f"weights_feature type {type_name(wf.type)} must be int8")
        if wt.type not in (INT16, INT8) or state.type not in (INT16, INT8):
            raise ctx.error(f"weights_time ({type_name(wt.type)}) and activation state "
                            f"({type_name(state.type)}) must be int16 or int8")
        if wt.type != state.type:
            # TFLM reads the state with the time weights' element type (a mismatch makes
            # it read or write outside the state buffer): refuse it.
            raise ctx.error(f"weights_time type {type_name(wt.type)} and activation state "
                            f"type {type_name(state.type)} must match")
        if bias.type != INT32:
            raise ctx.error(f"bias type {type_name(bias.type)} must be int32")
        if out.type != INT8:
            raise ctx.error(f"output type {type_name(out.type)} must be int8")
        f32, f64 = np.float32, np.float64
        with np.errstate(all="ignore"):     # C float arithmetic: overflow gives inf
            if ctx.target.float32_expressions:
                # TFLM 90b983c2's source: float32 expressions, widened to double afterwards
                scale_1 = float(f32(f32(inp.scale) * f32(wf.scale)) / f32(state.scale))
                state_time = f64(f32(state.scale) * f32(wt.scale))
                scale_2 = float(f32(f32(state_time) / f32(out.scale)))
            else:
                # the tflite-micro package: every scale widened to double first
                scale_1 = float(f64(f32(inp.scale)) * f64(f32(wf.scale)) / f64(f32(state.scale)))
                state_time = f64(f32(state.scale)) * f64(f32(wt.scale))
                scale_2 = float(state_time / f64(f32(out.scale)))
        if not abs(float(f32(bias.scale)) - float(state_time)) < 1e-5:
            raise ctx.error(f"bias scale {bias.scale} must equal activation state scale x "
                            f"weights_time scale ({float(state_time)}) (TFLM: std::abs(bias "
                            "scale - state scale x weights_time scale) < 1e-5 was not true)")
        data.effective_scale_1_a, data.effective_scale_1_b = quantize_multiplier(scale_1)
        data.effective_scale_2_a, data.effective_scale_2_b = quantize_multiplier(scale_2)
        data.input_zero_point = inp.zero_point
        data.output_zero_point = out.zero_point
        data.activation_state_zero_point = state.zero_point
        data.scratch_tensor_index = ctx.request_scratch(batch_size * num_filters * 4)
        data.scratch_output_tensor_index = ctx.request_scratch(batch_size * num_units * 4)
        info = np.iinfo(state.dtype)
        data.state_min, data.state_max = int(info.min), int(info.max)

    @staticmethod
    def _cache_weights(data, wf, wt, bias) -> None:
        """The weights and bias as the invoke paths use them (float64 / int64 for the
        integer path)."""
        if data.integer:
            data.weights_feature = np.ascontiguousarray(np.asarray(wf, dtype=np.float64).T)
            data.weights_time = np.asarray(wt, dtype=np.int64).reshape(data.num_filters, -1)
            data.bias = np.asarray(bias, dtype=np.int64).reshape(-1)[:data.num_units]
            # the feature sums are exact in float64 and wrap in int32 only when some
            # filter's sum of |weights| x the largest |input - zero point| reaches 2^31
            zp = data.input_zero_point
            largest_input = max(abs(-128 - zp), abs(127 - zp))
            largest_dot = float(np.abs(data.weights_feature).sum(axis=0).max(initial=0)) * largest_input
            data.feature_may_wrap = largest_dot >= 2.0 ** 31
            # time sums: |state - zero point| x |time weight| per slot, summed over the
            # memory; float64 holds them exactly below 2^53
            zp = data.activation_state_zero_point
            largest_state = max(abs(data.state_min - zp), abs(data.state_max - zp))
            largest_time = float(np.abs(data.weights_time).sum(axis=1).max(initial=0)) * largest_state
            data.weights_time_f64 = (data.weights_time.astype(np.float64)
                                     if largest_time < 2.0 ** 53 else None)
            # the per-filter int32 scratch and the per-unit sums (+ bias) cannot wrap when
            # rank x the largest time sum + the largest |bias| stays below 2^31
            largest_bias = float(np.abs(data.bias).max(initial=0))
            data.time_may_wrap = largest_time * data.rank + largest_bias >= 2.0 ** 31
            # feature sums below 2^24 are exact in float32 (any summation order)
            data.feature_dtype = np.float32 if largest_dot < 2.0 ** 24 else np.float64
            data.weights_feature_exact = data.weights_feature.astype(data.feature_dtype)
            # all memory slots but the newest, summed per filter (a uniform state's share)
            data.weights_time_head = data.weights_time[:, :-1].sum(axis=1)
            data.weights_time_last = data.weights_time[:, -1]
            data.fast = Svdf._fast_feature_stage(data)
            data.fast_tables = {}
            # host tables of the two output stages (int8 state; single invokes)
            data.feature_table = data.time_table = None
            if data.state_min == -128 and data.state_max == 127 and not data.feature_may_wrap:
                zp = data.activation_state_zero_point
                table = OutputTable(data.effective_scale_1_a, data.effective_scale_1_b,
                                    data.state_min, data.state_max,
                                    post=lambda v: (v + zp + 128) % 256 - 128)
                data.feature_table = table if table.available else None
            if not data.time_may_wrap:
                zp = data.output_zero_point
                table = OutputTable(data.effective_scale_2_a, data.effective_scale_2_b,
                                    -128 - zp, 127 - zp, post=lambda v: v + zp)
                data.time_table = table if table.available else None
        else:
            data.weights_feature = np.ascontiguousarray(np.asarray(wf, dtype=np.float32).T)
            data.weights_time = np.asarray(wt, dtype=np.float32).reshape(data.num_filters,
                                                                         data.memory_size)
            data.bias = np.asarray(bias, np.float32).reshape(-1)[:data.num_units]

    @staticmethod
    def _fast_feature_stage(data):
        """The folded feature FC (:class:`FoldedFcStage`: one float64 product, five int32
        passes, exact; tests/test_folded_stages.py) for int8 states and rank 1, where a
        uniform state makes each output a function of its filter's newest value alone
        (see :meth:`_invoke_int8_uniform`); None otherwise."""
        if data.rank != 1 or data.state_min != -128 or data.state_max != 127:
            return None
        weights = np.rint(data.weights_feature.T).astype(np.int64)          # (filters, input)
        stage = FoldedFcStage(weights, -data.input_zero_point, (-128, 127), None,
                              [data.effective_scale_1_a] * data.num_filters,
                              [data.effective_scale_1_b] * data.num_filters, 0,
                              data.state_min, data.state_max)
        return stage if stage.available and stage.uniform_limit is not None else None

    def invoke(self, ctx, node):
        data = node.user_data
        if not data.constant:
            arrays = node.input_arrays
            self._cache_weights(data, arrays[WEIGHTS_FEATURE], arrays[WEIGHTS_TIME], arrays[BIAS])
        x = node.input_arrays[INPUT]
        out = node.output_arrays[OUTPUT]
        state = node.input_arrays[ACTIVATION_STATE]
        b, f, m = data.batch_size, data.num_filters, data.memory_size
        flat = state.reshape(-1)
        # a block's state rows all hold the reset value: then every slot but the newest
        # holds that one value after the shift. Known without a look at the first invoke
        # since a reset when no other node touches the state; else checked
        fresh = data.state_private and data.state_epoch != ctx.reset_epoch
        data.state_epoch = ctx.reset_epoch
        uniform = None
        if ctx.block_samples and x.dtype != np.float32 and flat.size:
            if fresh:
                uniform = data.state_start
            elif _is_uniform(flat):
                uniform = int(flat[0])
        # the whole flat state moves one element towards the front (the last one stays);
        # on a uniform state that changes nothing
        if uniform is None:
            np.copyto(flat[:-1], flat[1:])
        mem = flat.reshape(b, f, m)
        if x.dtype == np.float32:
            self._invoke_float(data, x.reshape(b, -1), mem, out, math_for(ctx.target))
        else:
            self._invoke_int8(data, x.reshape(b, -1), mem, out, uniform)

    def _invoke_int8(self, data, x, mem, out, uniform=None):
        if uniform is not None and data.fast is not None:
            self._invoke_int8_uniform(data, x, mem, out, uniform)
            return
        xin = x.astype(data.feature_dtype)
        xin -= data.input_zero_point
        dot = (xin @ data.weights_feature_exact).astype(np.int64)                 # (b, f)
        if data.feature_table is not None:
            # the clamped value + zero point, wrapped to the int8 state (as below)
            data.feature_table.read(dot, mem[:, :, -1])
            self._time_stage(data, mem, out, data.batch_size, uniform)
            return
        if data.feature_may_wrap:
            dot = wrap_int32(dot)
        dot = multiply_by_quantized_multiplier(dot, data.effective_scale_1_a,
                                               data.effective_scale_1_b)
        clip_into(dot, data.state_min, data.state_max, out=dot)
        dot += data.activation_state_zero_point
        np.copyto(mem[:, :, -1], dot, casting="unsafe")  # C conversion to the state type wraps
        self._time_stage(data, mem, out, data.batch_size, uniform)

    @staticmethod
    def _time_stage(data, mem, out, batch: int, uniform=None) -> None:
        """The int8 path after the newest memory slot is written: the time sums (every
        slot but the newest = ``uniform`` when given), rank sums, bias, output stage."""
        newest = mem[:, :, -1]
        zero_point = data.activation_state_zero_point
        if uniform is None and data.weights_time_f64 is None:
            sums = np.einsum("bfm,fm->bf", mem.astype(np.int64) - zero_point, data.weights_time)
        elif uniform is None:
            centred = mem.astype(np.float64)
            centred -= zero_point
            sums = np.einsum("bfm,fm->bf", centred, data.weights_time_f64).astype(np.int64)
        else:
            # sum over m of (slot - zp) x weight, with every slot but the newest = uniform
            sums = (newest.astype(np.int64) - zero_point) * data.weights_time_last
            sums += (uniform - zero_point) * data.weights_time_head
        scratch = wrap_int32(sums) if data.time_may_wrap else sums
        if data.rank == 1:
            units = scratch.reshape(batch, data.num_units)
        else:
            units = scratch.reshape(batch, data.num_units, data.rank).sum(axis=2)
        acc = units + data.bias
        if data.time_table is not None:
            data.time_table.read(acc, out.reshape(batch, data.num_units))
            return
        if data.time_may_wrap:
            acc = wrap_int32(acc)
        acc = multiply_by_quantized_multiplier(acc, data.effective_scale_2_a,
                                               data.effective_scale_2_b)
        acc += data.output_zero_point
        clip_into(acc, -128, 127, out=acc)
        np.copyto(out.reshape(batch, data.num_units), acc, casting="unsafe")

    def _output_table(self, data, uniform: int) -> np.ndarray:
        """(filters x 256) int8: the output of each filter (rank 1: unit = filter) for
        each clamped feature value c = -128..127 (entry c + 128) when every older memory
        slot holds ``uniform``, computed by this kernel's own integer path
        (:meth:`_invoke_int8`, plain form) on all 256 values at once."""
        table = data.fast_tables.get(uniform)
        if table is None:
            f, m = data.num_filters, data.memory_size
            values = np.arange(-128, 128, dtype=np.int64)
            mem = np.full((256, f, m), uniform, dtype=np.int8)
            # the newest slot as the plain path writes it: value + zero point, wrapped
            newest = np.broadcast_to((values + data.activation_state_zero_point)[:, None], (256, f))
            np.copyto(mem[:, :, -1], newest, casting="unsafe")
            out = np.empty((256, f), dtype=np.int8)
            self._time_stage(data, mem, out, 256)      # the general (einsum) form
            table = np.ascontiguousarray(out.T)
            data.fast_tables[uniform] = table
        return table

    def _invoke_int8_uniform(self, data, x, mem, out, uniform: int) -> None:
        """A block whose state rows all hold ``uniform``: the folded feature FC gives each
        filter's clamped value c (offset by the stage's constant), the newest state slot
        is c + zero point (wrapped to int8 as the plain path's C conversion), and the
        output is the filter's table entry for c (:meth:`_output_table`)."""
        b, f = x.shape[0], data.num_filters
        stage = data.fast
        q = stage.rows_last(x)                                       # c + stage.offset
        table = self._output_table(data, uniform)
        index = q + (np.arange(f, dtype=np.int32) * 256 + (128 - stage.offset))
        np.take(table.reshape(-1), index, out=out.reshape(b, f))
        q += data.activation_state_zero_point - stage.offset
        np.copyto(mem[:, :, -1], q, casting="unsafe")

    def _invoke_float(self, data, x, mem, out, math=None):
        """``math``: the C library's float functions of the target's build (sigmoid and
        tanh activations; :func:`math_for`)."""
        math = math or math_for()
        mem[:, :, -1] = float32_sequential_matmul(x, data.weights_feature)
        scratch = np.zeros(mem.shape[:2], dtype=np.float32)
        wt = data.weights_time
        for j in range(data.memory_size):
            scratch += wt[:, j] * mem[:, :, j]
        total = np.broadcast_to(data.bias, (data.batch_size, data.num_units)).copy()
        grouped = scratch.reshape(data.batch_size, data.num_units, data.rank)
        for r in range(data.rank):
            total += grouped[:, :, r]
        np.copyto(out.reshape(-1), activation_value_float(data.activation, total,
                                                          math.expf, math.tanhf).reshape(-1))


def _only_user(ctx, node, tensor: int) -> bool:
    """Whether ``tensor`` (of the node's subgraph) is read or written by this node alone
    and is not one of the subgraph's inputs or outputs."""
    graph = ctx.model.subgraphs[ctx.subgraph_index]
    if tensor in graph.inputs or tensor in graph.outputs:
        return False
    uses = sum(list(op.inputs).count(tensor) + list(op.outputs).count(tensor)
               for op in graph.operators)
    return uses == list(node.inputs).count(tensor) + list(node.outputs).count(tensor)


def _is_uniform(flat: np.ndarray) -> bool:
    """Whether every element of the flat state equals the first (compared eight bytes at
    a time when the layout allows)."""
    if flat.dtype.itemsize == 1 and flat.size % 8 == 0 and flat.flags.c_contiguous \
            and flat.ctypes.data % 8 == 0:
        words = flat.view(np.uint64)
        return bool((words == words[0]).all()) and bool((flat[:8] == flat[0]).all())
    return bool((flat == flat[0]).all())
