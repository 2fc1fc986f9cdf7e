"""ASSIGN_VARIABLE: copies its value input into a resource variable, as TFLM.

Init takes an OpData (a scratch-buffer index for a compressed value) from the tail in
builds with USE_TFLM_COMPRESSION; a value compressed by COMPRESSION_METADATA gets its
decompression scratch buffer at the end of prepare. Prepare checks
2 inputs and no output, a resource id of one RESOURCE or INT32 element, takes the value
input as a temporary tensor and, when the id tensor already has data (the output of a
VAR_HANDLE prepared before it, or a constant), gives the variable its value buffer from
the tail (sized as the value, filled with its int8 zero point). An id that only arrives
at run time (a subgraph input) is not allocated here: the variable must have been
allocated by another ASSIGN_VARIABLE, or eval fails as in TFLM. Eval copies the value.
"""
from __future__ import annotations

from micro_runtime import schema
from micro_runtime.errors import KernelError

from .base import Kernel, register
from .internal.tensor_utils import type_name


@register
class AssignVariable(Kernel):
    op = "ASSIGN_VARIABLE"
    invoke_allocates = True     # creates the resource variable's buffer on its first assignment
    supported_types = ("*",)
    type_input = 1

    def init(self, ctx, node):
        if ctx.target.compression:
            ctx.allocate_persistent(ctx.sizeof("assign_variable.OpData"))
        return {}

    def prepare(self, ctx, node):
        if len(node.inputs) != 2:
            raise ctx.error(f"needs 2 inputs, got {len(node.inputs)}")
        if len(node.outputs) != 0:
            raise ctx.error(f"has no outputs, got {len(node.outputs)}")
        if node.inputs[0] < 0:
            raise ctx.error("the resource id (input 0) is missing")
        handle = ctx.eval_tensor(node.inputs[0])
        if handle.type not in (schema.TensorType.RESOURCE, schema.TensorType.INT32):
            raise ctx.error(f"the resource id must be RESOURCE or INT32, not {type_name(handle.type)}")
        if handle.nbytes != 4:
            raise ctx.error(f"the resource id must hold one element, not shape {tuple(handle.shape)}")
        value = ctx.required_input(node, 1, "the value (input 1)")
        resources = ctx.resource_variables
        if handle.data is not None:
            if resources is None:
                raise ctx.error("ASSIGN_VARIABLE requires resource variables (the model has no "
                                "VAR_HANDLE; TFLM would crash)")
            try:
                resources.allocate(int(handle.data.reshape(-1)[0]), ctx, value)
            except KernelError as e:
                raise ctx.error(e.detail) from None
        node.user_data = ctx.decompression_scratch(node, 1)
        ctx.release(value)

    def invoke(self, ctx, node):
        resources = ctx.resource_variables
        if resources is None:
            raise ctx.error("ASSIGN_VARIABLE requires resource variables. Please create "
                            "ResourceVariables and pass it to the interpreter.")
        resource_id = int(node.input_arrays[0].reshape(-1)[0])
        value = node.input_arrays[1]
        if node.user_data:
            value = ctx.input_data(node, 1, node.user_data[1])
        try:
            resources.assign(resource_id, value)
        except KernelError as e:
            raise ctx.error(e.detail) from None
