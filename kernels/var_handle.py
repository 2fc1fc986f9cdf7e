"""VAR_HANDLE: the id of a resource variable, as TFLM's kernel.

Init takes the OpData (the int32 resource id) from the tail. Prepare looks the
variable up by container and shared name in the interpreter's resource-variable table
(creating it when new) and points the output tensor at the OpData: the output then
has memory before the memory plan is made, so the planner leaves it out. Eval has
nothing left to do.
"""
from __future__ import annotations

import numpy as np

from micro_runtime import schema
from micro_runtime.errors import KernelError

from .base import Kernel, register
from .internal.tensor_utils import type_name


def _name(params, field):
    value = params.get(field)
    return value if isinstance(value, str) else None


@register
class VarHandle(Kernel):
    op = "VAR_HANDLE"
    invoke_allocates = True     # hands out the resource variables
    supported_types = ("resource",)
    type_input = None

    def init(self, ctx, node):
        return ctx.persistent_array(np.int32, 1, nbytes=ctx.sizeof("var_handle.OpData"))

    def prepare(self, ctx, node):
        resources = ctx.resource_variables
        if resources is None:
            raise ctx.error("VAR_HANDLE requires resource variables. Please create "
                            "ResourceVariables and pass it to the interpreter.")
        if len(node.outputs) < 1 or node.outputs[0] < 0:
            raise ctx.error("the output tensor is missing")
        out = ctx.eval_tensor(node.outputs[0])
        if out.type not in (schema.TensorType.RESOURCE, schema.TensorType.INT32) or out.nbytes != 4:
            raise ctx.error(f"the output must be one RESOURCE (or INT32) element, not "
                            f"{type_name(out.type)} of shape {tuple(out.shape)}")
        if out.is_constant or out.is_variable:
            raise ctx.error("the output tensor is a constant or variable tensor (TFLM points it "
                            "at the resource id)")
        try:
            resource_id = resources.create_id_if_none_found(_name(node.params, "container"),
                                                            _name(node.params, "shared_name"))
        except KernelError as e:
            raise ctx.error(e.detail) from None
        op_data = node.user_data
        op_data[0] = resource_id
        out.data = op_data.view(out.dtype).reshape(out.shape)

    def invoke(self, ctx, node):
        pass
