"""READ_VARIABLE: copies a resource variable's value into the output, as TFLM.

No init and no OpData. Prepare takes the resource-id input as a temporary tensor (it
must be one RESOURCE element) and gives it back. Eval reads the id from the input's
data and copies the variable's bytes into the output.

Refused where TFLM has only debug checks: a variable that never got a buffer (no
ASSIGN_VARIABLE prepare saw its id) or one whose size differs from the output's.
"""
from __future__ import annotations

from micro_runtime import schema
from micro_runtime.errors import KernelError

from .base import Kernel, register
from .internal.tensor_utils import type_name


@register
class ReadVariable(Kernel):
    op = "READ_VARIABLE"
    invoke_allocates = True     # reads a resource variable an assignment created
    supported_types = ("*",)
    type_input = None

    def prepare(self, ctx, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            raise ctx.error(f"needs 1 input and 1 output, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        handle = ctx.required_input(node, 0, "the resource id (input 0)")
        if handle.type != schema.TensorType.RESOURCE or handle.num_elements != 1:
            raise ctx.error(f"the resource id must be one RESOURCE element, not "
                            f"{type_name(handle.type)} of shape {tuple(handle.shape)}")
        ctx.release(handle)
        if node.outputs[0] < 0:
            raise ctx.error("the output tensor is missing")

    def invoke(self, ctx, node):
        resources = ctx.resource_variables
        if resources is None:
            raise ctx.error("READ_VARIABLE requires resource variables. Please create "
                            "ResourceVariables and pass it to the interpreter.")
        resource_id = int(node.input_arrays[0].reshape(-1)[0])
        try:
            resources.read(resource_id, node.output_arrays[0])
        except KernelError as e:
            raise ctx.error(e.detail) from None
