"""Batched evaluation: a data set through the model, bit-identical to one invoke() per sample.

:func:`evaluate` (and :class:`Evaluator`, which keeps its set-up for several calls) runs
thousands of samples through the same kernels as :class:`~micro_runtime.MicroInterpreter`,
N samples per pass. Every sample's outputs equal what a fresh single-sample interpreter
gives after ``reset()`` then ``invoke()`` on that sample (``stream=True``: what one
interpreter gives on the samples in order, state carried from each to the next).

How. A second, host-side interpreter runs a *block* copy of the main subgraph in which
every sample-dependent tensor has a leading sample axis of N (see
:mod:`kernels.internal.sample_rows`: a unit batch axis becomes the sample axis, any
other shape gets one in front). Each operator's kernel is asked
(:meth:`kernels.base.Kernel.sample_rows`) whether it computes every sample of such a
block exactly as separate invokes would; those that say so run once per block (their
state, if any, one row per sample). Every other operator -- unknown semantics across
samples, a reduction, transpose or gather over the sample axis, control flow, custom
ops, a kernel that refuses the block shapes -- runs sample by sample: the sample's
inputs are copied into a normal single-sample interpreter's tensors, its kernel runs
there (reset first when it keeps state), and the outputs are copied back into the block.
So an operator never gives a wrong answer for want of a declaration, only a slower one.

Whole models run sample by sample on the single-sample interpreter (``reset()`` then
``invoke()``, or no reset with ``stream=True``) when batching cannot be right or cannot
help: resource variables (state shared across operators), ``stream=True`` on a model with
state, state inside control-flow subgraphs, or no operator that runs on blocks.

The arena figures of the model are not affected: both interpreters are private to the
evaluation; the block interpreter's arena is host memory sized for N samples.
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

import numpy as np

from . import schema
from .api import count_resource_variables
from .builtin_options import OpParams
from .errors import ArenaTooSmallError, InputError, KernelError, ModelError
from .interpreter import STATUS_ABORT, MicroInterpreter
from .model import OFFLINE_MEMORY_ALLOCATION, Model, TensorSpec, load_model
from .op_resolver import OpResolver, default_op_resolver
from .samples import as_samples
from .targets import DEFAULT_TARGET, Target
from .workers import available_processors, die_with_parent, worker_count  # noqa: F401 - re-exported
from kernels.internal.sample_rows import SampleBlock, block_shape

#: largest default block: beyond it the per-operator overhead is already negligible
MAX_DEFAULT_BATCH = 4096
#: arena bytes (the single-sample plan's head times the batch) a default block aims at:
#: blocks much larger than the processor's caches run slower per sample
DEFAULT_BLOCK_BYTES = 1 << 20
#: a model with at least this many planned bytes per sample (a real convolution stack) gets
#: blocks of at most :data:`MAX_CACHED_BATCH` samples: its kernels' float working arrays,
#: several times its tensors, outgrow the caches beyond that (2026-11, samples/s with
#: blocks of 26 to 50 samples against the 65 and 175 the byte target gives: kws_ref_model
#: +12 %, micro_speech_quantized +9 %); smaller models keep the large blocks that amortize
#: their per-operator overhead
CACHED_BATCH_MIN_BYTES = 4096
MAX_CACHED_BATCH = 32
#: ... and those blocks are sized by this larger byte budget instead of
#: :data:`DEFAULT_BLOCK_BYTES` (2026-11, CPU us per sample with blocks of 18 / 14 / 21 against
#: 32: person_detect 967 -> 844, vww_96_int8 944 -> 903, pretrainedResnet_quant 815 -> 816;
#: the per-layer working sets, not the whole plan, are what must stay in cache)
CACHED_BLOCK_BYTES = 4 << 20
#: arena bytes (block interpreter) beyond which evaluation refuses to grow the arena
MAX_BLOCK_ARENA = 4 << 30
#: seconds of estimated work below which run(jobs=N) starts no worker processes
MIN_PARALLEL_SECONDS = 0.5

Progress = Callable[[int, int], None]


def _silent(message: str) -> None:
    pass


def _own_sample_rows(kernel):
    """The kernel's ``sample_rows`` declaration, if its own kernel library made it: a
    CMSIS-NN variant that inherits the reference kernel's declaration computes with other
    arithmetic and state than the declaration speaks for, so it runs sample by sample
    unless it declares blocks itself."""
    for cls in type(kernel).__mro__:
        if "sample_rows" in cls.__dict__:
            if getattr(cls, "library", "reference") != getattr(kernel, "library", "reference"):
                return None
            return getattr(kernel, "sample_rows")
    return None


def _has_hidden_state(kernel) -> bool:
    """True when the kernel keeps state outside tensors (it overrides reset())."""
    from kernels.base import Kernel
    reset = getattr(type(kernel), "reset", None)
    if reset is None:
        return False
    return not (isinstance(kernel, Kernel) and reset is Kernel.reset)


def samples_per_job(samples: Optional[int], jobs) -> Optional[int]:
    """Each worker's share of ``samples`` when ``jobs`` processes are asked for (see
    :mod:`micro_runtime.workers`): what sets the default block size. Anything but a count
    of processes leaves ``samples`` alone (:meth:`Evaluator.run` refuses it)."""
    if samples is None:
        return samples
    try:
        share = worker_count(jobs, max(1, samples // 2))
    except InputError:
        return samples
    return -(-samples // share)


def _can_fork() -> bool:
    import multiprocessing
    return "fork" in multiprocessing.get_all_start_methods()


def _shared_empty(shape: Tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised array in anonymous shared memory: what forked workers write there
    their parent sees. The mapping lives as long as the array (or a view of it)."""
    import mmap
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    memory = mmap.mmap(-1, max(1, count * dtype.itemsize))
    return np.frombuffer(memory, dtype=dtype, count=count).reshape(shape)


def _plain_attributes(error: BaseException) -> Dict[str, object]:
    """An exception's attributes that are plain values (what a worker sends back)."""
    plain = (str, int, float, bool, type(None))
    return {k: v for k, v in vars(error).items()
            if isinstance(v, plain) or (isinstance(v, list) and all(isinstance(i, plain) for i in v))}


def _worker_error(name: str, message: str, attributes: Dict[str, object]) -> Exception:
    """The error a worker raised: the same class of :mod:`micro_runtime.errors` with the
    same message and attributes when it is one of them."""
    from . import errors
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.MicroRuntimeError):
        error = cls.__new__(cls)
        Exception.__init__(error, message)
        vars(error).update(attributes)
        return error
    return InputError(f"a worker process failed: {name}: {message}")


class _BlockInterpreter(MicroInterpreter):
    """The interpreter of the block model: ``ctx.block_samples`` set, no arena probing
    on failure (the evaluator grows the arena itself), no error printing."""

    def __init__(self, model: Model, resolver: OpResolver, arena_size: int, target, samples: int):
        self._samples = samples
        super().__init__(model, resolver, arena_size, target=target, error_reporter=_silent)

    def _setup(self) -> None:
        super()._setup()
        self.ctx.block_samples = self._samples

    def _with_min_arena(self, error: ArenaTooSmallError) -> ArenaTooSmallError:
        return error


class _SampleRunEnded(Exception):
    """A kernel ended one sample's run early (kTfLiteAbort): the operators after it must
    not run for that sample, which a block cannot express."""


class _PerSampleNode:
    """The block model's stand-in for an operator that cannot run on a block: copies each
    sample's inputs into the single-sample interpreter, runs the operator's own kernel
    there, and copies the outputs (and any state it updated) back into the block."""

    custom_name = None

    def __init__(self, evaluator: "Evaluator", index: int):
        self.evaluator = evaluator
        self.index = index
        self.views = None

    def init(self, ctx, node):
        return None

    def prepare(self, ctx, node):
        pass

    def reset(self, ctx, node):
        pass

    def free(self, ctx, node):
        pass

    def _bind(self, node) -> None:
        single = self.evaluator.single
        snode = single.subgraphs[0].nodes[self.index]
        tensors = single.subgraphs[0].tensors
        n = self.evaluator.batch
        shared, ins, outs = [], [], []
        for k, t in enumerate(node.inputs):
            spec = tensors[t].spec if t >= 0 else None
            if spec is None or spec.data is not None or tensors[t].data is None:
                continue
            if t not in self.evaluator.varying:
                # computed from constants once per block: the same for every sample
                shared.append((node.input_arrays[k], tensors[t].data))
                continue
            pair = (node.input_arrays[k].reshape((n,) + tuple(spec.shape)), tensors[t].data)
            ins.append(pair)
            if spec.is_variable:
                outs.append(pair)
        for k, t in enumerate(node.outputs):
            if t >= 0 and tensors[t].data is not None:
                pair = (node.output_arrays[k].reshape((n,) + tuple(tensors[t].shape)),
                        tensors[t].data)
                outs.append(pair)
                if tensors[t].spec.is_variable:
                    ins.append(pair)        # a state the kernel updates in place
        kernel = snode.registration
        reset = kernel.reset if self.evaluator._reset_nodes and _has_hidden_state(kernel) else None
        self.views = (snode, kernel.invoke, reset, shared, ins, outs)

    def invoke(self, ctx, node):
        if self.views is None:
            self._bind(node)
        snode, invoke, reset, shared, ins, outs = self.views
        single = self.evaluator.single
        sctx = single.ctx
        release = single.allocator.reset_temp_allocations
        sctx.subgraph_index, sctx.node = 0, snode
        try:
            for block, view in shared:
                np.copyto(view, block)
            for i in range(ctx.block_samples):
                for block, view in ins:
                    np.copyto(view, block[i, ...])
                if reset is not None:
                    reset(sctx, snode)
                try:
                    status = invoke(sctx, snode)
                except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError,
                        KeyError, AttributeError, FloatingPointError) as e:
                    # named after the operator itself, not this stand-in
                    raise sctx.error(f"failed to invoke: {type(e).__name__}: {e}") from e
                release()
                if status == STATUS_ABORT:
                    raise _SampleRunEnded()
                for block, view in outs:
                    np.copyto(block[i, ...], view)
        finally:
            sctx.node = None


@dataclasses.dataclass
class OpPlan:
    """How one operator of the main subgraph runs in the evaluation."""

    index: int
    op: str
    mode: str          #: "block" (once per block) or "per-sample"
    reason: str


class Evaluator:
    """Runs many samples through ``model``; see :mod:`micro_runtime.batched`.

    ``batch``: samples per block (default: about :data:`DEFAULT_BLOCK_BYTES` of planned
    tensors, at most :data:`MAX_DEFAULT_BATCH`; for models of :data:`CACHED_BATCH_MIN_BYTES`
    or more per sample, about :data:`CACHED_BLOCK_BYTES`, at most :data:`MAX_CACHED_BATCH`;
    and at most ``samples``, the number of samples it will be given when known).
    ``stream``: the samples are one sequence (state carried from sample to sample)
    instead of independent streams from the reset state. ``arena_size``: bytes of the single-sample interpreter's arena (default: what
    the model needs). The block interpreter's arena is sized automatically.
    ``max_loop_iterations``: WHILE iterations one sample's invoke may run (None: no
    bound, as TFLM; see :class:`MicroInterpreter`)."""

    def __init__(self, model: Union[Model, str, os.PathLike, bytes], *,
                 target: Union[str, Target] = DEFAULT_TARGET, batch: Optional[int] = None,
                 stream: bool = False, arena_size: Optional[int] = None,
                 op_resolver: Optional[OpResolver] = None, samples: Optional[int] = None,
                 max_loop_iterations: Optional[int] = None):
        from .limits import check_loop_iterations
        self.max_loop_iterations = check_loop_iterations(max_loop_iterations)
        self.model = model if isinstance(model, Model) else load_model(model)
        self.op_resolver = op_resolver if op_resolver is not None else default_op_resolver(target)
        self.target = target
        self.stream = bool(stream)
        if batch is not None and (isinstance(batch, bool) or not isinstance(batch, (int, np.integer))
                                  or batch < 1):
            raise InputError(f"batch must be a positive number of samples, not {batch!r}")
        self.single = self._single_interpreter(arena_size)
        self.single.check_emulated()        # outputs defined and emulated, as for invoke
        main = self.model.main
        for k, t in enumerate(main.inputs):
            if main.tensors[t].data is not None:
                raise ModelError(f"model input {k} ({main.tensors[t].name!r}) is a constant tensor: "
                                 "its values come from the model file, there is nothing to feed")
        self.input_specs = [main.tensors[t] for t in main.inputs]
        self.output_specs = [main.tensors[t] for t in main.outputs]
        self.stateful = self._model_has_state()
        self.varying = self._varying_tensors()
        #: reset nodes with hidden state before each sample (independent streams)
        self._reset_nodes = not self.stream
        self.batch = int(batch) if batch is not None else self._default_batch(samples)
        self.plan: List[OpPlan] = []
        self.sequential_reason: Optional[str] = self._whole_model_reason()
        self._block: Optional[_BlockInterpreter] = None
        #: worker processes the last :meth:`run` used (1: this process alone)
        self.jobs_used = 1
        if self.sequential_reason is None:
            self._build_block()
        if self.sequential_reason is not None:
            self.plan = [OpPlan(op.index, op.name, "per-sample", self.sequential_reason)
                         for op in main.operators]

    # --------------------------------------------------------------- set-up
    def _single_interpreter(self, arena_size: Optional[int]) -> MicroInterpreter:
        size = arena_size
        if size is None:
            from arena.allocator import tensor_bytes
            planned = sum(tensor_bytes(t) for sg in self.model.subgraphs for t in sg.tensors
                          if t.data is None)
            size = max(len(self.model.raw) * 10, 2 * planned + (16 << 10))
            if size > MAX_BLOCK_ARENA:
                raise InputError(f"the model's tensors need about {planned} bytes: more host "
                                 f"memory than evaluation allocates ({MAX_BLOCK_ARENA} bytes)")
        for _ in range(2):
            it = MicroInterpreter(self.model, self.op_resolver, size, target=self.target,
                                  num_resource_variables=count_resource_variables(self.model),
                                  error_reporter=_silent, max_loop_iterations=self.max_loop_iterations)
            try:
                it.allocate_tensors()
            except ArenaTooSmallError as e:
                if arena_size is not None or e.min_arena_bytes is None:
                    raise
                size = e.min_arena_bytes
                continue
            # the evaluation never asks this interpreter for its allocation timeline
            it.arena.tracing = False
            return it
        raise ArenaTooSmallError("the model does not fit in the arena it was said to need",
                                 0, 0, 0)

    def _model_has_state(self) -> bool:
        for sg_spec, sg in zip(self.model.subgraphs, self.single.subgraphs):
            if any(t.is_variable for t in sg_spec.tensors):
                return True
            if any(_has_hidden_state(node.registration) for node in sg.nodes):
                return True
        return self.single.resource_variables is not None or self._uses_resource_variables()

    def _uses_resource_variables(self) -> bool:
        names = {"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}
        return any(op.name in names for sg in self.model.subgraphs for op in sg.operators)

    def _whole_model_reason(self) -> Optional[str]:
        if self.batch == 1:
            return "batch of 1"
        if self.stream and self.stateful:
            return "stream: the model keeps state from sample to sample"
        if self._uses_resource_variables():
            return "resource variables (state shared across operators)"
        for sg_spec, sg in list(zip(self.model.subgraphs, self.single.subgraphs))[1:]:
            if any(t.is_variable for t in sg_spec.tensors) or any(
                    _has_hidden_state(node.registration) for node in sg.nodes):
                return "state inside a control-flow subgraph"
        if not self.model.main.operators:
            return "no operators"
        main = self.model.main
        if len(set(main.inputs)) != len(main.inputs):
            return "a tensor is given as a model input twice"
        if any(main.tensors[t].data is not None for t in self.varying):
            return "an operator writes a tensor that holds constant data"
        return None

    def _default_batch(self, samples: Optional[int]) -> int:
        per_sample = max(1, self.single.arena.non_persistent_used_bytes)
        batch = max(1, min(MAX_DEFAULT_BATCH, DEFAULT_BLOCK_BYTES // per_sample))
        if per_sample >= CACHED_BATCH_MIN_BYTES:
            batch = max(1, min(MAX_CACHED_BATCH, CACHED_BLOCK_BYTES // per_sample))
        if samples is not None and samples > 0:
            # as few blocks as that allows, evenly filled (little padding in the last)
            blocks = -(-int(samples) // batch)
            batch = -(-int(samples) // blocks)
        return int(batch)

    def _varying_tensors(self) -> Set[int]:
        """Indices of the main subgraph's sample-dependent tensors: the model inputs,
        variable tensors, and every output of an operator that reads one of them (or
        keeps state of its own)."""
        main = self.model.main
        varying = set(main.inputs) | {t.index for t in main.tensors if t.is_variable}
        for op, node in zip(main.operators, self.single.subgraphs[0].nodes):
            if _has_hidden_state(node.registration) or any(
                    t in varying for t in op.inputs + op.intermediates if t >= 0):
                varying.update(t for t in op.outputs if t >= 0)
        return varying

    def _declarations(self, refused: Dict[int, str]) -> Dict[int, object]:
        """op index -> its SampleBlock, for the operators whose kernels run on blocks
        (None for operators that only read sample-independent tensors)."""
        main = self.model.main
        blocks = {}
        self.plan = []
        varying = self.varying
        for op, node in zip(main.operators, self.single.subgraphs[0].nodes):
            kernel = node.registration
            if not any(t in varying for t in op.outputs if t >= 0):
                blocks[op.index] = None
                self.plan.append(OpPlan(op.index, op.name, "once",
                                        "reads no sample-dependent tensor: runs once per block"))
                continue
            if op.index in refused:
                self.plan.append(OpPlan(op.index, op.name, "per-sample", refused[op.index]))
                continue
            block = SampleBlock(op, main.tensors, varying, self.batch)
            declare = _own_sample_rows(kernel)
            try:
                ok = bool(declare(block)) if declare is not None else False
            except (ValueError, TypeError, IndexError, KeyError, AttributeError):
                ok = False
            if ok and block.new_constants and self.model.has_compression():
                # a compressed constant's stored bytes are not its values: no rewriting
                ok = False
            if ok:
                blocks[op.index] = block
                self.plan.append(OpPlan(op.index, op.name, "block", "runs once per block"))
            else:
                self.plan.append(OpPlan(op.index, op.name, "per-sample",
                                        "its kernel does not run on sample blocks here"))
        return blocks

    def _block_model(self, blocks: Dict[int, object]) -> Tuple[Model, OpResolver]:
        model, n = self.model, self.batch
        main = model.main
        tensors: List[TensorSpec] = [
            dataclasses.replace(t, shape=block_shape(t.shape, n)) if t.index in self.varying else t
            for t in main.tensors]
        resolver = OpResolver()
        resolver._builtin = dict(self.op_resolver._builtin)
        resolver._custom = dict(self.op_resolver._custom)
        operators = []
        for op in main.operators:
            if op.index in blocks and blocks[op.index] is None:
                operators.append(op)
                continue
            block = blocks.get(op.index)
            if block is None:
                name = f"micro_runtime/per_sample/{op.index}"
                resolver._custom[name] = _PerSampleNode(self, op.index)
                operators.append(dataclasses.replace(
                    op, builtin_code=schema.BuiltinOperator.CUSTOM, custom_code=name,
                    params=OpParams(None, {}, False, None), custom_options=None))
                continue
            inputs = list(op.inputs)
            for i, data in block.new_constants.items():
                old = tensors[inputs[i]]
                tensors.append(dataclasses.replace(old, index=len(tensors), shape=tuple(data.shape),
                                                   data=data))
                inputs[i] = len(tensors) - 1
            params = op.params
            if block.new_params:
                params = OpParams(params.options_name, {**params.as_dict(), **block.new_params},
                                  params.present, params.struct)
            operators.append(dataclasses.replace(op, inputs=tuple(inputs), params=params))
        sg = dataclasses.replace(main, tensors=tensors, operators=operators)
        metadata = {k: v for k, v in model.metadata.items() if k != OFFLINE_MEMORY_ALLOCATION}
        return dataclasses.replace(model, subgraphs=[sg], metadata=metadata), resolver

    def _build_block(self) -> None:
        refused: Dict[int, str] = {}
        single_bytes = self.single.arena.used_bytes
        arena = self.batch * max(single_bytes, 1024) + (1 << 20)
        for _ in range(len(self.model.main.operators) + 16):
            blocks = self._declarations(refused)
            if not any(b is not None for b in blocks.values()):
                self.sequential_reason = "no operator runs on sample blocks"
                return
            model, resolver = self._block_model(blocks)
            try:
                it = _BlockInterpreter(model, resolver, arena, self.target, self.batch)
                it.max_loop_iterations = self.max_loop_iterations
                it.allocate_tensors()
            except ArenaTooSmallError:
                arena *= 2
                if arena > MAX_BLOCK_ARENA:
                    raise InputError(f"a block of {self.batch} samples needs more than "
                                     f"{MAX_BLOCK_ARENA} bytes of host memory: use a smaller batch")
                continue
            except KernelError as e:
                if e.op_index is None or e.op_index in refused or e.op_index not in blocks:
                    raise
                refused[e.op_index] = f"its kernel refused the block shapes: {e.detail}"
                continue
            self._block = it
            main = it.subgraphs[0]
            spec = self.model.main
            self._block_inputs = [main.tensors[t].data.reshape((self.batch,) + tuple(spec.tensors[t].shape))
                                  for t in spec.inputs]
            self._block_outputs = [self._block_view(main.tensors[t], spec.tensors[t]) for t in spec.outputs]
            return
        raise InputError("could not set up batched evaluation")  # pragma: no cover

    def _block_view(self, block_tensor, spec: TensorSpec) -> np.ndarray:
        shape = (self.batch,) + tuple(spec.shape)
        if spec.index not in self.varying:
            return np.broadcast_to(block_tensor.data, shape)
        return block_tensor.data.reshape(shape)

    # ------------------------------------------------------------------ run
    def _check_inputs(self, inputs) -> List[np.ndarray]:
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if not isinstance(inputs, (list, tuple)):
            raise InputError(f"inputs: a numpy array (one model input) or a list of arrays, "
                             f"not {type(inputs).__name__}")
        if len(inputs) != len(self.input_specs):
            raise InputError(f"the model has {len(self.input_specs)} inputs but {len(inputs)} "
                             "arrays were given")
        out, count = [], None
        for k, (x, spec) in enumerate(zip(inputs, self.input_specs)):
            if not isinstance(x, np.ndarray):
                raise InputError(f"input {k}: expected a numpy array, got {type(x).__name__}")
            if x.dtype != spec.dtype:
                raise InputError(f"input {k}: expected dtype {spec.dtype} but got {x.dtype} "
                                 "(values are not cast)")
            samples, _ = as_samples(x, spec.shape, f"input {k}")
            if count is not None and samples.shape[0] != count:
                raise InputError(f"input {k} has {samples.shape[0]} samples but input 0 has {count}")
            count = samples.shape[0]
            out.append(samples)
        return out

    def run(self, inputs, progress: Optional[Progress] = None, jobs: int = 1) -> List[np.ndarray]:
        """Outputs for every sample: one array per model output, shape
        ``(samples, *output_shape)``. ``inputs``: one array per model input, shaped by
        the rule of :mod:`micro_runtime.samples` (``(samples, *input_shape)``, without
        the input's unit batch axis, or exactly the input's shape for one sample).
        ``progress(done, total)`` is called after each block. ``jobs``: worker processes
        that each run a contiguous share of the samples (see :meth:`usable_jobs`; the
        outputs do not depend on it). The first two blocks run in this process, the second
        timed; the workers start only when the rest would take
        :data:`MIN_PARALLEL_SECONDS` or more (:attr:`jobs_used` says how many ran); the
        output arrays then live in shared memory, where the workers wrote them."""
        xs = self._check_inputs(inputs)
        total = xs[0].shape[0] if xs else 0
        workers = self.usable_jobs(jobs, total)
        self.jobs_used = 1
        if workers <= 1:
            outs = [np.empty((total,) + tuple(s.shape), dtype=s.dtype) for s in self.output_specs]
            self._run_into(xs, outs, total, progress)
            return outs
        outs = [_shared_empty((total,) + tuple(s.shape), s.dtype) for s in self.output_specs]
        # the first two blocks run here (the first warms the buffers, the second is
        # timed): worker processes only pay for themselves on longer runs
        done, per_sample = 0, 0.0
        for _ in range(2):
            count = min(self.batch, total - done)
            if count <= 0:
                return outs
            started = time.perf_counter()
            self._run_range(xs, outs, done, done + count, total, progress)
            per_sample = (time.perf_counter() - started) / count
            done += count
        rest = total - done
        if rest <= 0:
            return outs
        if per_sample * rest < MIN_PARALLEL_SECONDS or rest < 2:
            self._run_range(xs, outs, done, total, total, progress)
        else:
            self.jobs_used = min(workers, rest // 2)
            self._run_parallel(xs, outs, done, total, progress, self.jobs_used)
        return outs

    def _run_range(self, xs, outs, start: int, stop: int, total: int, progress) -> None:
        """Samples [start, stop) in this process; progress counted from ``start``."""
        self._run_into([x[start:stop] for x in xs], [o[start:stop] for o in outs], stop - start,
                       None if progress is None else (lambda d, _t: progress(start + d, total)))

    def usable_jobs(self, jobs: int, total: int) -> int:
        """How many processes :meth:`run` uses for ``total`` samples when asked for
        ``jobs`` (0: one per processor; never more than the processors, see
        :mod:`micro_runtime.workers`). One when the samples are one sequence through the
        model's state (``stream=True`` on a stateful model) or when the platform cannot
        fork (the workers inherit the set-up instead of rebuilding it); never more than
        half the samples (two or more per worker)."""
        workers = worker_count(jobs, max(1, total // 2))
        if workers <= 1 or (self.stream and self.stateful) or not _can_fork():
            return 1
        return workers

    def _run_into(self, xs, outs, total, progress) -> None:
        done = 0
        if self._block is not None:
            try:
                self._run_blocks(xs, outs, total, progress)
                return
            except _SampleRunEnded as ended:
                # from now on whole samples one after the other, from the block that ended
                done = ended.args[0]
                self._block = None
                self.sequential_reason = "an operator ends runs early (kTfLiteAbort)"
                self.plan = [OpPlan(p.index, p.op, "per-sample", self.sequential_reason)
                             for p in self.plan]
        self._run_sequential(xs, outs, total, progress, start=done)

    def _run_parallel(self, xs, outs, first: int, total: int, progress, workers: int) -> None:
        """Samples [first, total) in forked workers, each running a contiguous share of
        ``xs`` (inherited, not copied) into ``outs`` (arrays in shared memory)."""
        import multiprocessing
        context = multiprocessing.get_context("fork")
        counter = context.Value("q", 0)
        errors = context.SimpleQueue()
        bounds = np.linspace(first, total, workers + 1).round().astype(np.int64)
        blocks_before = self._block is not None

        parent = os.getpid()

        def work(start: int, stop: int) -> None:
            die_with_parent(parent)

            def advance(done: int, _total: int) -> None:
                step = done - advance.reported
                advance.reported = done
                with counter.get_lock():
                    counter.value += step
            advance.reported = 0
            try:
                self._run_into([x[start:stop] for x in xs], [o[start:stop] for o in outs],
                               stop - start, advance)
            except BaseException as e:  # reported to the parent, which raises it
                errors.put((type(e).__name__, (str(e), _plain_attributes(e))))
                raise SystemExit(1)
            if self._block is None and blocks_before:
                errors.put(("ended", self.sequential_reason))

        processes = [context.Process(target=work, args=(int(a), int(b)), daemon=True)
                     for a, b in zip(bounds[:-1], bounds[1:])]
        try:
            for p in processes:
                p.start()
            reported = 0
            while any(p.is_alive() for p in processes):
                for p in processes:
                    p.join(timeout=0.05)
                if progress is not None and counter.value != reported:
                    reported = counter.value
                    progress(first + reported, total)
            reports = []
            while not errors.empty():
                reports.append(errors.get())
            failed = [p for p in processes if p.exitcode != 0]
            if failed:
                name, (message, attributes) = next(((n, m) for n, m in reports if n != "ended"), (
                    "worker", (f"a worker process ended with status {failed[0].exitcode}", {})))
                raise _worker_error(name, message, attributes)
            ended = [m for n, m in reports if n == "ended"]
            if ended:   # a worker's block run ended early: later runs go sample by sample too
                self._block = None
                self.sequential_reason = ended[0]
                self.plan = [OpPlan(p.index, p.op, "per-sample", ended[0]) for p in self.plan]
            if progress is not None and first + reported != total:
                progress(total, total)
        finally:
            for p in processes:
                if p.is_alive():
                    p.terminate()
                    p.join()

    def _run_sequential(self, xs, outs, total, progress, start: int = 0) -> None:
        it = self.single
        if self.stream:
            it.reset()
        step = max(1, min(total, 256))
        for i in range(start, total):
            if not self.stream and self.stateful:
                it.reset()
            for k, x in enumerate(xs):
                np.copyto(it._inputs[k], x[i])
            it.invoke()
            for k, o in enumerate(outs):
                o[i] = it._outputs[k]
            if progress is not None and ((i + 1) % step == 0 or i + 1 == total):
                progress(i + 1, total)

    def _run_blocks(self, xs, outs, total, progress) -> None:
        it, n = self._block, self.batch
        for start in range(0, total, n):
            count = min(n, total - start)
            for view, x in zip(self._block_inputs, xs):
                view[:count] = x[start:start + count]
                if count < n:
                    view[count:] = view[0]   # filler: a real sample, results dropped
            if self.stateful:
                it.reset()
            try:
                it.invoke()
            except _SampleRunEnded:
                raise _SampleRunEnded(start) from None
            for o, view in zip(outs, self._block_outputs):
                o[start:start + count] = view[:count]
            if progress is not None:
                progress(start + count, total)

    def describe(self) -> List[dict]:
        """The plan as dictionaries: index, op, mode ("block" / "per-sample"), reason."""
        return [dataclasses.asdict(p) for p in self.plan]


def evaluate(model: Union[Model, str, os.PathLike, bytes], inputs, *,
             target: Union[str, Target] = DEFAULT_TARGET, batch: Optional[int] = None,
             stream: bool = False, arena_size: Optional[int] = None,
             op_resolver: Optional[OpResolver] = None,
             progress: Optional[Progress] = None, jobs: int = 1) -> List[np.ndarray]:
    """Run every sample of ``inputs`` through ``model`` (a path, bytes or a loaded model);
    returns one array per model output with a leading sample axis, bit-identical to a
    ``reset()`` then ``invoke()`` per sample (``stream=True``: one invoke per sample in
    order, state carried along). ``inputs``: a numpy array per model input of shape
    ``(samples, *input_shape)`` (a list for several inputs; the input's unit batch axis
    may be left out). ``batch``: samples per block. ``jobs``: worker processes (0: one
    per processor; see :meth:`Evaluator.usable_jobs`). See :class:`Evaluator`."""
    samples = None
    first = inputs if isinstance(inputs, np.ndarray) else (
        inputs[0] if isinstance(inputs, (list, tuple)) and inputs else None)
    if isinstance(first, np.ndarray) and first.ndim >= 1:
        samples = first.shape[0]
    return Evaluator(model, target=target, batch=batch, stream=stream, arena_size=arena_size,
                     op_resolver=op_resolver, samples=samples_per_job(samples, jobs)).run(
                         inputs, progress=progress, jobs=jobs)


__all__ = ["Evaluator", "OpPlan", "available_processors", "evaluate", "block_shape",
           "samples_per_job"]
