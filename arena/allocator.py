"""MicroAllocator: the sequence of arena allocations TFLM's MicroAllocator makes.

Every struct TFLM places in the arena is allocated here with the size and alignment the
target profile gives, in TFLM's order, so head, tail and temporaries match byte for
byte. The Python objects that stand for those structs (eval tensors, nodes, temporary
tensors) live outside the arena; tensor *data* lives inside it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from micro_runtime import schema
from micro_runtime.errors import InterpreterStateError, KernelError, ModelError
from micro_runtime.model import Model, Quantization, TensorSpec
from micro_runtime.targets import Target

from .allocation_info import AllocationInfo, ScratchBufferRequest, build_allocation_info
from .arena import BUFFER_ALIGNMENT, Arena, align_up
from .planners import GreedyMemoryPlanner, LinearMemoryPlanner, MemoryPlanner

#: Scratch-buffer requests one operator may make (TFLM's kMaxScratchBuffersPerOp).
MAX_SCRATCH_BUFFERS_PER_OP = 12
#: the largest C int: TFLM's planners add offsets and sizes as ints
INT32_MAX = (1 << 31) - 1
#: ops whose kernel copies input 0 to output 0 unless both are the same memory (an
#: offline plan may put them at one offset)
IN_PLACE_OPS = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "DYNAMIC_UPDATE_SLICE")


class _FromSpec:
    """Read-only tensor facts taken from the model's TensorSpec (``self.spec``)."""

    spec: TensorSpec

    @property
    def index(self) -> int:
        return self.spec.index

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def type(self) -> int:
        return self.spec.type

    @property
    def type_name(self) -> str:
        return self.spec.type_name

    @property
    def dtype(self) -> np.dtype:
        return self.spec.dtype

    @property
    def shape(self):
        return self.spec.shape

    @property
    def is_constant(self) -> bool:
        return self.spec.data is not None

    @property
    def is_variable(self) -> bool:
        return self.spec.is_variable


@dataclass
class EvalTensor(_FromSpec):
    """A tensor at run time (TFLM's TfLiteEvalTensor): its type, shape and data.

    ``data`` is the constant data (a view on the model) or, once the memory plan is
    committed, a numpy view of the arena at ``address``."""

    spec: TensorSpec
    nbytes: int
    address: Optional[int] = None
    data: Optional[np.ndarray] = None


@dataclass
class TempTensor(_FromSpec):
    """A TfLiteTensor handed to a kernel during prepare (or invoke): the tensor's type,
    shape, quantization and, for constants, data. It occupies temporary arena memory
    until released with ``ctx.release(tensor)``."""

    spec: TensorSpec
    data: Optional[np.ndarray]
    struct_address: int
    quant_addresses: Sequence[int] = ()

    @property
    def quantization(self) -> Optional[Quantization]:
        return self.spec.quantization

    @property
    def scale(self) -> float:
        """TfLiteTensor.params.scale (0.0 without quantization)."""
        q = self.spec.quantization
        return float(q.scales[0]) if q is not None else 0.0

    @property
    def zero_point(self) -> int:
        """TfLiteTensor.params.zero_point (0 without quantization)."""
        q = self.spec.quantization
        return int(np.int32(q.zero_points[0])) if q is not None else 0

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.spec.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return tensor_bytes(self.spec)


@dataclass
class NodeAllocation:
    """An operator at run time (TFLM's NodeAndRegistration)."""

    index: int
    subgraph_index: int
    spec: Any                      #: OperatorSpec
    registration: Any = None       #: the kernel
    user_data: Any = None          #: what the kernel's init returned (its OpData)
    input_arrays: List[Optional[np.ndarray]] = field(default_factory=list)
    output_arrays: List[Optional[np.ndarray]] = field(default_factory=list)
    #: tail bytes (alignment included) this node caused: its builtin options struct and
    #: the persistent buffers of its kernel's init and prepare
    tail_bytes: dict = field(default_factory=lambda: {"builtin_data": 0, "persistent": 0})

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def inputs(self):
        return self.spec.inputs

    @property
    def outputs(self):
        return self.spec.outputs

    @property
    def intermediates(self):
        return self.spec.intermediates

    @property
    def params(self):
        return self.spec.params

    @property
    def custom_options(self) -> Optional[bytes]:
        return self.spec.custom_options


@dataclass
class CompressionTensorData:
    """TFLM's CompressionTensorData + LookupTableData for a tensor of the model's
    COMPRESSION_METADATA: how its kernel decompresses it. ``stride`` is the value-table
    length per channel (a uint8 in TFLM, so taken modulo 256)."""

    lut: Any                        #: the model's LutTensor
    bit_width: int
    per_channel: bool
    channel_last: bool              #: TFLM's use_alternate_axis
    stride: int
    #: decompressed values (host cache, filled by the context on first use)
    decoded: Optional[np.ndarray] = None


@dataclass
class SubgraphAllocation:
    tensors: List[EvalTensor]
    nodes: List[NodeAllocation]
    #: tensor index -> compression data (TFLM's CompressedTensorList; empty without
    #: COMPRESSION_METADATA or on a build without USE_TFLM_COMPRESSION)
    compressed: Dict[int, CompressionTensorData] = field(default_factory=dict)


@dataclass
class PlannedBuffer:
    """A buffer of the committed memory plan: where it is and when it is alive."""

    kind: str              #: "tensor" or "scratch"
    subgraph: int
    index: int             #: tensor index, or scratch request index
    bytes: int             #: requested bytes
    size: int              #: bytes given to the planner (aligned to 16)
    first_used: int
    last_used: int
    offset: int            #: bytes from the start of the head
    offline: bool


def tensor_bytes(spec: TensorSpec) -> int:
    """Bytes TFLM reserves for a tensor: elements x TfLiteTypeSizeOf(type)."""
    size = schema.TYPE_SIZES.get(spec.type)
    if size is None:
        raise ModelError(f"{spec.describe()}: tensor type {spec.type_name} is not supported by "
                         "TFLM (TfLiteTypeSizeOf fails)")
    count = 1
    for d in spec.shape:
        if d < 0:
            raise ModelError(f"{spec.describe()}: shape {spec.shape} has a negative (dynamic) "
                             "dimension; TFLM supports static shapes only")
        count *= d
    return count * size


class MicroAllocator:
    """TFLM's MicroAllocator over an :class:`Arena`, with struct sizes from ``target``.

    ``planner`` is ``"greedy"`` (TFLM's default) or ``"linear"`` (TFLM's
    preserve-all-tensors mode). Construction makes TFLM's start-up allocations: the arena
    allocator object, the planner object and the allocator object, all in the tail.
    """

    arena_struct = "SingleArenaBufferAllocator"
    allocator_struct = "MicroAllocator"

    def __init__(self, arena: Arena, target: Target, planner: str = "greedy"):
        if planner not in ("greedy", "linear"):
            raise ValueError(f"unknown planner {planner!r}")
        self.arena = arena
        self.target = target
        self.planner_kind = planner
        self.model_is_allocating = False
        self.scratch_requests: List[ScratchBufferRequest] = []
        self.scratch_addresses: List[int] = []
        self.max_head_usage = 0
        #: why invoke is refused for this plan (see :meth:`_offline_overlap`), or None
        self.offline_overlap: Optional[str] = None
        self.plan: List[PlannedBuffer] = []
        self.planner: Optional[MemoryPlanner] = None
        self._scratch_head = 0
        self._allocate_struct(self.arena_struct)
        self._allocate_struct("GreedyMemoryPlanner" if planner == "greedy" else "LinearMemoryPlanner")
        self._allocate_struct(self.allocator_struct)

    # ----------------------------------------------------------------- helpers
    def _allocate_struct(self, name: str, count: int = 1) -> int:
        size, align = self.target.struct(name)
        return self.arena.allocate_persistent(size * count, align)

    @property
    def preserves_all_tensors(self) -> bool:
        return self.planner_kind == "linear"

    # ------------------------------------------------------- model allocation
    def start_model_allocation(self, model: Model) -> List[SubgraphAllocation]:
        """Allocate the per-model structs: builtin-data allocator, scratch-request
        buffer (head), subgraph table, eval tensors and node structs."""
        if self.model_is_allocating:
            raise InterpreterStateError("Model allocation started before finishing previously "
                                        "allocated model")
        self.model_is_allocating = True
        self._allocate_struct("MicroBuiltinDataAllocator")
        self.scratch_requests = []
        self._scratch_head = self.arena.resize_head(
            self.target.sizeof("ScratchBufferRequest") * MAX_SCRATCH_BUFFERS_PER_OP,
            self.target.alignof("ScratchBufferRequest"))
        self._allocate_struct("SubgraphAllocations", len(model.subgraphs))
        if self.target.compression:
            compressed = self.allocate_compressed_tensors_list(model)
        else:
            compressed = [{} for _ in model.subgraphs]
            if model.has_compression() and model.compression.lut_entries:
                raise ModelError(
                    f"the model has LUT-compressed tensors (COMPRESSION_METADATA) but TFLM for "
                    f"target '{self.target.name}' is built without USE_TFLM_COMPRESSION: its "
                    "allocator ignores the metadata and the kernels would read the packed "
                    "indices as tensor values (wrong results, reads past the buffers; the "
                    "tflite-micro package built that way refuses the model). Compress with "
                    "DECODE operators instead (TFLM's compression tool does), or build TFLM "
                    "with USE_TFLM_COMPRESSION=1")
        tensors = self.allocate_eval_tensors(model)
        nodes = self.allocate_node_and_registrations(model)
        return [SubgraphAllocation(t, n, c) for t, n, c in zip(tensors, nodes, compressed)]

    def allocate_compressed_tensors_list(self, model: Model) -> List[Dict[int, CompressionTensorData]]:
        """TFLM's AllocateCompressedTensorsList: for every LutTensor of the model's
        COMPRESSION_METADATA a CompressionTensorData and a LookupTableData, and per
        subgraph with compressed tensors an array of one pointer per tensor (tail)."""
        out: List[Dict[int, CompressionTensorData]] = [{} for _ in model.subgraphs]
        if not model.has_compression():
            return out
        metadata = model.compression.subgraphs
        if metadata is None:
            raise ModelError("Compression: invalid Subgraph vector")
        if not metadata:
            raise ModelError("Compression: zero length Subgraph vector")
        if len(metadata) > len(model.subgraphs):
            raise ModelError(f"Compression: metadata describes {len(metadata)} subgraphs but the "
                             f"model has {len(model.subgraphs)}")
        for s, luts in enumerate(metadata):
            if luts is None:
                raise ModelError("Compression: invalid LutTensor vector")
            if not luts:
                raise ModelError("Compression: zero length LutTensor vector")
            listed = False
            for k, (t, value_buffer, bit_width) in enumerate(luts):
                self._allocate_struct("CompressionTensorData")
                self._allocate_struct("LookupTableData")
                try:
                    ctd = self._compression_tensor_data(model, s, t, value_buffer, bit_width)
                except ModelError as e:
                    raise ModelError(f"{e}; Compression: failed to initialize data for "
                                     f"LutTensor {k}") from None
                if not listed:
                    self.arena.allocate_persistent(
                        self.target.sizeof("pointer") * len(model.subgraphs[s].tensors),
                        self.target.alignof("pointer"))
                    listed = True
                if t in out[s]:
                    raise ModelError(f"Compression: duplicate LutTensor subgraph {s} tensor {t}")
                out[s][t] = ctd
        return out

    @staticmethod
    def _compression_tensor_data(model: Model, s: int, t: int, value_buffer: int,
                                 bit_width: int) -> CompressionTensorData:
        """TFLM's InitializeCompressionTensorDataFromFlatbuffer, with its checks in order."""
        tensors = model.subgraphs[s].tensors
        if not 0 <= t < len(tensors):
            raise ModelError(f"Compression: invalid tensor index {t % (1 << 32)} in LutTensor")
        if bit_width > 7:
            raise ModelError(f"Compression: invalid bit width {bit_width} in LutTensor")
        if value_buffer >= len(model.buffers):
            raise ModelError(f"Compression: invalid value_buffer {value_buffer} in LutTensor")
        values = model.buffers[value_buffer].data
        if values is None:
            raise ModelError(f"Compression: invalid value table for value_buffer {value_buffer}")
        spec = tensors[t]
        if not spec.shape_present:
            raise ModelError("Compression: scalar tensors not supported")
        type_size = schema.TYPE_SIZES.get(spec.type)
        if type_size is None:
            raise ModelError("Compression: failed to get tensor type size")
        q = spec.quantization
        per_channel = q is not None and q.scales.size > 1
        channel_last = False
        channels = 1
        if per_channel:
            channels = int(q.scales.size)
            axis = q.quantized_dimension
            if axis == len(spec.shape) - 1 and axis != 0:
                channel_last = True
            elif axis != 0:
                raise ModelError(f"Compression: unsupported quantization axis {axis % (1 << 32)}")
        stride = (values.size // type_size // channels) & 0xFF
        return CompressionTensorData(spec.lut, bit_width, per_channel, channel_last, stride)

    def allocate_eval_tensors(self, model: Model) -> List[List[EvalTensor]]:
        out = []
        for sg in model.subgraphs:
            self._allocate_struct("TfLiteEvalTensor", len(sg.tensors))
            out.append([EvalTensor(spec, tensor_bytes(spec), data=spec.data) for spec in sg.tensors])
        return out

    def allocate_node_and_registrations(self, model: Model) -> List[List[NodeAllocation]]:
        out = []
        for s, sg in enumerate(model.subgraphs):
            self._allocate_struct("NodeAndRegistration", len(sg.operators))
            out.append([NodeAllocation(i, s, op) for i, op in enumerate(sg.operators)])
        return out

    def allocate_builtin_data(self, struct: str) -> int:
        """The options struct TFLM's flatbuffer parser allocates for an operator."""
        return self._allocate_struct(struct)

    def allocate_persistent_buffer(self, nbytes: int, written=()) -> int:
        """Persistent memory for a kernel (or the interpreter), 16-byte aligned.
        ``written``: (offset, length) ranges the kernel writes while its temporaries are
        live (see :mod:`arena.arena`)."""
        return self.arena.allocate_persistent(int(nbytes), BUFFER_ALIGNMENT, written)

    # ------------------------------------------------------------- scratch
    def request_scratch_buffer(self, nbytes: int, subgraph_index: int) -> int:
        pending = sum(1 for r in self.scratch_requests if r.node_idx == -1)
        if pending >= MAX_SCRATCH_BUFFERS_PER_OP:
            raise KernelError(f"Scratch buffer request exceeds limit per operator "
                              f"({MAX_SCRATCH_BUFFERS_PER_OP})")
        self.scratch_requests.append(ScratchBufferRequest(int(nbytes), -1, subgraph_index))
        return len(self.scratch_requests) - 1

    def finish_prepare_node(self, node_index: int) -> None:
        """After an operator's prepare: drop its temporaries, give its scratch requests
        their operator, and make room in the head for the next operator's requests."""
        self.arena.reset_temp()
        for r in self.scratch_requests:
            if r.node_idx == -1:
                r.node_idx = node_index
        self.arena.resize_head(
            self.target.sizeof("ScratchBufferRequest")
            * (len(self.scratch_requests) + MAX_SCRATCH_BUFFERS_PER_OP),
            self.target.alignof("ScratchBufferRequest"))

    # --------------------------------------------------------- temp tensors
    def allocate_temp_tensor(self, spec: TensorSpec, eval_tensor: EvalTensor) -> TempTensor:
        """A temporary TfLiteTensor; its ``data`` is set for constant tensors only (a
        tensor given memory during prepare, such as a DECODE output in the alternate
        decompression memory, holds no values yet)."""
        kind = "TfLiteTensor.quantized" if spec.quantization is not None else "TfLiteTensor"
        address = self._allocate_temp_struct("TfLiteTensor", critical=self.target.critical(kind))
        quant = self.populate_tensor_quantization(spec, temp=True)
        return TempTensor(spec, eval_tensor.data if eval_tensor.is_constant else None, address, quant)

    def deallocate_temp_tensor(self, tensor: TempTensor) -> None:
        for address in reversed(tensor.quant_addresses):
            self.arena.deallocate_temp(address)
        self.arena.deallocate_temp(tensor.struct_address)

    def _allocate_temp_struct(self, name: str, count: int = 1, critical=()) -> int:
        size, align = self.target.struct(name)
        return self.arena.allocate_temp(size * count, align, critical)

    def populate_tensor_quantization(self, spec: TensorSpec, temp: bool) -> List[int]:
        """TfLiteAffineQuantization and its zero-point array, when the tensor is
        quantized. Returns the addresses (zero point array last)."""
        q = spec.quantization
        if q is None:
            return []
        channels = int(q.scales.size)
        int_array = self.target.sizeof("TfLiteIntArray") + 4 * channels
        int_align = self.target.alignof("TfLiteIntArray")
        if temp:
            a = self._allocate_temp_struct("TfLiteAffineQuantization",
                                           critical=self.target.critical("TfLiteAffineQuantization"))
            b = self.arena.allocate_temp(int_array, int_align)
        else:
            a = self._allocate_struct("TfLiteAffineQuantization")
            b = self.arena.allocate_persistent(int_array, int_align)
        # TFLM deallocates the zero-point array first, then the struct.
        return [a, b]

    def allocate_persistent_tensor(self, spec: TensorSpec, eval_tensor: EvalTensor) -> TempTensor:
        """A TfLiteTensor kept for the life of the model (interpreter inputs/outputs)."""
        address = self.allocate_persistent_tensor_struct()
        self.populate_tensor_quantization(spec, temp=False)
        return TempTensor(spec, eval_tensor.data, address, ())

    def allocate_persistent_tensor_struct(self) -> int:
        return self._allocate_struct("TfLiteTensor")

    def reset_temp_allocations(self) -> None:
        self.arena.reset_temp()

    # ------------------------------------------------------------- planning
    def finish_model_allocation(self, model: Model, subgraphs: List[SubgraphAllocation]) -> None:
        """Scratch-buffer handles, variable tensors, then the static memory plan."""
        if not self.model_is_allocating:
            raise InterpreterStateError("Model allocation finished before starting allocating model")
        if self.scratch_requests:
            self._allocate_struct("ScratchBufferHandle", len(self.scratch_requests))
        self.commit_static_memory_plan(model, subgraphs)
        self.model_is_allocating = False

    def allocate_variables(self, subgraph: SubgraphAllocation, offline_offsets, base: int) -> None:
        for i, tensor in enumerate(subgraph.tensors):
            if tensor.is_variable and (offline_offsets is None or offline_offsets[base + i] == -1):
                tensor.address = self.arena.allocate_persistent(tensor.nbytes, BUFFER_ALIGNMENT)

    def commit_static_memory_plan(self, model: Model, subgraphs: List[SubgraphAllocation]) -> None:
        arena, target = self.arena, self.target
        n_tensors = sum(len(s.tensors) for s in subgraphs)
        offsets_address = arena.allocate_temp(target.sizeof("size_t") * len(subgraphs),
                                              target.alignof("size_t"))
        info_address = arena.allocate_temp(
            target.sizeof("AllocationInfo") * (n_tensors + len(self.scratch_requests)),
            target.alignof("AllocationInfo"))
        offline = model.offline_planned_offsets()
        base = 0
        for sg in subgraphs:
            self.allocate_variables(sg, offline, base)
            base += len(sg.tensors)
        infos = build_allocation_info(model, [s.tensors for s in subgraphs],
                                      self.scratch_requests, offline)
        planned = [info for info in infos if info.needs_allocating]
        self._check_offline_plan(model, planned)
        planner = self._make_planner(len(planned))
        for info in planned:
            planner.add_buffer(align_up(info.bytes, BUFFER_ALIGNMENT), info.first_created,
                               info.last_used, info.offline_offset)
        offsets = planner.offsets()
        self.offline_overlap = self._offline_overlap(model, planned, planner, offsets)
        head_start = arena.buffer_head
        self.plan = []
        for info, offset in zip(planned, offsets):
            address = head_start + offset
            if info.kind == "tensor":
                subgraphs[info.subgraph].tensors[info.index].address = address
            self.plan.append(PlannedBuffer(info.kind, info.subgraph, info.index, info.bytes,
                                           align_up(info.bytes, BUFFER_ALIGNMENT),
                                           info.first_created, info.last_used, offset,
                                           info.offline_offset != -1))
        self.scratch_addresses = [0] * len(self.scratch_requests)
        for pb in self.plan:
            if pb.kind == "scratch":
                self.scratch_addresses[pb.index] = head_start + pb.offset
        self.planner = planner
        arena.deallocate_temp(info_address)
        arena.deallocate_temp(offsets_address)
        arena.reset_temp()
        arena.resize_head(0, 1)
        head_usage = planner.maximum_size()
        self.max_head_usage = max(self.max_head_usage, head_usage)
        arena.resize_head(self.max_head_usage, BUFFER_ALIGNMENT)
        if arena.materialize:
            # host memory for the planned buffers only, once the plan fits the arena
            arena.back_head([(head_start + pb.offset, head_start + pb.offset + pb.size)
                             for pb in self.plan])

    @staticmethod
    def _offline_overlap(model: Model, planned, planner, offsets) -> Optional[str]:
        """Why an offline plan's outputs are not emulated, or None: two buffers alive at
        the same time on shared bytes. TFLM allocates and runs such a plan (Vela's plans
        do it on purpose, for its NPU operator), but a CPU kernel's outputs then depend on
        the order in which it reads and writes memory (an element written before another
        is read), which the numpy kernels here do not reproduce. Allocation and sizing
        are unaffected; the interpreter refuses to invoke (see ``offline_overlap``)."""
        buffers = planner.buffers
        offline = [k for k, b in enumerate(buffers) if b.offline_offset != -1]
        if not offline:
            return None
        start = np.array(offsets, dtype=np.int64)
        size = np.array([b.size for b in buffers], dtype=np.int64)
        first = np.array([b.first_used for b in buffers], dtype=np.int64)
        last = np.array([b.last_used for b in buffers], dtype=np.int64)
        # the one sharing TFLM's kernels handle in place: the data input and the output
        # of a copy op at the same offset (the kernel sees one pointer and skips the copy)
        in_place = set()
        for s, sg in enumerate(model.subgraphs):
            for op in sg.operators:
                if op.name in IN_PLACE_OPS and op.inputs and op.outputs:
                    in_place.add((s, op.inputs[0], op.outputs[0]))
                    in_place.add((s, op.outputs[0], op.inputs[0]))
        for k in offline:
            clash = ((first <= last[k]) & (first[k] <= last) & (start < start[k] + size[k])
                     & (start[k] < start + size) & (size > 0) & (size[k] > 0))
            clash[k] = False
            for j in np.nonzero(clash)[0]:
                a, b = planned[k], planned[int(j)]
                if (start[j] == start[k] and size[j] == size[k] and a.kind == b.kind == "tensor"
                        and a.subgraph == b.subgraph and (a.subgraph, a.index, b.index) in in_place):
                    clash[j] = False
            if clash.any():
                j = int(np.nonzero(clash)[0][0])

                def name(i):
                    info = planned[i]
                    if info.kind == "tensor":
                        return model.subgraphs[info.subgraph].tensors[info.index].describe()
                    return f"scratch buffer {info.index}"
                return (f"OfflineMemoryAllocation metadata: {name(k)} at offset {int(start[k])} "
                        f"({int(size[k])} bytes) shares bytes with {name(j)} at offset "
                        f"{int(start[j])} ({int(size[j])} bytes) while both are alive; TFLM runs "
                        "such a plan, but its outputs then depend on the order in which its "
                        "kernels read and write memory, which is not emulated (allocation and "
                        "sizing are exact)")
        return None

    def _check_offline_plan(self, model: Model, planned) -> None:
        """Refuse an OfflineMemoryAllocation offset TFLM cannot honour, before planning.

        TFLM takes the offsets as they are (the greedy planner places the buffer there;
        the head it then reserves is the largest ``offset + size``, added as C ints):
        a negative offset other than -1 puts the buffer before the arena's start
        (memory that is not the arena's; when ``offset + size`` is negative too, the
        head TFLM asks for wraps to a huge size_t and allocation fails with "Failed to
        resize buffer"); an ``offset + size`` beyond 2^31 - 1 overflows the int sum and
        fails the same way in every arena. TFLM's linear planner (preserve-all-tensors)
        takes no offline offsets at all (its AddBuffer with an offset fails)."""
        for info in planned:
            offset = info.offline_offset
            if offset == -1:
                continue
            spec = model.subgraphs[info.subgraph].tensors[info.index] if info.kind == "tensor" else None
            where = (f"{spec.describe()}" + (f" of subgraph {info.subgraph}" if info.subgraph else "")
                     if spec is not None else f"scratch buffer {info.index}")
            if self.planner_kind != "greedy":
                raise ModelError(
                    f"OfflineMemoryAllocation metadata: {where} has offline offset {offset}, but "
                    "TFLM's LinearMemoryPlanner (preserve all tensors) takes no offline offsets "
                    "(its AddBuffer with an offset fails); use the greedy planner")
            size = align_up(info.bytes, BUFFER_ALIGNMENT)
            if offset < 0:
                raise ModelError(
                    f"OfflineMemoryAllocation metadata: {where} has offline offset {offset}: "
                    "offsets are bytes from the arena's head and -1 means 'planned online'; "
                    f"TFLM would place this {size}-byte buffer {-offset} bytes before the arena "
                    + ("(memory outside the arena)" if offset + size >= 0 else
                       f"and fail with 'Failed to resize buffer' (the head it computes, "
                       f"{offset} + {size}, is negative)"))
            if offset + size > INT32_MAX:
                raise ModelError(
                    f"OfflineMemoryAllocation metadata: {where} has offline offset {offset}: "
                    f"with its {size} bytes it ends at {offset + size}, beyond 2^31 - 1; TFLM's "
                    "planner adds offset and size as C ints, the sum overflows and allocation "
                    "fails with 'Failed to resize buffer' in every arena")

    def _make_planner(self, buffer_count: int) -> MemoryPlanner:
        if self.planner_kind == "greedy":
            planner = GreedyMemoryPlanner()
            capacity = self.arena.reserve_planner_scratch(planner.per_buffer_scratch_bytes,
                                                          buffer_count)
            planner.max_buffer_count = capacity // planner.per_buffer_scratch_bytes
            return planner
        self.arena.reserve_planner_scratch(0, 0)
        planner = LinearMemoryPlanner()
        if buffer_count > planner.max_buffer_count:
            raise ModelError(f"Too many buffers (max is {planner.max_buffer_count}): the linear "
                             f"planner of TFLM holds at most {planner.max_buffer_count} buffers, "
                             f"this model needs {buffer_count}")
        return planner

    # ---------------------------------------------------------------- figures
    @property
    def used_bytes(self) -> int:
        return self.arena.used_bytes
