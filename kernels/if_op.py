"""IF: runs the then- or else-subgraph chosen by a boolean scalar, as TFLM's kernel.

Init takes the OpData (two subgraph indices) from the tail. Prepare checks the
condition (input 0: a temporary tensor, bool, one element) and that the then-branch has
as many inputs as the op has inputs after the condition and as many outputs as the op
(TFLM does not check the else-branch there: a mismatched else-branch fails when it
runs). Eval copies inputs 1.. into the chosen branch's inputs, invokes it, and copies
its outputs into the op's outputs (nothing when the branch has no outputs).
"""
from __future__ import annotations

from micro_runtime import schema

from .base import Kernel, register
from .internal.subgraph_copy import check_index, copy_from_subgraph_outputs, copy_to_subgraph_inputs, op_inputs
from .internal.tensor_utils import type_name


class OpData:
    def __init__(self):
        self.then_subgraph_index = 0
        self.else_subgraph_index = 0


@register
class If(Kernel):
    op = "IF"
    invoke_allocates = True     # runs another subgraph
    supported_types = ("*",)
    type_input = 1

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("if.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        if len(node.inputs) == 0:
            raise ctx.error("needs the condition input")
        cond = ctx.required_input(node, 0, "the condition (input 0)")
        if cond.type != schema.TensorType.BOOL:
            raise ctx.error(f"the condition must be BOOL, not {type_name(cond.type)}")
        if cond.num_elements != 1:
            raise ctx.error(f"the condition must hold one element, not shape {tuple(cond.shape)}")
        ctx.release(cond)
        data.then_subgraph_index = check_index(ctx, node, "then_subgraph_index")
        data.else_subgraph_index = check_index(ctx, node, "else_subgraph_index")
        then_in = len(ctx.subgraph_inputs(data.then_subgraph_index))
        then_out = len(ctx.subgraph_outputs(data.then_subgraph_index))
        if len(node.inputs) - 1 != then_in:
            raise ctx.error(f"has {len(node.inputs) - 1} inputs after the condition but its "
                            f"then-subgraph {data.then_subgraph_index} takes {then_in}")
        if len(node.outputs) != then_out:
            raise ctx.error(f"has {len(node.outputs)} outputs but its then-subgraph "
                            f"{data.then_subgraph_index} gives {then_out}")

    def invoke(self, ctx, node):
        data = node.user_data
        cond = node.input_arrays[0]
        branch = data.then_subgraph_index if bool(cond.reshape(-1)[0]) else data.else_subgraph_index
        copy_to_subgraph_inputs(ctx, op_inputs(ctx, node)[1:], branch, "input")
        ctx.invoke_subgraph(branch)
        copy_from_subgraph_outputs(ctx, node, branch)
