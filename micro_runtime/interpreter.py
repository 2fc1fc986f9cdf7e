"""MicroInterpreter: TFLM's interpreter loop over the emulated arena.

``allocate_tensors()`` runs TFLM's sequence: model structs, builtin options, every
kernel's init, every kernel's prepare, the static memory plan, the interpreter's input
and output tensors, then a reset of variable tensors. ``invoke()`` runs the kernels in
order; each reads and writes numpy views of the arena, so a tensor really lives at its
planned offset and a wrong plan corrupts results as it would on the device.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable, List, Optional, Union

import numpy as np

from arena.allocator import MicroAllocator, SubgraphAllocation
from arena.arena import PROBE_ARENA_BYTES, Arena, min_arena_bytes
from arena.recording import TFLM_LINE_END, RecordingArena, RecordingMicroAllocator
from kernels.internal.quantization import TfliteCheckError, c_semantics

from . import schema
from ._blas import limit_blas_threads
from .context import INIT, INVOKE, PLANNING, PREPARE, KernelContext
from .errors import (ArenaTooSmallError, InputError, InterpreterStateError, KernelError,
                     LimitError, MicroRuntimeError, ModelError, TensorIndexError)
from .model import Model, load_model
from .op_resolver import OpResolver, default_op_resolver
from .limits import INVOKE_LOOP_ITERATIONS, SIZING_LOOP_ITERATIONS, check_loop_iterations
from .targets import DEFAULT_TARGET, Target, get_target
from .tflm_names import CallableCount, add_tflm_aliases

ErrorReporter = Callable[[str], None]

#: the largest tensor (bytes) for which a too-small-arena error measures the size that
#: works (a sizing pass takes host memory for the bytes it uses); beyond, the error
#: gives the bound that tensor sets
MAX_PROBE_ARENA_BYTES = 1 << 28
#: the largest arena_size accepted (bytes, 2^40): far beyond any device; an arena takes
#: host memory only for the bytes its model uses
MAX_ARENA_BYTES = PROBE_ARENA_BYTES
#: the largest alternate decompression memory (bytes): TFLM's size_t on 32-bit targets
MAX_ALT_DECOMPRESSION_BYTES = (1 << 32) - 1
#: the largest ``num_resource_variables`` (TFLM takes an int)
MAX_RESOURCE_VARIABLES = (1 << 31) - 1

#: TFLM's kTfLiteOk, and kTfLiteAbort: a kernel's invoke returns it to end the run early
STATUS_OK, STATUS_ABORT = 0, 15


def _host_memory_error(node, stage: str, error: MemoryError) -> LimitError:
    """The :class:`LimitError` for an operator whose host-side working arrays (numpy
    temporaries of its ``stage``, beyond the arena's bytes) do not fit this host."""
    detail = str(error) or "out of memory"
    return LimitError(f"{node.name} (operator #{node.index}"
                      + (f" of subgraph {node.subgraph_index}" if node.subgraph_index else "")
                      + f"): this host ran out of memory for the working arrays of its {stage} "
                      f"({detail})", limit="host memory")


def stderr_reporter(message: str) -> None:
    """The default error reporter: TFLM's MicroPrintf, one CR LF-terminated line on stderr."""
    sys.stderr.write(message.rstrip("\r\n") + TFLM_LINE_END)
    sys.stderr.flush()


class _Guard:
    """Refuses a second thread entering the interpreter while it is busy."""

    def __init__(self):
        self._lock = threading.Lock()

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            raise InterpreterStateError(
                "the interpreter is already in use by another thread; a MicroInterpreter "
                "must not be used from concurrent threads (create one per thread)")
        return self

    def __exit__(self, *exc):
        self._lock.release()
        return False


def _has_own_reset(registration) -> bool:
    """Whether a node's kernel has a reset that does something (the base class's does
    nothing; a kernel registered without one has none)."""
    from kernels.base import Kernel
    reset = getattr(registration, "reset", None)
    return callable(reset) and getattr(reset, "__func__", None) is not Kernel.reset


def _variable_start(tensor) -> int:
    """The byte a variable tensor is reset to: its zero point for int8, else 0."""
    q = tensor.spec.quantization
    if tensor.type == schema.TensorType.INT8 and q is not None:
        return int(q.zero_points[0]) & 0xFF
    return 0


#: ops whose kernels read only the shape and type of their input, never its values
SHAPE_ONLY_OPS = frozenset({"SHAPE", "ZEROS_LIKE"})


def undefined_read(model: Model) -> Optional[str]:
    """Why invoking ``model`` reads undefined bytes, or None: an operator reads a tensor
    nothing has written (not an input of its subgraph, not constant, not a variable,
    not an output of an earlier operator), or a subgraph output is such a tensor. TFLM
    allocates and runs such a model, but the kernel (or the caller) then reads whatever
    the arena held there (a fresh arena's malloc'd bytes, or what an earlier buffer
    left), so the outputs are undefined."""
    for s, sg in enumerate(model.subgraphs):
        written = set(t for t in sg.inputs if t >= 0)

        def unwritten(t: int):
            """The spec of tensor ``t`` if its bytes are undefined at this point, else None."""
            if t < 0 or t >= len(sg.tensors) or t in written:
                return None
            spec = sg.tensors[t]
            if spec.data is not None or spec.is_variable or any(int(d) == 0 for d in spec.shape):
                return None
            return spec

        for op in sg.operators:
            if op.name not in SHAPE_ONLY_OPS:
                for k, t in enumerate(op.inputs):
                    spec = unwritten(t)
                    if spec is not None:
                        return (f"{op.describe()}: input {k} ({spec.describe()}) is read before "
                                f"anything writes it (not an input of subgraph {s}, not constant, "
                                "not a variable, not an output of an earlier operator): TFLM reads "
                                "whatever bytes its arena holds there, so the outputs are undefined "
                                "(allocation and sizing are exact)")
            written.update(t for t in op.outputs if t >= 0)
        for k, t in enumerate(sg.outputs):
            spec = unwritten(t)
            if spec is not None:
                return (f"output {k} of subgraph {s} ({spec.describe()}) is never written (not an "
                        "input of the subgraph, not constant, not a variable, not an output of any "
                        "operator): TFLM hands over whatever bytes its arena holds there, so it is "
                        "undefined (allocation and sizing are exact)")
    return None


@add_tflm_aliases
class MicroInterpreter:
    """Runs a model in an emulated TFLM tensor arena.

    ``model``: a path, bytes or a loaded :class:`Model`. ``arena_size``: bytes (default:
    ten times the model size, like the tflite_micro package). ``target``: the TFLM build to
    emulate, a name of :data:`~micro_runtime.targets.TARGETS` or a
    :class:`~micro_runtime.targets.Target` (default ``"cortex-m4+cmsis-nn"``; ``"host64"``
    is the tflite-micro package): struct sizes and kernel library. ``op_resolver``: the
    operators the model may use (default: every one micro-runtime runs) and kernels of
    your own; the kernels micro-runtime ships always come from the target's kernel
    library (:meth:`OpResolver.for_target`), so resolver and target cannot disagree. ``planner``: ``"greedy"`` or ``"linear"`` (TFLM's
    preserve-all-tensors mode). ``recording``: keep TFLM's RecordingMicroAllocator
    accounting for :meth:`print_allocations` (:class:`recording.RecordingMicroInterpreter`
    is that, under TFLM's class name, with the figures as numbers). ``error_reporter``:
    a callable that receives TFLM's log messages (allocation failures, "Node ... failed
    to prepare", ...; default: stderr, CR LF-ended as MicroPrintf writes); errors still
    reach the caller as exceptions. ``alt_decompression_memory_size``: bytes of a memory
    outside the arena for decompressed tensors (TFLM's SetDecompressionMemory, as the
    tflite-micro package's argument of that name): DECODE outputs and compressed weights
    go there when they fit instead of into the arena. ``max_loop_iterations``: WHILE
    iterations one invoke may run, all loops together (None, the default: no bound, as
    TFLM; an invoke stays interruptible with Ctrl-C); past it the invoke raises
    :class:`LimitError`. The interpreter's own sizing passes (:meth:`min_arena_bytes`,
    the size that works in an ArenaTooSmallError, :meth:`resize_input_tensor`) use it
    too, or :data:`~micro_runtime.limits.SIZING_LOOP_ITERATIONS` when it is None.
    ``npu_stub``: co-processor operators
    (the ``ethos-u`` operator of Vela-compiled models, on the ``cortex-m55+ethos-u*``
    targets) return at once when invoked, computing nothing, as the QEMU builds behind
    the Ethos-U figures do (the NPU is not emulated): for sizing only; without it,
    invoking such an operator raises :class:`~micro_runtime.errors.KernelError`.
    """

    #: invoke refuses a model whose outputs are not emulated: an offline plan with live
    #: buffers on shared bytes (:meth:`arena.allocator.MicroAllocator._offline_overlap`),
    #: or a tensor read before anything writes it (:func:`undefined_read`); sizing
    #: passes and invokes for figures only (``npu_stub``) go on: their allocations are
    #: exact
    refuse_unemulated_plans = True
    #: an interpreter for the figures only (sizing passes, ``audit``): invoke skips the
    #: arithmetic of operators whose invoke cannot change the arena, in models without
    #: control flow; outputs are then not computed. Set before allocate_tensors().
    skip_computing = False

    def __init__(self, model: Union[Model, str, os.PathLike, bytes], op_resolver: Optional[OpResolver] = None,
                 arena_size: Optional[int] = None, *, target: Union[str, Target] = DEFAULT_TARGET,
                 planner: str = "greedy", recording: bool = False,
                 num_resource_variables: int = 0, error_reporter: Optional[ErrorReporter] = None,
                 alt_decompression_memory_size: int = 0,
                 max_loop_iterations: Optional[int] = INVOKE_LOOP_ITERATIONS, npu_stub: bool = False):
        limit_blas_threads()
        self._max_loop_iterations = check_loop_iterations(max_loop_iterations)
        self.model = model if isinstance(model, Model) else load_model(model)
        self.target = get_target(target)
        if op_resolver is None:
            op_resolver = default_op_resolver()
        elif not isinstance(op_resolver, OpResolver):
            raise InputError(f"op_resolver must be an OpResolver, not {type(op_resolver).__name__}")
        # the target's kernel library runs the ops the resolver names (TFLM: the build's
        # OPTIMIZED_KERNEL_DIR); kernels of the user's own are kept
        self.op_resolver = op_resolver.for_target(self.target)
        self.error_reporter = error_reporter or stderr_reporter
        if planner not in ("greedy", "linear"):
            raise InputError(f"planner must be 'greedy' or 'linear', not {planner!r}")
        self.planner = planner
        for name, flag in (("recording", recording), ("npu_stub", npu_stub)):
            if not isinstance(flag, (bool, np.bool_)):
                raise InputError(f"{name} must be True or False, not {flag!r}")
        self.recording = bool(recording)
        if arena_size is None:
            arena_size = len(self.model.raw) * 10
        if (isinstance(arena_size, bool) or not isinstance(arena_size, (int, np.integer))
                or not 0 <= arena_size <= MAX_ARENA_BYTES):
            raise InputError(f"arena_size must be a number of bytes from 0 to {MAX_ARENA_BYTES} "
                             f"(2^40), not {arena_size!r}")
        self.arena_size = int(arena_size)
        self._guard = _Guard()
        #: optional callable(node, seconds) called after each operator's invoke
        self.profiler: Optional[Callable] = None
        if (isinstance(num_resource_variables, bool) or not isinstance(num_resource_variables, (int, np.integer))
                or not 0 <= num_resource_variables <= MAX_RESOURCE_VARIABLES):
            raise InputError(f"num_resource_variables must be a count from 0 to {MAX_RESOURCE_VARIABLES}, "
                             f"not {num_resource_variables!r}")
        self.num_resource_variables = int(num_resource_variables)
        if (isinstance(alt_decompression_memory_size, bool)
                or not isinstance(alt_decompression_memory_size, (int, np.integer))
                or not 0 <= alt_decompression_memory_size <= MAX_ALT_DECOMPRESSION_BYTES):
            raise InputError(f"alt_decompression_memory_size must be a number of bytes from 0 to "
                             f"{MAX_ALT_DECOMPRESSION_BYTES} (2^32 - 1), not "
                             f"{alt_decompression_memory_size!r}")
        self.alt_decompression_memory_size = int(alt_decompression_memory_size)
        #: co-processor operators (``ethos-u``) invoke as a stub that returns at once,
        #: leaving their outputs as the arena holds them (what the QEMU builds behind the
        #: Ethos-U figures do): for sizing, never for results
        self.npu_stub = bool(npu_stub)
        self.delegates = []
        # Unknown operators are reported all at once, before any allocation.
        self._allocated = self._invoked = False
        self._undefined_read: Optional[str] = None     # computed on the first invoke
        try:
            self.op_resolver.check(self.model)
            self._check_tensor_sizes()
        except ArenaTooSmallError as e:
            self._report_once(e)
            raise self._with_min_arena(e) from None
        except MicroRuntimeError as e:
            self._report_once(e)
            raise
        self._setup()

    def _setup(self) -> None:
        """A fresh arena and allocator with TFLM's start-up allocations; nothing planned."""
        self._allocated = False
        self._invoked = False
        self._failed: Optional[BaseException] = None
        self.subgraphs: List[SubgraphAllocation] = []
        self.input_tensors = []
        self.output_tensors = []
        self._inputs: List[np.ndarray] = []
        self._invoke_plans: List[list] = []
        self._outputs: List[np.ndarray] = []
        self.resource_variables = None
        self.arena = self._make_arena(self.arena_size)
        try:
            self.allocator = self._make_allocator()
            if self.num_resource_variables > 0:
                from kernels.internal.resource_variables import MicroResourceVariables
                self.resource_variables = MicroResourceVariables.create(
                    self.allocator, self.num_resource_variables)
            self.ctx = KernelContext(self)
            self.ctx.loop_budget = self._max_loop_iterations
            if self.alt_decompression_memory_size:
                # MicroContext::SetDecompressionMemory keeps one size_t per region
                self.allocator.allocate_persistent_buffer(self.target.sizeof("size_t"))
                # zero-filled on demand: pages no decompressed tensor touches cost nothing
                try:
                    self.ctx.decompression_memory = np.zeros(self.alt_decompression_memory_size, np.uint8)
                except (MemoryError, ValueError):
                    raise LimitError(f"this host cannot allocate the "
                                     f"{self.alt_decompression_memory_size} bytes of the alternate "
                                     "decompression memory", limit="host memory") from None
        except ArenaTooSmallError as e:
            self._report_once(e)
            raise self._with_min_arena(e) from None

    def modify_graph_with_delegate(self, delegate) -> None:
        """Let ``delegate`` take the nodes it supports (see :mod:`micro_runtime.delegates.delegate`),
        then plan and allocate the arena for the new graph. If the delegate fails — in
        its own prepare, or its kernel while the graph is prepared — the interpreter goes
        back to the graph and plan it had, and :class:`DelegateError` is raised."""
        from .delegates.delegate import DelegateError, DelegateNodeKernel, apply_delegate
        with self._guard:
            old_model, old_resolver, was_allocated = self.model, self.op_resolver, self._allocated
            registrations = [self.op_resolver.find(op.builtin_code, op.custom_code)
                             for op in self.model.main.operators]
            try:
                new_model, kernels = apply_delegate(self.model, registrations, delegate)
            except DelegateError as e:
                self._report_once(e)
                raise
            resolver = OpResolver()
            resolver._builtin = dict(old_resolver._builtin)
            resolver._custom = dict(old_resolver._custom)
            for name, kernel in kernels.items():
                resolver._custom[name] = DelegateNodeKernel(kernel, delegate, name)
            try:
                self.model, self.op_resolver = new_model, resolver
                self._setup()
                self._allocate()
            except MicroRuntimeError as e:
                self.model, self.op_resolver = old_model, old_resolver
                self._setup()
                if was_allocated:
                    self._allocate()
                error = DelegateError(f"delegate {getattr(delegate, 'name', delegate)!r} failed; "
                                      f"the original graph is restored: {e}")
                self._report_once(error)
                self._report("Restored original execution plan after delegate application failure.")
                raise error from e
            self.delegates.append(delegate)

    # -------------------------------------------------------------- set up
    @property
    def max_loop_iterations(self) -> Optional[int]:
        """WHILE iterations one invoke may run, all loops together (None: no bound)."""
        return self._max_loop_iterations

    @max_loop_iterations.setter
    def max_loop_iterations(self, value: Optional[int]) -> None:
        self._max_loop_iterations = check_loop_iterations(value)
        self.ctx.loop_budget = self._max_loop_iterations

    #: the earlier name of :attr:`max_loop_iterations`
    max_while_iterations = max_loop_iterations

    def _make_arena(self, size: int) -> Arena:
        """The arena (bookkeeping; host memory is taken only for the bytes used)."""
        try:
            if self.recording:
                return RecordingArena(size)
            return Arena(size)
        except (MemoryError, OverflowError):
            raise InputError(f"arena_size {size} bytes: this host cannot allocate that much "
                             "memory") from None

    def _make_allocator(self) -> MicroAllocator:
        if self.recording:
            return RecordingMicroAllocator(self.arena, self.target, self.planner)
        return MicroAllocator(self.arena, self.target, self.planner)

    def _check_tensor_sizes(self) -> None:
        """Reject tensors whose byte size cannot fit in the arena before allocating."""
        from arena.allocator import tensor_bytes
        for sg in self.model.subgraphs:
            for spec in sg.tensors:
                nbytes = tensor_bytes(spec)
                if spec.data is None and nbytes > self.arena_size:
                    raise ArenaTooSmallError(
                        f"{spec.describe()} of shape {spec.shape} needs {nbytes} bytes on its own",
                        requested=nbytes, available=self.arena_size,
                        missing=nbytes - self.arena_size, arena_bytes=self.arena_size)

    def _report(self, message: str) -> None:
        try:
            self.error_reporter(message)
        except Exception:  # a broken reporter must not hide the real error
            pass

    def _report_once(self, error: BaseException) -> None:
        """Send ``error``'s message to the error reporter (once per exception object,
        however many levels see it), preceded by TFLM's line for a missing builtin op."""
        if getattr(error, "_micro_runtime_reported", False):
            return
        from .errors import UnsupportedOpError
        if isinstance(error, UnsupportedOpError):
            for name in error.missing:
                if name in schema.BUILTIN_OP_CODES:
                    self._report(f"Didn't find op for builtin opcode '{name}'")
        self._report(str(error))
        try:
            error._micro_runtime_reported = True
        except AttributeError:
            pass

    def _report_node_failure(self, error: BaseException, node, stage: str) -> None:
        """The kernel's message, then MicroInterpreterGraph's line for the failed node
        (TFLM prints the prepare line with its "%df" format: "number 3f")."""
        self._report_once(error)
        number = f"{node.index}f" if stage == "prepare" else f"{node.index}"
        self._report(f"Node {node.name} (number {number}) failed to {stage} with status 1")

    # ------------------------------------------------------------ allocate
    def allocate_tensors(self) -> None:
        """Plan and allocate the arena; run every kernel's init and prepare."""
        with self._guard:
            self._allocate_once()

    def _allocate_once(self) -> None:
        """allocate_tensors() inside the guard: nothing when allocated already; the
        earlier failure (InterpreterStateError) after a failed allocation."""
        if self._allocated:
            return
        if self._failed is not None:
            raise InterpreterStateError(f"allocate_tensors() failed before: {self._failed}")
        try:
            self._allocate()
        except ArenaTooSmallError as e:
            self._failed = e
            self._report_once(e)
            raise self._with_min_arena(e) from None
        except MicroRuntimeError as e:
            self._failed = e
            self._report_once(e)
            raise

    def _allocate(self) -> None:
        from kernels.internal.quantization import c_semantics
        with np.errstate(all="ignore"), c_semantics(self.target.cpu, self.target.debug_checks):
            self._allocate_steps()

    def _allocate_steps(self) -> None:
        model, allocator, ctx = self.model, self.allocator, self.ctx
        if model.compression is not None and self.target.compression:
            for line in model.compression.messages:
                self._report(line)
        self.subgraphs = allocator.start_model_allocation(model)

        # Registrations and builtin options (TFLM's parser allocates them in the tail).
        for sg in self.subgraphs:
            for node in sg.nodes:
                spec = node.spec
                node.registration = self.op_resolver.find(spec.builtin_code, spec.custom_code)
                if spec.builtin_code != schema.BuiltinOperator.CUSTOM:
                    if spec.custom_options is not None:
                        raise ModelError(f"{spec.describe()}: Unsupported behavior: found builtin "
                                         f"operator {spec.name} with custom options")
                    if spec.params.struct is not None:
                        before = self.arena.persistent_used_bytes
                        allocator.allocate_builtin_data(spec.params.struct)
                        node.tail_bytes["builtin_data"] += self.arena.persistent_used_bytes - before

        ctx.state = INIT
        for s, sg in enumerate(self.subgraphs):
            ctx.subgraph_index = s
            for node in sg.nodes:
                ctx.node = node
                before = self.arena.persistent_used_bytes
                node.user_data = node.registration.init(ctx, node)
                node.tail_bytes["persistent"] += self.arena.persistent_used_bytes - before

        ctx.state = PREPARE
        for s, sg in enumerate(self.subgraphs):
            ctx.subgraph_index = s
            for node in sg.nodes:
                ctx.node = node
                before = self.arena.persistent_used_bytes
                try:
                    self._check_writable_outputs(sg, node)
                    node.registration.prepare(ctx, node)
                except MicroRuntimeError as e:
                    self._report_node_failure(e, node, "prepare")
                    raise
                except TfliteCheckError as e:       # a check TFLM fails (or aborts on)
                    error = ctx.error(str(e))
                    self._report_node_failure(error, node, "prepare")
                    raise error from None
                except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError,
                        KeyError, AttributeError, FloatingPointError) as e:
                    error = ctx.error(f"failed to prepare: {type(e).__name__}: {e}")
                    self._report_node_failure(error, node, "prepare")
                    raise error from e
                except MemoryError as e:
                    error = _host_memory_error(node, "prepare", e)
                    self._report_node_failure(error, node, "prepare")
                    raise error from None
                node.tail_bytes["persistent"] += self.arena.persistent_used_bytes - before
                self._check_compressed_inputs(s, sg, node)
                if self.target.compression:
                    ctx.reset_decompression_memory()
                self._check_dynamic_outputs(sg, node)
                allocator.finish_prepare_node(node.index)
        ctx.node = None
        ctx.subgraph_index = 0

        ctx.state = PLANNING
        allocator.finish_model_allocation(model, self.subgraphs)

        main = model.subgraphs[0]
        pointer = self.target.sizeof("pointer")
        allocator.allocate_persistent_buffer(pointer * len(main.inputs))
        self.input_tensors = [allocator.allocate_persistent_tensor(main.tensors[t], self.subgraphs[0].tensors[t])
                              for t in main.inputs]
        allocator.allocate_persistent_buffer(pointer * len(main.outputs))
        self.output_tensors = [allocator.allocate_persistent_tensor(main.tensors[t], self.subgraphs[0].tensors[t])
                               for t in main.outputs]

        self._materialize()
        ctx.state = INVOKE
        self._allocated = True
        self._reset()

    def _check_writable_outputs(self, sg: SubgraphAllocation, node) -> None:
        """An operator output that is a constant tensor of the model: TFLM's kernel would
        write its results into the model's buffer (read-only flash on a device); refused
        before the kernel's prepare."""
        for k, t in enumerate(node.outputs):
            if 0 <= t < len(sg.tensors) and sg.tensors[t].is_constant:
                raise self.ctx.error(
                    f"output {k} ({sg.tensors[t].spec.describe()}) is a constant tensor of the "
                    "model: its values are the model's, and TFLM's kernel would write its "
                    "results into the model's buffer (read-only flash on a device)")

    def _check_compressed_inputs(self, s: int, sg: SubgraphAllocation, node) -> None:
        """A COMPRESSION_METADATA tensor read by a kernel that does not decompress it:
        TFLM would hand that kernel the packed indices as values; refuse instead."""
        for i, t in enumerate(node.inputs):
            if t >= 0 and t in sg.compressed and (s, node.index, i) not in self.ctx.claimed_compressed_inputs:
                error = self.ctx.error(
                    f"input {i} ({sg.tensors[t].spec.describe()}) is LUT-compressed "
                    f"(COMPRESSION_METADATA) but TFLM's {node.name} kernel does not decompress "
                    "this input: it would read the packed indices as tensor values")
                self._report_node_failure(error, node, "prepare")
                raise error

    def _check_dynamic_outputs(self, sg: SubgraphAllocation, node) -> None:
        for t in node.outputs:
            if t < 0:
                continue
            shape = sg.tensors[t].shape
            if len(shape) == 1 and shape[0] == 0:
                continue
            if any(d <= 0 for d in shape):
                raise ModelError(f"Op#{node.index} ({node.name}) of subgraph {node.subgraph_index} "
                                 f"has dynamic tensor #{t}: Dynamic tensors are not supported")

    def _materialize(self) -> None:
        """Numpy views of the arena for every tensor in it, then per-node lists."""
        arena = self.arena
        for sg in self.subgraphs:
            for tensor in sg.tensors:
                if tensor.address is not None:
                    count = tensor.nbytes // max(tensor.dtype.itemsize, 1)
                    view = arena.view(tensor.address, tensor.dtype, count)
                    tensor.data = view.reshape(tensor.shape) if tensor.shape else view.reshape(())
                elif tensor.data is None:
                    # zero-byte or never-planned tensor: an empty array of its shape
                    try:
                        tensor.data = np.zeros(tensor.shape, dtype=tensor.dtype) if tensor.nbytes == 0 else None
                    except (ValueError, MemoryError, OverflowError) as e:
                        # the model reader refuses such shapes; a Model built in code may not
                        raise ModelError(f"a tensor of shape {tuple(tensor.shape)} cannot be "
                                         f"represented: {e}") from None
            for node in sg.nodes:
                node.input_arrays = [sg.tensors[t].data if t >= 0 else None for t in node.inputs]
                node.output_arrays = [sg.tensors[t].data if t >= 0 else None for t in node.outputs]
        self.ctx.scratch_views = [
            arena.view(address, np.uint8, req.bytes)
            for address, req in zip(self.allocator.scratch_addresses, self.allocator.scratch_requests)]
        main = self.subgraphs[0]
        self._inputs = [main.tensors[t].data for t in self.model.subgraphs[0].inputs]
        self._outputs = [main.tensors[t].data for t in self.model.subgraphs[0].outputs]
        # what invoke walks: each node with its kernel's bound invoke
        self._invoke_plans = [[(node, node.registration.invoke) for node in sg.nodes]
                              for sg in self.subgraphs]
        if self.skip_computing and not any(node.registration.op in CONTROL_FLOW_OPS
                                           for sg in self.subgraphs for node in sg.nodes):
            # a pass for the figures only: in a model without control flow (where no value
            # decides what runs), the nodes whose invoke cannot change the arena
            # (Kernel.invoke_allocates_for) are not computed -- their arithmetic adds
            # nothing to the allocation timeline, and takes host memory and time
            self._invoke_plans = [
                [(node, invoke if node.registration.invoke_allocates_for(node) else _skip_invoke)
                 for node, invoke in plan] for plan in self._invoke_plans]
        # what reset() walks: the kernels with a reset of their own, and each variable
        # tensor's bytes with the value they start from (its zero point for int8)
        self._reset_plans = [([(node, node.registration.reset) for node in sg.nodes
                               if _has_own_reset(node.registration)],
                              [(arena.view(t.address, np.uint8, t.nbytes), _variable_start(t))
                               for t in sg.tensors if t.is_variable and t.address is not None])
                             for sg in self.subgraphs]

    def _with_min_arena(self, error: ArenaTooSmallError) -> ArenaTooSmallError:
        """Add the arena size that would have worked to an ArenaTooSmallError; for a model
        with a tensor over :data:`MAX_PROBE_ARENA_BYTES` (whose sizing pass would take
        that much host memory and time), the bound that tensor sets instead."""
        from arena.allocator import tensor_bytes
        largest = max([tensor_bytes(t) for sg in self.model.subgraphs for t in sg.tensors
                       if t.data is None] + [0])
        if largest > MAX_PROBE_ARENA_BYTES:
            return error.with_context(self.arena_size, None, largest)
        try:
            needed = self.min_arena_bytes()
        except ArenaTooSmallError as e:
            return error.with_context(self.arena_size, None, getattr(e, "lower_bound", None))
        except MicroRuntimeError:
            needed = None
        return error.with_context(self.arena_size, needed)

    # -------------------------------------------------------------- invoke
    def _require_allocated(self) -> None:
        if not self._allocated:
            if self._failed is not None:
                raise InterpreterStateError(f"allocate_tensors() failed: {self._failed}")
            raise InterpreterStateError("call allocate_tensors() (or invoke(), which allocates) "
                                        "before accessing tensors")

    def invoke(self) -> int:
        """Run the model once on the current inputs. Returns 0, or TFLM's kTfLiteAbort
        (15) when a kernel ended the run early (CIRCULAR_BUFFER between its periods):
        the operators after it did not run.

        As TFLM's MicroInterpreter::Invoke, allocates the tensors first when
        :meth:`allocate_tensors` has not run; a failed allocation raises what
        allocate_tensors() raises (ArenaTooSmallError, KernelError, ...), and an invoke
        after a failed allocation logs TFLM's "Invoke() called after initialization
        failed" and raises :class:`InterpreterStateError`.
        """
        with self._guard:
            if not self._allocated and self._failed is not None:
                self._report("Invoke() called after initialization failed")
            self._allocate_once()
            self.check_emulated()
            self.ctx.loop_iterations = 0
            trace_length = len(self.arena.trace)
            # C++ float arithmetic overflows silently (inf / nan); so does ours
            try:
                with np.errstate(all="ignore"), c_semantics(self.target.cpu, self.target.debug_checks):
                    status = self._invoke_subgraph(0)
            except BaseException:
                # interrupted (Ctrl-C) or failed part-way: drop what the unfinished run left
                # in the arena's bookkeeping, so the interpreter can invoke again
                self._abandon_invoke(trace_length)
                raise
            if not self._invoked and status == STATUS_OK:
                # one whole invoke completes the allocation timeline; later ones repeat it
                self._invoked = True
                self.arena.tracing = False
            return status

    def check_emulated(self) -> None:
        """Raise :class:`ModelError` when this allocated model's outputs are not emulated:
        an offline plan with live buffers on shared bytes, or a tensor read before anything
        writes it (see :attr:`refuse_unemulated_plans`). A co-processor's operators (Vela's)
        share and read their scratch on purpose: not checked on those targets."""
        if not self.refuse_unemulated_plans or self.npu_stub or self.target.co_processor:
            return
        if self._undefined_read is None:
            self._undefined_read = undefined_read(self.model) or ""
        overlap = getattr(self.allocator, "offline_overlap", None)
        if overlap:
            raise ModelError(overlap)
        if self._undefined_read:
            raise ModelError(self._undefined_read)

    def _abandon_invoke(self, trace_length: int) -> None:
        """After an invoke that did not finish: its temporaries are dropped, the
        decompression memory is reset, and an unfinished first invoke leaves no partial
        entries in the allocation timeline (the next complete invoke records it)."""
        self.arena.abandon_temporaries()
        self.ctx.reset_decompression_memory()
        self.ctx.subgraph_index, self.ctx.node = 0, None
        if not self._invoked:
            del self.arena.trace[trace_length:]

    def invoke_subgraph(self, index: int) -> int:
        """Run subgraph ``index`` (used by control-flow kernels while invoking); returns
        0 or kTfLiteAbort."""
        return self._invoke_subgraph(index)

    def _invoke_subgraph(self, index: int) -> int:
        if not 0 <= index < len(self.subgraphs):
            raise ModelError(f"Accessing subgraph {index} but only {len(self.subgraphs)} subgraphs found")
        ctx = self.ctx
        previous = (ctx.subgraph_index, ctx.node)
        ctx.subgraph_index = index
        reset_temp = self.allocator.reset_temp_allocations
        arena = self.arena
        compression = self.target.compression
        profiler = self.profiler
        try:
            for node, invoke in self._invoke_plans[index]:
                ctx.node = node
                try:
                    if profiler is None:
                        result = invoke(ctx, node)
                    else:
                        start = time.perf_counter()
                        result = invoke(ctx, node)
                        profiler(node, time.perf_counter() - start)
                except MicroRuntimeError as e:
                    self._report_node_failure(e, node, "invoke")
                    raise
                except TfliteCheckError as e:       # a check TFLM fails (or aborts on)
                    error = ctx.error(str(e))
                    self._report_node_failure(error, node, "invoke")
                    raise error from None
                except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError,
                        KeyError, AttributeError, FloatingPointError) as e:
                    error = ctx.error(f"failed to invoke: {type(e).__name__}: {e}")
                    self._report_node_failure(error, node, "invoke")
                    raise error from e
                except MemoryError as e:
                    error = _host_memory_error(node, "invoke", e)
                    self._report_node_failure(error, node, "invoke")
                    raise error from None
                if compression:
                    ctx.reset_decompression_memory()
                # a node that took no temporaries leaves nothing to reset (and, once the
                # timeline is complete, nothing to trace)
                if arena.tracing or arena.temp != arena.head:
                    reset_temp()
                if result == STATUS_ABORT:
                    return STATUS_ABORT
        finally:
            ctx.subgraph_index, ctx.node = previous
        return STATUS_OK

    def reset(self) -> None:
        """Reset kernels' state and every variable tensor (to its zero point for int8)."""
        with self._guard:
            self._require_allocated()
            self._reset()

    def _reset(self) -> None:
        ctx = self.ctx
        ctx.reset_epoch += 1
        for s, (kernel_resets, variables) in enumerate(self._reset_plans):
            ctx.subgraph_index = s
            for node, reset in kernel_resets:
                ctx.node = node
                reset(ctx, node)
            for raw, value in variables:
                raw.fill(value)
        ctx.subgraph_index, ctx.node = 0, None
        if self.resource_variables is not None:
            self.resource_variables.reset_all()

    # ----------------------------------------------------------- tensors
    @property
    def inputs_size(self) -> int:
        """The number of model inputs (also callable: TFLM's ``inputs_size()``)."""
        return CallableCount(len(self.model.subgraphs[0].inputs))

    @property
    def outputs_size(self) -> int:
        """The number of model outputs (also callable: TFLM's ``outputs_size()``)."""
        return CallableCount(len(self.model.subgraphs[0].outputs))

    def input(self, index: int = 0) -> np.ndarray:
        """Input ``index`` as a writable numpy view of the arena (zero copy).
        :class:`TensorIndexError` (an ``IndexError``) when out of range."""
        self.check_io_index("Input", index)
        self._require_allocated()
        return self._inputs[index]

    def output(self, index: int = 0) -> np.ndarray:
        """Output ``index`` as a numpy view of the arena (zero copy; overwritten by the
        next invoke). :class:`TensorIndexError` (an ``IndexError``) when out of range."""
        self.check_io_index("Output", index)
        self._require_allocated()
        return self._outputs[index]

    def check_io_index(self, kind: str, index) -> None:
        """TFLM's range check of input(i) (``kind`` "Input") / output(i) ("Output"): its
        log line to the error reporter, then :class:`TensorIndexError`."""
        length = self.inputs_size if kind == "Input" else self.outputs_size
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise InputError(f"{kind} index must be an integer, not {index!r}")
        if not 0 <= index < length:
            message = f"{kind} index {index} out of range (length is {length})"
            self._report(message)
            raise TensorIndexError(message)

    def set_input(self, value, index: int = 0) -> None:
        """Copy ``value`` into input ``index``. The dtype and shape must match exactly
        (nothing is cast)."""
        with self._guard:
            target = self.input(index)
            if not isinstance(value, np.ndarray):
                raise InputError(f"input {index}: expected a numpy array of dtype {target.dtype} "
                                 f"and shape {tuple(target.shape)}, got {type(value).__name__}")
            if value.dtype != target.dtype:
                raise InputError(f"input {index}: expected dtype {target.dtype} but got {value.dtype} "
                                 "(values are not cast)")
            if tuple(value.shape) != tuple(target.shape):
                raise InputError(f"input {index}: expected shape {tuple(target.shape)} but got "
                                 f"{tuple(value.shape)}")
            if not target.flags.writeable:
                raise InputError(f"input {index} is a constant tensor of the model (its values "
                                 "come from the model file): it cannot be set")
            np.copyto(target, value)

    def get_input_index(self, name: str) -> int:
        """Position of the model input called ``name``."""
        return self._index_by_name(name, self.model.subgraphs[0].inputs, "input")

    def get_output_index(self, name: str) -> int:
        """Position of the model output called ``name``."""
        return self._index_by_name(name, self.model.subgraphs[0].outputs, "output")

    def _index_by_name(self, name: str, indices, kind: str) -> int:
        if not isinstance(name, str):
            raise InputError(f"a model {kind} name must be a string, not {name!r}")
        tensors = self.model.subgraphs[0].tensors
        for k, t in enumerate(indices):
            if tensors[t].name == name:
                return k
        known = ", ".join(repr(tensors[t].name) for t in indices)
        raise InputError(f"no model {kind} named {name!r}; the {kind}s are {known}")

    def get_tensor_details(self) -> List[dict]:
        """Every tensor of the main subgraph: index, name, shape, dtype, quantization,
        and where its data lives (constant / arena offset / not planned)."""
        out = []
        main = self.model.subgraphs[0]
        evals = self.subgraphs[0].tensors if self.subgraphs else [None] * len(main.tensors)
        for spec, ev in zip(main.tensors, evals):
            q = spec.quantization
            if spec.data is not None:
                where = "constant"
            elif ev is not None and ev.address is not None:
                where = "arena"
            else:
                where = "none"
            out.append({"index": spec.index, "name": spec.name, "shape": np.array(spec.shape, np.int32),
                        "dtype": spec.dtype.type, "bytes": ev.nbytes if ev is not None else None,
                        "location": where, "arena_offset": None if ev is None else ev.address,
                        "is_variable": spec.is_variable,
                        "quantization_parameters": {
                            "scales": np.zeros(0, np.float32) if q is None else q.scales.copy(),
                            "zero_points": np.zeros(0, np.int32) if q is None else q.zero_points.astype(np.int32),
                            "quantized_dimension": 0 if q is None else q.quantized_dimension}})
        return out

    def resize_input_tensor(self, index: int, shape) -> int:
        """Give input ``index`` (its position, as for :meth:`input`) a new ``shape``.

        *Emulator extension*: TFLM cannot resize (shapes come from the flatbuffer);
        TFLite can. Every shape downstream is inferred (:mod:`micro_runtime.shape_inference`),
        the interpreter starts over with a fresh arena, and :meth:`allocate_tensors` must
        be called again (as after TFLite's ``ResizeInputTensor``; :meth:`invoke` does it
        when needed); tensor contents are not kept. Returns the minimum arena (bytes)
        for the new shapes.

        Raises :class:`InputError` when a shape cannot be carried through an op, and
        :class:`ArenaTooSmallError` (``min_arena_bytes`` = the size needed) when the new
        plan does not fit this interpreter's arena; the interpreter then keeps its old
        shapes (re-allocated if it was allocated). Not available after
        :meth:`modify_graph_with_delegate` (resize first, then delegate).
        """
        from .shape_inference import resize_inputs
        with self._guard:
            if self.delegates:
                raise InterpreterStateError("resize_input_tensor() after modify_graph_with_delegate() "
                                            "is not supported; resize first, then apply the delegate")
            try:
                new_model = resize_inputs(self.model, {index: shape})
            except MicroRuntimeError as e:
                self._report_once(e)
                raise
            old_model, was_allocated = self.model, self._allocated
            try:
                self.model = new_model
                self._setup()
                needed = self.min_arena_bytes()
                if needed > self.arena_size:
                    raise ArenaTooSmallError(
                        f"resize_input_tensor: input {index} resized to "
                        f"{new_model.main.tensors[new_model.main.inputs[index]].shape} does not fit",
                        requested=needed, available=self.arena_size, missing=needed - self.arena_size,
                        arena_bytes=self.arena_size, min_arena_bytes=needed)
            except MicroRuntimeError as e:
                self._report_once(e)
                self.model = old_model
                self._setup()
                if was_allocated:
                    self._allocate()
                raise
            return needed

    def tensor(self, index: int, subgraph: int = 0) -> Optional[np.ndarray]:
        """The data of any tensor (constant data, or its arena view). With the greedy
        planner an intermediate tensor's memory is reused by later tensors."""
        self._require_allocated()
        for what, value in (("tensor index", index), ("subgraph index", subgraph)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InputError(f"{what} must be an integer, not {value!r}")
        if not 0 <= subgraph < len(self.subgraphs):
            raise TensorIndexError(f"subgraph {subgraph} out of range (model has {len(self.subgraphs)})")
        tensors = self.subgraphs[subgraph].tensors
        if not 0 <= index < len(tensors):
            raise TensorIndexError(f"tensor index {index} out of range (subgraph has {len(tensors)} tensors)")
        return tensors[index].data

    # ------------------------------------------------------------ figures
    def arena_used_bytes(self) -> int:
        """Bytes of the arena in use: head (or the temporaries above it) plus tail."""
        return self.arena.used_bytes

    @property
    def head_bytes(self) -> int:
        """The head (non-persistent section, or the temporaries above it) in bytes: TFLM's
        "Arena allocation head"."""
        return self.arena.non_persistent_used_bytes

    @property
    def tail_bytes(self) -> int:
        """The tail (persistent section) in bytes: TFLM's "Arena allocation tail"."""
        return self.arena.persistent_used_bytes

    def min_arena_bytes(self) -> int:
        """The smallest arena (bytes) in which allocate_tensors() and invoke() succeed
        for this model, target and planner: the peak over the whole allocation
        timeline, temporaries included."""
        arena = self.arena if self._allocated and self._invoked else self._arena_with_large_size()
        return min_arena_bytes(arena.trace, upper_bound=max(1024, arena.stats.total_peak or 1024))

    def _arena_with_large_size(self) -> Arena:
        """The arena of a sizing pass (same model, kernels, target, planner): allocation
        and one invoke in a nominal arena of PROBE_ARENA_BYTES, which takes host memory
        only for the bytes used; its trace is the complete allocation timeline."""
        bound = self._max_loop_iterations
        probe = SizingProbe(self.model, self.op_resolver, PROBE_ARENA_BYTES, target=self.target,
                            planner=self.planner, recording=self.recording,
                            num_resource_variables=self.num_resource_variables,
                            error_reporter=lambda m: None,
                            alt_decompression_memory_size=self.alt_decompression_memory_size,
                            max_loop_iterations=SIZING_LOOP_ITERATIONS if bound is None else bound,
                            npu_stub=True)
        probe.ctx.loop_budget_hint = ("the interpreter's sizing pass allows "
                                      f"{probe.max_loop_iterations}; set max_loop_iterations to "
                                      "allow more")
        probe.allocate_tensors()
        probe.invoke()
        return probe.arena

    # --------------------------------------------------------------- misc
    def print_allocations(self, file=None) -> None:
        """Print TFLM's RecordingMicroAllocator report (needs ``recording=True``) to
        ``file`` (default stderr), byte for byte as the tflite-micro package writes it:
        TFLM's lines, each ended by CR LF."""
        if not self.recording:
            raise InterpreterStateError("Cannot print allocations as they were not recorded "
                                        "(use RecordingMicroInterpreter, or recording=True)")
        self.allocator.print_allocations(file)

    def __del__(self):
        try:
            if self._allocated:
                for s, sg in enumerate(self.subgraphs):
                    self.ctx.subgraph_index = s
                    for node in sg.nodes:
                        node.registration.free(self.ctx, node)
        except Exception:
            pass


class SizingProbe(MicroInterpreter):
    """The interpreter of a sizing pass: a failure (even in its 2^40-byte nominal arena)
    is reported as it is, without another sizing pass for the size that would work; an
    offline plan whose outputs are not emulated does not stop it."""

    refuse_unemulated_plans = False
    skip_computing = True

    def _with_min_arena(self, error: ArenaTooSmallError) -> ArenaTooSmallError:
        return error


#: operators whose invoke runs other subgraphs (what they run depends on values)
CONTROL_FLOW_OPS = frozenset({"IF", "WHILE", "CALL_ONCE"})


def _skip_invoke(ctx, node) -> None:
    """A sizing pass's stand-in for an invoke that only computes."""
    return None
