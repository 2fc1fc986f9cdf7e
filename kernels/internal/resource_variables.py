"""Resource variables (TFLM's MicroResourceVariables), shared by VAR_HANDLE,
READ_VARIABLE and ASSIGN_VARIABLE.

The interpreter creates the table when it is given ``num_resource_variables > 0`` (the
tflite_micro package passes the number of distinct VAR_HANDLE shared names): two tail
buffers, the table object and one record per variable, both 16-byte aligned as any
``AllocatePersistentBuffer``. A variable gets its id from the first VAR_HANDLE that names
it (container + shared name); its value buffer is allocated from the tail by the first
ASSIGN_VARIABLE prepare that can see the id, sized as that assignment's value tensor, and
filled with the value tensor's int8 zero point (0 without quantization). ``reset_all``
(interpreter reset, and the end of allocate_tensors) fills every allocated buffer with
that default again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from micro_runtime.errors import KernelError


@dataclass
class ResourceVariable:
    container: Optional[str]
    shared_name: Optional[str]
    address: Optional[int] = None       #: the value buffer in the arena tail (None = not yet)
    nbytes: int = 0
    default_value: int = 0              #: byte written by reset (int8 zero point)
    buffer: Optional[np.ndarray] = None  #: uint8 view of the value buffer


class MicroResourceVariables:
    """The resource-variable table of one interpreter."""

    def __init__(self, arena, max_variable_count: int):
        self.arena = arena
        self.max_variable_count = int(max_variable_count)
        self.variables: List[ResourceVariable] = []

    @classmethod
    def create(cls, allocator, max_num_variables: int) -> "MicroResourceVariables":
        """Allocate the table object, then the array of variable records (tail)."""
        target = allocator.target
        allocator.allocate_persistent_buffer(target.sizeof("MicroResourceVariables"))
        allocator.allocate_persistent_buffer(target.sizeof("MicroResourceVariable") * int(max_num_variables))
        return cls(allocator.arena, max_num_variables)

    # ----------------------------------------------------------------- ids
    def find_id(self, container: Optional[str], shared_name: Optional[str]) -> int:
        for i, var in enumerate(self.variables):
            # TFLM compares with strcmp: a missing (null) name on either side crashes it
            if container is not None and var.container is None:
                raise KernelError(f"resource variable {i} has no container name and a later "
                                  f"VAR_HANDLE names container {container!r} (TFLM would crash "
                                  "comparing them)")
            if shared_name is None or var.shared_name is None:
                raise KernelError("a VAR_HANDLE without shared_name among several resource "
                                  "variables (TFLM would crash comparing names)")
            if (container is None or container == var.container) and shared_name == var.shared_name:
                return i
        return -1

    def create_id_if_none_found(self, container: Optional[str], shared_name: Optional[str]) -> int:
        """The id of (container, shared_name), creating the variable if it is new;
        raises KernelError when the table is full."""
        found = self.find_id(container, shared_name)
        if found >= 0:
            return found
        if len(self.variables) >= self.max_variable_count:
            raise KernelError("Failed to allocate resource variable. Maximum resource variable "
                              f"count ({self.max_variable_count}) reached.")
        self.variables.append(ResourceVariable(container, shared_name))
        return len(self.variables) - 1

    def _get(self, resource_id: int) -> ResourceVariable:
        if not 0 <= resource_id < len(self.variables):
            raise KernelError(f"Attempting to read non-existent resource variable {resource_id}")
        return self.variables[resource_id]

    # -------------------------------------------------------------- buffers
    def allocate(self, resource_id: int, ctx, tensor) -> None:
        """Give variable ``resource_id`` its value buffer, sized as ``tensor`` (a temp
        TfLiteTensor), unless it already has one."""
        var = self._get(resource_id)
        if var.address is not None:
            return
        nbytes = tensor.nbytes
        address = ctx.allocate_persistent(nbytes)
        var.address, var.nbytes = address, nbytes
        q = tensor.quantization
        if q is not None and len(q.zero_points):
            var.default_value = int(np.int64(q.zero_points[0])) & 0xFF
        var.buffer = self.arena.view(address, np.uint8, nbytes)
        var.buffer[:] = var.default_value

    def read(self, resource_id: int, out: np.ndarray) -> None:
        """Copy the variable's bytes into ``out``."""
        var = self._get(resource_id)
        if var.address is None:
            raise KernelError(f"resource variable {resource_id} is read before any ASSIGN_VARIABLE "
                              "gave it a buffer (TFLM reads through a null pointer)")
        if out.nbytes != var.nbytes:
            raise KernelError(f"resource variable {resource_id} holds {var.nbytes} bytes but the "
                              f"output tensor has {out.nbytes} (TFLM would copy past the tensor)")
        out.reshape(-1).view(np.uint8)[:] = var.buffer

    def assign(self, resource_id: int, value: np.ndarray) -> None:
        """Copy ``value``'s bytes into the variable."""
        var = self._get(resource_id)
        if var.address is None:
            raise KernelError("Attempting to assign from a TfLiteEvalTensor before the resource "
                              "buffer has been allocated. Make sure to call AssignResourceVariable "
                              "with a TfLiteTensor first.")
        if value.nbytes != var.nbytes:
            raise KernelError(f"resource variable {resource_id} holds {var.nbytes} bytes but the "
                              f"assigned value has {value.nbytes} (TFLM would copy the wrong size)")
        var.buffer[:] = np.ascontiguousarray(value).reshape(-1).view(np.uint8)

    def reset_all(self) -> None:
        for var in self.variables:
            if var.buffer is not None:
                var.buffer[:] = var.default_value
