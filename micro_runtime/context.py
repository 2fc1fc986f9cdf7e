"""KernelContext: what a kernel may ask of the interpreter (TFLM's MicroContext).

Every arena allocation a kernel makes goes through here, so it lands in the arena
exactly where TFLM would put it:

* ``persistent_array`` / ``allocate_persistent`` — tail memory for the model's life;
* ``request_scratch`` (prepare) and ``scratch`` (invoke) — planned head memory;
* ``input`` / ``output`` / ``intermediate`` — temporary TfLiteTensors, released with
  ``release`` (prepare and invoke);
* ``error`` — the exception to raise, naming the op and its index.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

from arena.arena import BUFFER_ALIGNMENT
from kernels.internal import decompress

from . import schema
from .errors import InterpreterStateError, KernelError, LimitError

INIT, PREPARE, PLANNING, INVOKE = "init", "prepare", "memory planning", "invoke"

#: tensor types TFLM's DecompressTensorToBuffer handles
_DECOMPRESSIBLE_TYPES = frozenset(getattr(schema.TensorType, n) for n in
                                  ("BOOL", "INT8", "INT16", "INT32", "INT64", "FLOAT32"))


class KernelContext:
    def __init__(self, interpreter):
        self._interpreter = interpreter
        self.allocator = interpreter.allocator
        self.target = interpreter.target
        self.model = interpreter.model
        self.state = INIT
        self.subgraph_index = 0
        self.node = None
        self.scratch_views = []
        #: samples per block in batched evaluation (0 in a normal interpreter); see
        #: :mod:`kernels.internal.sample_rows`
        self.block_samples = 0
        #: how many times reset() has run: a kernel whose state tensor no other node
        #: touches knows it still holds the reset value at its first invoke after one
        self.reset_epoch = 0
        #: alternate decompression memory (TFLM's SetDecompressionMemory): a bytearray
        #: outside the arena, and the bytes handed out since the last reset
        self.decompression_memory: Optional[bytearray] = None
        self.decompression_used = 0
        #: (subgraph, node, input) triples whose compressed tensor a kernel decompresses
        self.claimed_compressed_inputs = set()
        #: loop iterations of the current invoke, and the bound (None: none)
        self.loop_iterations = 0
        self.loop_budget: Optional[int] = None
        #: how to raise the bound, said in the LimitError
        self.loop_budget_hint = "set max_loop_iterations to allow more"

    # ------------------------------------------------------------- errors
    def error(self, message: str) -> KernelError:
        """An exception naming the current operator; kernels ``raise ctx.error(...)``."""
        node = self.node
        if node is None:
            return KernelError(message)
        return KernelError(message, node.name, node.index, node.subgraph_index)

    @property
    def npu_stub(self) -> bool:
        """Whether co-processor operators invoke as a stub (see MicroInterpreter)."""
        return self._interpreter.npu_stub

    def sizeof(self, struct: str) -> int:
        """Bytes of a TFLM struct on the interpreter's target."""
        return self.target.sizeof(struct)

    # ------------------------------------------------------ persistent memory
    def allocate_persistent(self, nbytes: int, written=()) -> int:
        """Reserve ``nbytes`` of persistent arena memory (16-byte aligned); returns
        the address. Only during init and prepare, as in TFLM.

        ``written`` says which bytes the kernel writes in prepare while it still holds
        temporary tensors: ``True`` for the whole buffer, or (offset, length) ranges. TFLM
        lets a persistent buffer land on live temporaries in a tight arena; a write
        there corrupts them (see :mod:`arena.arena`), so these arenas are refused."""
        if self.state not in (INIT, PREPARE):
            raise InterpreterStateError("persistent buffers can only be allocated in init or prepare")
        nbytes = int(nbytes)
        if written is True:
            written = ((0, nbytes),) if nbytes else ()
        return self.allocator.allocate_persistent_buffer(nbytes, written or ())

    def persistent_array(self, dtype, count: int, nbytes: Optional[int] = None,
                         written=()) -> np.ndarray:
        """A persistent arena buffer of ``count`` elements of ``dtype`` as a numpy view.
        ``nbytes`` overrides the size reserved (when TFLM reserves a different size);
        ``written`` as in :meth:`allocate_persistent`."""
        dtype = np.dtype(dtype)
        size = count * dtype.itemsize if nbytes is None else int(nbytes)
        address = self.allocate_persistent(size, written)
        return self._interpreter.arena.view(address, dtype, count)

    # ------------------------------------------------------------ scratch
    def request_scratch(self, nbytes: int) -> int:
        """Ask for ``nbytes`` of scratch memory during invoke; returns its index."""
        if self.state != PREPARE:
            raise InterpreterStateError("scratch buffers can only be requested in prepare")
        try:
            return self.allocator.request_scratch_buffer(int(nbytes), self.subgraph_index)
        except KernelError as e:
            raise self.error(e.detail) from None

    def scratch(self, index: int) -> np.ndarray:
        """The scratch buffer ``index`` as a uint8 view of the arena (invoke only)."""
        return self.scratch_views[index]

    def arena_window(self, start: int, end: int) -> Optional[Tuple[np.ndarray, bool]]:
        """Arena bytes [start, end) as one uint8 array and whether it is a copy (then
        hand it back with :meth:`arena_write_back`), for a kernel that emulates a C
        routine writing past its buffers; None for an arena that holds no bytes."""
        arena = self._interpreter.arena
        return arena.window(start, end) if arena.materialize else None

    def arena_write_back(self, start: int, data: np.ndarray) -> None:
        self._interpreter.arena.write_back(start, data)

    def arena_offset(self, array: np.ndarray) -> Optional[int]:
        """Byte offset of ``array``'s first element in the arena, None when it is not a
        view of the arena (a host buffer, e.g. in batched evaluation)."""
        return self._interpreter.arena.offset_of(array)

    @property
    def persistent_start(self) -> int:
        """Where the arena's persistent section (the tail) starts (bytes)."""
        return self._interpreter.arena.tail

    def allocate_temp_buffer(self, nbytes: int, alignment: int) -> int:
        if self.state != PREPARE:
            raise InterpreterStateError("temporary buffers can only be allocated in prepare")
        return self.allocator.arena.allocate_temp(int(nbytes), int(alignment))

    def deallocate_temp_buffer(self, address: int) -> None:
        self.allocator.arena.deallocate_temp(address)

    # --------------------------------------------------- compression (TFLM)
    def allocate_decompression_memory(self, nbytes: int, alignment: int) -> Optional[np.ndarray]:
        """``nbytes`` of the alternate decompression memory as a uint8 view (TFLM's
        AllocateDecompressionMemory), or None when there is none or it is full."""
        memory = self.decompression_memory
        if memory is None:
            return None
        start = -(-self.decompression_used // alignment) * alignment
        if start + nbytes > len(memory):
            return None
        self.decompression_used = start + nbytes
        return np.frombuffer(memory, dtype=np.uint8, count=nbytes, offset=start)

    def reset_decompression_memory(self) -> None:
        """TFLM's ResetDecompressionMemoryAllocations."""
        self.decompression_used = 0

    def _compression_data(self, node, i: int):
        if not 0 <= i < len(node.inputs) or node.inputs[i] < 0:
            return None
        return self._interpreter.subgraphs[self.subgraph_index].compressed.get(node.inputs[i])

    def is_tensor_compressed(self, node, i: int) -> bool:
        """True when input ``i`` is LUT-compressed by the model's COMPRESSION_METADATA
        (TFLM's MicroContext::IsTensorCompressed)."""
        return self._compression_data(node, i) is not None

    def allocate_decompression_scratch(self, node, i: int) -> int:
        """TFLM's AllocateDecompressionScratchBuffer, called by a kernel that
        decompresses its input ``i``: for a compressed input, a scratch buffer of the
        tensor's full size (unless the alternate decompression memory holds it);
        -1 otherwise."""
        ctd = self._compression_data(node, i)
        if ctd is None:
            return -1
        self.claimed_compressed_inputs.add((self.subgraph_index, node.index, i))
        tensor = self.eval_tensor(node.inputs[i])
        self._decompressed(tensor, ctd)
        if self.allocate_decompression_memory(tensor.nbytes, BUFFER_ALIGNMENT) is not None:
            return -1
        return self.request_scratch(tensor.nbytes)

    def decompression_scratch(self, node, *inputs: int) -> Dict[int, int]:
        """:meth:`allocate_decompression_scratch` for each of ``inputs`` in order;
        returns {input: scratch index (-1 = alternate memory)} for the compressed ones
        (empty for a model without COMPRESSION_METADATA)."""
        out = {}
        for i in inputs:
            if self._compression_data(node, i) is not None:
                out[i] = self.allocate_decompression_scratch(node, i)
        return out

    def decompress_inputs(self, node, scratch: Dict[int, int]) -> None:
        """At invoke: decompress each compressed input into its buffer (what TFLM's
        GetTensorData does for the kernel; the kernel then reads those values)."""
        for i, index in scratch.items():
            self.input_data(node, i, index)

    def input_data(self, node, i: int, scratch_index: int = -1) -> Optional[np.ndarray]:
        """Input ``i``'s data at invoke (TFLM's GetTensorData with compression): a
        compressed input is decompressed into its scratch buffer (or the alternate
        decompression memory) and that view is returned."""
        array = node.input_arrays[i] if i < len(node.input_arrays) else None
        ctd = self._compression_data(node, i)
        if ctd is None:
            return array
        tensor = self.eval_tensor(node.inputs[i])
        if scratch_index >= 0:
            raw = self.scratch(scratch_index)[:tensor.nbytes]
        else:
            raw = self.allocate_decompression_memory(tensor.nbytes, BUFFER_ALIGNMENT)
            if raw is None:
                raise self.error("no decompression buffer for a compressed input")
        view = raw.view(tensor.dtype).reshape(tensor.shape)
        np.copyto(view.reshape(-1).view(np.uint8), self._decompressed(tensor, ctd).reshape(-1).view(np.uint8))
        return view

    def _decompressed(self, tensor, ctd) -> np.ndarray:
        """The tensor's values as TFLM's DecompressionState produces them (computed once)."""
        if ctd.decoded is None:
            spec = tensor.spec
            if spec.type not in _DECOMPRESSIBLE_TYPES:
                raise self.error(f"Unsupported decompression tensor type {spec.type_name} "
                                 f"({spec.describe()})")
            if spec.data is None:
                raise self.error(f"{spec.describe()} is LUT-compressed but has no data")
            if ctd.bit_width < 1:
                raise self.error(f"{spec.describe()}: LUT index bit width 0 (TFLM's decompression "
                                 "reads undefined indices)")
            count = 1
            for d in spec.shape:
                count *= d
            channels = 1
            if ctd.per_channel and spec.shape:
                channels = spec.shape[-1 if ctd.channel_last else 0]
            try:
                values = decompress.typed_values(ctd.lut.values, spec.dtype)
                decoded = decompress.lut_decode(spec.data, ctd.bit_width, values, count, channels,
                                                ctd.channel_last, ctd.stride)
            except decompress.DecompressionError as e:
                raise self.error(f"{spec.describe()}: {e}") from None
            ctd.decoded = decoded.reshape(spec.shape)
            ctd.decoded.flags.writeable = False
            tensor.data = ctd.decoded
        return ctd.decoded

    # ------------------------------------------------------- temp tensors
    def _temp(self, index: int):
        sg = self._interpreter.subgraphs[self.subgraph_index]
        eval_tensor = sg.tensors[index]
        ctd = sg.compressed.get(index)
        if ctd is not None and ctd.decoded is None:
            # a kernel sees the values; it must also claim the tensor (see
            # allocate_decompression_scratch) or the interpreter refuses the node. A
            # tensor TFLM cannot decompress is refused when the kernel claims it.
            try:
                self._decompressed(eval_tensor, ctd)
            except KernelError:
                pass
        return self.allocator.allocate_temp_tensor(eval_tensor.spec, eval_tensor)

    def input(self, node, i: int):
        """TfLiteTensor of the node's input ``i`` (None when absent or optional -1)."""
        if 0 <= i < len(node.inputs) and node.inputs[i] >= 0:
            return self._temp(node.inputs[i])
        return None

    def output(self, node, i: int):
        if 0 <= i < len(node.outputs) and node.outputs[i] >= 0:
            return self._temp(node.outputs[i])
        return None

    def check_counts(self, node, inputs: int, outputs: int, exact_inputs: bool = False,
                     exact_outputs: bool = False) -> None:
        """The node's input and output counts as TFLM's kernel checks them, in prepare:
        the first ``inputs`` inputs and ``outputs`` outputs must be present (TFLM reads
        them; fewer, or an omitted one (-1), would make it read past the node's tensors);
        more are ignored as TFLM ignores them, unless ``exact_inputs`` /
        ``exact_outputs`` (the kernel's TF_LITE_ENSURE_EQ(NumInputs(node), n))."""
        for kind, have, need, exact in (("input", node.inputs, inputs, exact_inputs),
                                        ("output", node.outputs, outputs, exact_outputs)):
            count = len(have)
            if count < need or (exact and count != need):
                raise self.error(f"needs {'exactly ' if exact else ''}{need} {kind}"
                                 f"{'s' if need != 1 else ''}, got {count}"
                                 + ("" if exact or count > need else
                                    f" (TFLM would read {kind} {count} past the node's {kind}s)"))
            missing = [k for k in range(need) if have[k] < 0]
            if missing:
                raise self.error(f"{kind} {missing[0]} is omitted (-1); TFLM's kernel reads it")

    def required_input(self, node, i: int, what: str = ""):
        """:meth:`input`, raising the op's error when the tensor is absent."""
        tensor = self.input(node, i)
        if tensor is None:
            raise self.error(f"{what or f'input {i}'} is missing")
        return tensor

    def required_output(self, node, i: int, what: str = ""):
        """:meth:`output`, raising the op's error when the tensor is absent."""
        tensor = self.output(node, i)
        if tensor is None:
            raise self.error(f"{what or f'output {i}'} is missing")
        return tensor

    def intermediate(self, node, i: int):
        if 0 <= i < len(node.intermediates) and node.intermediates[i] >= 0:
            return self._temp(node.intermediates[i])
        return None

    def release(self, *tensors) -> None:
        """Give back temporary tensors (None entries are ignored)."""
        for t in tensors:
            if t is not None:
                self.allocator.deallocate_temp_tensor(t)

    # ----------------------------------------------------------- eval data
    def eval_tensor(self, index: int):
        """The run-time tensor ``index`` of the current subgraph."""
        return self._interpreter.subgraphs[self.subgraph_index].tensors[index]

    def invoke_subgraph(self, index: int) -> None:
        """Run subgraph ``index`` (control-flow kernels)."""
        self._interpreter.invoke_subgraph(index)

    @property
    def resource_variables(self):
        return self._interpreter.resource_variables

    # ------------------------------------------------- other subgraphs (control flow)
    @property
    def num_subgraphs(self) -> int:
        return len(self.model.subgraphs)

    def subgraph_inputs(self, index: int) -> list:
        """The run-time tensors of subgraph ``index``'s inputs, in order."""
        tensors = self._interpreter.subgraphs[index].tensors
        return [tensors[t] for t in self.model.subgraphs[index].inputs]

    def subgraph_outputs(self, index: int) -> list:
        """The run-time tensors of subgraph ``index``'s outputs, in order."""
        tensors = self._interpreter.subgraphs[index].tensors
        return [tensors[t] for t in self.model.subgraphs[index].outputs]

    def count_loop_iteration(self) -> None:
        """One more iteration of a loop (WHILE): raises :class:`LimitError` naming the
        current operator once the iterations of this invoke (every loop of the model,
        nested ones included) pass the interpreter's ``max_loop_iterations``."""
        self.loop_iterations += 1
        budget = self.loop_budget
        if budget is not None and self.loop_iterations > budget:
            node = self.node
            where = "" if node is None else (
                f"{node.name} (operator #{node.index}"
                + (f" of subgraph {node.subgraph_index}" if node.subgraph_index else "") + "): ")
            raise LimitError(
                f"{where}the model's loops ran {budget} iterations in this invoke and the "
                f"condition is still true (TFLM has no bound and would go on); "
                f"{self.loop_budget_hint}", limit="loop iterations")
