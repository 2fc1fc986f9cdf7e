"""Arena sizing: the exact smallest arena for a model, and where its bytes go.

TFLM users find the arena size by trial on hardware, and TFLM's own "Arena allocation
total" can under-report it: temporaries (temporary TfLiteTensors during prepare, the
memory planner's scratch) peak while tensors are being allocated and are gone by the
time the total is printed. Here the whole allocation timeline is recorded (allocation
plus one invoke) and replayed, so the minimum is exact.

Two interpreters, two figures: ``recording`` is TFLM's RecordingMicroInterpreter (its
RecordingMicroAllocator, what the tflite-micro package and TFLM's own size tests use);
``micro`` is the plain MicroInterpreter with the default MicroAllocator, what firmware
links (a few hundred bytes smaller: no recording structs). Both are always measured.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from arena.arena import PROBE_ARENA_BYTES, min_arena_bytes, replay

from ..errors import InputError
from ..interpreter import MicroInterpreter
from ..limits import SIZING_LOOP_ITERATIONS, check_loop_iterations
from ..model import Model, load_model
from ..op_resolver import OpResolver
from ..targets import DEFAULT_TARGET, Target, get_target


#: the interpreter classes a figure can be for (``--interpreter``)
INTERPRETERS = ("recording", "micro")
#: the C++ class of each
INTERPRETER_CLASSES = {"recording": "tflite::RecordingMicroInterpreter", "micro": "tflite::MicroInterpreter"}


@dataclass
class ArenaSize:
    """Arena figures of one model on one target (all bytes). ``min_arena_bytes`` and the
    breakdown are for ``allocator``; both minimums are always given."""

    target: str
    allocator: str                 #: "recording" (RecordingMicroAllocator) or "plain" (MicroAllocator)
    min_arena_bytes: int           #: smallest arena with which allocation + invoke succeed
    head_bytes: int                #: planned non-persistent section
    tail_bytes: int                #: persistent section after allocation
    temp_peak_bytes: int           #: highest end of temporaries above the arena start
    timeline_peak_bytes: int       #: largest max(head, temp) + tail at any moment
    tflm_reported_total_bytes: int  #: what TFLM's "Arena allocation total" prints
    plain_min_arena_bytes: int     #: same model with the default (non-recording) MicroAllocator
    recording_min_arena_bytes: int = 0  #: same model with the RecordingMicroAllocator
    #: where the head peaks: operator, buffers live there (:func:`~.plan_view.head_peak`)
    peak: Optional[dict] = None
    #: models with co-processor (ethos-u) operators: the part of the head Vela planned
    #: (see :func:`npu_scratch_bytes`), None otherwise
    npu_scratch_bytes: Optional[int] = None

    @property
    def interpreter(self) -> str:
        """"recording" or "micro": the interpreter class the breakdown is for."""
        return "recording" if self.allocator == "recording" else "micro"

    @property
    def temporaries_gap_bytes(self) -> int:
        """Temporaries freed before TFLM prints its total, which the total misses."""
        return self.timeline_peak_bytes - self.tflm_reported_total_bytes

    @property
    def alignment_gap_bytes(self) -> int:
        """Bytes lost to 16-byte alignment where head (and planner scratch) meet the tail:
        the minimum arena over the largest total in use at one moment."""
        return self.min_arena_bytes - self.timeline_peak_bytes

    def terms(self) -> List[Tuple[str, int]]:
        """The minimum arena as a sum (see :func:`minimum_terms`)."""
        return minimum_terms(self.min_arena_bytes, self.head_bytes, self.tail_bytes,
                             self.timeline_peak_bytes)

    def as_dict(self) -> dict:
        return asdict(self)


def minimum_terms(min_arena_bytes: int, head_bytes: int, tail_bytes: int,
                  timeline_peak_bytes: int) -> List[Tuple[str, int]]:
    """The minimum arena as the sum every command prints (docs/arena_terms.md):
    head + tail + temporaries gap + alignment gap, the gaps only when not zero.
    ``temporaries gap``: how far temporaries reach beyond head + tail at the peak of the
    allocation timeline; ``alignment gap``: the bytes that 16-byte alignment adds where
    head and tail meet. The terms add up to ``min_arena_bytes`` by construction."""
    temporaries = timeline_peak_bytes - head_bytes - tail_bytes
    alignment = min_arena_bytes - timeline_peak_bytes
    terms = [("head", head_bytes), ("tail", tail_bytes)]
    terms += [(name, value) for name, value in (("temporaries gap", temporaries),
                                                ("alignment gap", alignment)) if value]
    return terms


def interpreter_terms(it) -> Tuple[int, List[Tuple[str, int]]]:
    """The minimum arena of an interpreter's model, target and planner, and its terms
    (:func:`minimum_terms`) as they are at that arena size."""
    minimum = it.min_arena_bytes()
    trace = it.arena.trace if it._allocated and it._invoked else it._arena_with_large_size().trace
    at = replay(trace, minimum)
    return minimum, minimum_terms(minimum, at.head_bytes, at.persistent_used_bytes, at.stats.total_peak)


def operator_allocations(it) -> Dict[Tuple[int, int], Dict[str, int]]:
    """Per operator of an allocated interpreter, keyed by (subgraph, operator index), the
    bytes it adds: ``options_bytes`` (its builtin options struct, in the tail),
    ``persistent_bytes`` (its kernel's persistent buffers, in the tail) and
    ``scratch_bytes`` (its kernel's scratch buffers, planned in the head)."""
    scratch: Dict[Tuple[int, int], int] = {}
    for req in it.allocator.scratch_requests:
        key = (req.subgraph_idx, req.node_idx)
        scratch[key] = scratch.get(key, 0) + req.bytes
    out = {}
    for sg in it.subgraphs:
        for node in sg.nodes:
            key = (node.subgraph_index, node.index)
            out[key] = {"options_bytes": node.tail_bytes["builtin_data"],
                        "persistent_bytes": node.tail_bytes["persistent"],
                        "scratch_bytes": scratch.get(key, 0)}
    return out


def format_sum(label: str, total: int, terms: Sequence[Tuple[str, int]], width: int = 0) -> str:
    """``label total bytes = name value + name value ...`` (checked: the terms add up);
    ``total`` right-aligned in ``width`` characters."""
    if sum(v for _, v in terms) != total:
        raise AssertionError(f"{label}: {total} != " + " + ".join(f"{n} {v}" for n, v in terms))
    return f"{label} {total:>{width}} bytes = " + " + ".join(f"{name} {value}" for name, value in terms)
def npu_scratch_bytes(model: Model) -> Optional[int]:
    """Bytes of the arena Vela planned for a model with ``ethos-u`` operators: the end of
    the offline-planned region (the model's ``OfflineMemoryAllocation``), which holds
    Vela's scratch and fast-scratch tensors and the NPU operators' inputs and outputs
    it placed inside them; TFLM places them at Vela's offsets from the head's start.
    None for a model without ethos-u operators or without an offline plan."""
    from arena.allocator import tensor_bytes
    if not any(op.custom_code == "ethos-u" for sg in model.subgraphs for op in sg.operators):
        return None
    offsets = model.offline_planned_offsets()
    if offsets is None:
        return None
    end, k = 0, 0
    for sg in model.subgraphs:
        for tensor in sg.tensors:
            if offsets[k] >= 0:
                end = max(end, int(offsets[k]) + tensor_bytes(tensor))
            k += 1
    return end


def _probe(model: Model, target: Target, resolver: Optional[OpResolver], recording: bool,
           planner: str, alt_decompression_memory_size: int = 0,
           max_loop_iterations: Optional[int] = SIZING_LOOP_ITERATIONS,
           invoke: bool = True) -> MicroInterpreter:
    """The model allocated (and invoked once, with ``invoke``) in a nominal arena of
    PROBE_ARENA_BYTES: the arena takes host memory only for the bytes the model uses,
    so the pass costs no more than the minimum it measures (see :mod:`arena.arena`). Its
    loops may run ``max_loop_iterations`` iterations in all (LimitError past that)."""
    from ..api import count_resource_variables
    from ..interpreter import SizingProbe
    it = SizingProbe(model, resolver, PROBE_ARENA_BYTES, target=target, recording=recording,
                     planner=planner, num_resource_variables=count_resource_variables(model),
                     error_reporter=lambda m: None,
                     alt_decompression_memory_size=alt_decompression_memory_size,
                     max_loop_iterations=max_loop_iterations, npu_stub=True)
    it.ctx.loop_budget_hint = (f"the sizing pass allows {max_loop_iterations} "
                               "(--max-loop-iterations N, or measure_arena(max_loop_iterations=N))")
    it.allocate_tensors()
    it.allocation_trace_length = len(it.arena.trace)
    if invoke:
        it.invoke()
    return it


def _invoke_part(it: MicroInterpreter) -> Optional[list]:
    """The calls the probe's invoke made (after allocation), when they are temporaries
    only: the same for the recording and the plain allocator (the temporaries sit above
    the same planned head), so the second probe need not invoke again; None otherwise."""
    from arena.arena import DEALLOC_TEMP, RESET_TEMP, TEMP
    part = it.arena.trace[it.allocation_trace_length:]
    return part if all(entry[0] in (TEMP, DEALLOC_TEMP, RESET_TEMP) for entry in part) else None


def measure_arena(model: Union[Model, str, os.PathLike, bytes], target: Union[str, Target] = DEFAULT_TARGET,
                  op_resolver: Optional[OpResolver] = None, recording: bool = True,
                  planner: str = "greedy", alt_decompression_memory_size: int = 0,
                  max_loop_iterations: int = SIZING_LOOP_ITERATIONS) -> ArenaSize:
    """Exact arena figures for ``model`` on ``target`` (allocation + one invoke on zeros):
    the breakdown for the RecordingMicroAllocator (``recording``) or the plain
    MicroAllocator, and both minimums. ``alt_decompression_memory_size``: bytes of memory
    outside the arena for decompressed tensors (TFLM's SetDecompressionMemory), 0 for none.
    ``max_loop_iterations``: WHILE iterations the invoke may run in all (default
    :data:`~micro_runtime.limits.SIZING_LOOP_ITERATIONS`); a model whose loops run longer
    on zeros gets a :class:`~micro_runtime.errors.LimitError` (TFLM would run on)."""
    model = model if isinstance(model, Model) else load_model(model)
    target = get_target(target)
    if max_loop_iterations is None:
        raise InputError("max_loop_iterations: a sizing pass needs a bound (a number of iterations)")
    max_loop_iterations = check_loop_iterations(max_loop_iterations)
    from .plan_view import head_peak, plan_entries
    minimums = {}
    chosen = peak = None
    invoke_part = None
    for with_recording in (recording, not recording):
        # the second probe reuses the first one's invoke when it made temporaries only
        # (a model with long loops is then run once, not twice)
        it = _probe(model, target, op_resolver, with_recording, planner,
                    alt_decompression_memory_size, max_loop_iterations, invoke=invoke_part is None)
        trace = it.arena.trace if invoke_part is None else it.arena.trace + invoke_part
        minimums[with_recording] = min_arena_bytes(trace, upper_bound=it.arena.stats.total_peak or 1024)
        if chosen is None:
            chosen = replay(trace, minimums[with_recording])
            peak = head_peak(plan_entries(it))
            invoke_part = _invoke_part(it)
    return ArenaSize(
        target=target.name, allocator="recording" if recording else "plain",
        min_arena_bytes=minimums[recording], head_bytes=chosen.head_bytes,
        tail_bytes=chosen.persistent_used_bytes, temp_peak_bytes=chosen.stats.temp_peak,
        timeline_peak_bytes=chosen.stats.total_peak,
        tflm_reported_total_bytes=chosen.head_bytes + chosen.persistent_used_bytes,
        plain_min_arena_bytes=minimums[False], recording_min_arena_bytes=minimums[True], peak=peak,
        npu_scratch_bytes=npu_scratch_bytes(model))


def size_record(model_name: str, result: ArenaSize) -> dict:
    """The ``size --json`` object: ``min_arena_bytes`` is always the RecordingMicroAllocator
    figure and ``plain_min_arena_bytes`` the MicroAllocator one; ``arena_bytes`` and the
    breakdown are for ``interpreter``."""
    return {
        "model": model_name, "target": result.target, "interpreter": result.interpreter,
        "allocator": result.allocator,
        "min_arena_bytes": result.recording_min_arena_bytes,
        "plain_min_arena_bytes": result.plain_min_arena_bytes,
        "arena_bytes": result.min_arena_bytes,
        "head_bytes": result.head_bytes, "tail_bytes": result.tail_bytes,
        "temp_peak_bytes": result.temp_peak_bytes, "timeline_peak_bytes": result.timeline_peak_bytes,
        "tflm_reported_total_bytes": result.tflm_reported_total_bytes,
        "temporaries_gap_bytes": result.temporaries_gap_bytes,
        "alignment_gap_bytes": result.alignment_gap_bytes,
        "head_peak": result.peak,
        "npu_scratch_bytes": result.npu_scratch_bytes,
    }


#: keys of one ``size`` record (``size --json`` of one model; each row of a sweep adds
#: ``path`` and ``error``)
SIZE_KEYS = ("model", "target", "interpreter", "allocator", "min_arena_bytes", "plain_min_arena_bytes",
             "arena_bytes", "head_bytes", "tail_bytes", "temp_peak_bytes", "timeline_peak_bytes",
             "tflm_reported_total_bytes", "temporaries_gap_bytes", "alignment_gap_bytes", "head_peak",
             "npu_scratch_bytes")


def size_model_file(path: str, target: str, interpreter: str = "recording",
                    custom_ops: Sequence[Tuple[str, int, int]] = (),
                    max_loop_iterations: int = SIZING_LOOP_ITERATIONS) -> dict:
    """The ``size`` record of the model file at ``path``, plus ``path`` and ``error``
    (None, or the one-line message of a MicroRuntimeError / OSError: one bad model
    does not stop a sweep). ``custom_ops``: (name, persistent bytes, scratch bytes) of
    stand-in kernels (:mod:`micro_runtime.stand_in`)."""
    from ..errors import MicroRuntimeError
    row = {"path": path, "model": os.path.basename(path)}
    resolver = None
    if custom_ops:
        from ..op_resolver import default_op_resolver
        from ..stand_in import StandInKernel
        resolver = default_op_resolver()
        for name, persistent, scratch in custom_ops:
            resolver.add(StandInKernel(name, persistent, scratch))
    try:
        result = measure_arena(path, target, op_resolver=resolver, recording=interpreter == "recording",
                               max_loop_iterations=max_loop_iterations)
    except (MicroRuntimeError, OSError) as e:
        return {**{k: None for k in SIZE_KEYS}, **row, "target": target, "interpreter": interpreter,
                "error": str(e)}
    return {**size_record(row["model"], result), "path": path, "error": None}


def model_files(paths: Iterable[str]) -> List[str]:
    """The .tflite files named by ``paths``: files as given, directories searched
    recursively for ``*.tflite`` (sorted), in the order given."""
    out: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = []
            for root, _, files in os.walk(path):
                found += [os.path.join(root, f) for f in files if f.endswith(".tflite")]
            out += sorted(found)
        else:
            out.append(path)
    return out


def size_many(paths: Sequence[str], target: str, interpreter: str = "recording", jobs: int = 1,
              on_done: Optional[Callable[[dict], None]] = None,
              custom_ops: Sequence[Tuple[str, int, int]] = (),
              max_loop_iterations: int = SIZING_LOOP_ITERATIONS) -> List[dict]:
    """One :func:`size_model_file` row per model, in the order of ``paths``. ``jobs``: worker
    processes (0: one per processor; never more than the processors or the models, see
    :mod:`micro_runtime.workers`; they die with this process). ``on_done(row)`` is called
    as each model finishes (for progress)."""
    from ..workers import die_with_parent, worker_count
    rows: Dict[int, dict] = {}
    jobs = worker_count(jobs, len(paths))
    if jobs <= 1:
        for k, path in enumerate(paths):
            rows[k] = size_model_file(path, target, interpreter, custom_ops, max_loop_iterations)
            if on_done:
                on_done(rows[k])
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from ..op_resolver import default_op_resolver
        default_op_resolver()   # load the kernels once, before the workers are forked
        # chunks of consecutive models: few round trips, yet work for every worker
        # until the end (about 4 chunks per worker)
        size = max(1, len(paths) // (4 * jobs))
        chunks = [range(k, min(k + size, len(paths))) for k in range(0, len(paths), size)]
        with ProcessPoolExecutor(max_workers=jobs, initializer=die_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            futures = {pool.submit(_size_chunk, [paths[k] for k in chunk], target, interpreter,
                                   tuple(custom_ops), max_loop_iterations): chunk
                       for chunk in chunks}
            for future in as_completed(futures):
                for k, row in zip(futures[future], future.result()):
                    rows[k] = row
                    if on_done:
                        on_done(row)
    return [rows[k] for k in range(len(paths))]


def _size_chunk(paths: Sequence[str], target: str, interpreter: str,
                custom_ops: Sequence[Tuple[str, int, int]] = (),
                max_loop_iterations: int = SIZING_LOOP_ITERATIONS) -> List[dict]:
    """:func:`size_model_file` for each path (one worker task)."""
    return [size_model_file(path, target, interpreter, custom_ops, max_loop_iterations)
            for path in paths]


def _snippet_comment(model_name: str, result: ArenaSize, alignment_word: str) -> List[str]:
    from .. import __version__
    target = get_target(result.target)
    other = "micro" if result.interpreter == "recording" else "recording"
    other_bytes = result.plain_min_arena_bytes if other == "micro" else result.recording_min_arena_bytes
    return [
        f"// Tensor arena for {model_name}, target profile {target.name}:",
        f"//   {target.description}.",
        f"// {result.min_arena_bytes} bytes: the smallest arena with which {INTERPRETER_CLASSES[result.interpreter]}",
        "// runs AllocateTensors() and Invoke() (exact, temporaries included),",
        f"// measured by micro-runtime {__version__}; {INTERPRETER_CLASSES[other]} needs "
        f"{other_bytes} bytes (--interpreter {other}).",
        f"// {alignment_word}: TFLM aligns the arena's start (and its head) up to 16 bytes, so an",
        "// unaligned array loses up to 15 bytes and this exact size would no longer fit.",
    ]


def cpp_snippet(model_name: str, result: ArenaSize) -> str:
    """What a firmware engineer pastes into C++ (``size --cpp``): the arena size as a
    ``constexpr`` and a 16-byte aligned arena, with a comment saying for which model,
    target and interpreter the figure holds."""
    return "\n".join(_snippet_comment(model_name, result, "alignas(16)") + [
        f"constexpr size_t kTensorArenaSize = {result.min_arena_bytes};",
        "alignas(16) static uint8_t tensor_arena[kTensorArenaSize];",
    ])


def c_snippet(model_name: str, result: ArenaSize) -> str:
    """The same for C (``size --c``; C11 or later: ``_Alignas``): a ``#define`` and a
    16-byte aligned arena, with the same comment."""
    return "\n".join(_snippet_comment(model_name, result, "_Alignas(16)") + [
        "#include <stdint.h>",
        f"#define TENSOR_ARENA_SIZE {result.min_arena_bytes}",
        "static _Alignas(16) uint8_t tensor_arena[TENSOR_ARENA_SIZE];",
    ])
