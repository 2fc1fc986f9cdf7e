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

from typing import Optional

import numpy as np

from .errors import InterpreterStateError, KernelError

INIT, PREPARE, PLANNING, INVOKE = "init", "prepare", "memory planning", "invoke"

#: WHILE loops longer than this fail (TFLM would run them forever if they never end).
DEFAULT_MAX_WHILE_ITERATIONS = 1 << 20


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

    # ------------------------------------------------------------- errors
    def error(self, message: str) -> KernelError:
        """An exception naming the current operator; kernels ``raise ctx.error(...)``."""
        node = self.node
        if node is None:
            return KernelError(message)
        return KernelError(message, node.name, node.index, node.subgraph_index)

    def sizeof(self, struct: str) -> int:
        """Bytes of a TFLM struct on the interpreter's target."""
        return self.target.sizeof(struct)

    # ------------------------------------------------------ persistent memory
    def allocate_persistent(self, nbytes: int) -> int:
        """Reserve ``nbytes`` of persistent arena memory (16-byte aligned); returns
        the address. Only during init and prepare, as in TFLM."""
        if self.state not in (INIT, PREPARE):
            raise InterpreterStateError("persistent buffers can only be allocated in init or prepare")
        return self.allocator.allocate_persistent_buffer(int(nbytes))

    def persistent_array(self, dtype, count: int, nbytes: Optional[int] = None) -> np.ndarray:
        """A persistent arena buffer of ``count`` elements of ``dtype`` as a numpy view.
        ``nbytes`` overrides the size reserved (when TFLM reserves a different size)."""
        dtype = np.dtype(dtype)
        size = count * dtype.itemsize if nbytes is None else int(nbytes)
        address = self.allocate_persistent(size)
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

    def allocate_temp_buffer(self, nbytes: int, alignment: int) -> int:
        if self.state != PREPARE:
            raise InterpreterStateError("temporary buffers can only be allocated in prepare")
        return self.allocator.arena.allocate_temp(int(nbytes), int(alignment))

    def deallocate_temp_buffer(self, address: int) -> None:
        self.allocator.arena.deallocate_temp(address)

    # ------------------------------------------------------- temp tensors
    def _temp(self, index: int):
        sg = self._interpreter.subgraphs[self.subgraph_index]
        eval_tensor = sg.tensors[index]
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

    @property
    def max_while_iterations(self):
        """Iterations after which WHILE gives up: the interpreter's
        ``max_while_iterations`` attribute when set (None = no limit, as TFLM), else
        :data:`DEFAULT_MAX_WHILE_ITERATIONS`."""
        return getattr(self._interpreter, "max_while_iterations", DEFAULT_MAX_WHILE_ITERATIONS)
