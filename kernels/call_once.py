"""CALL_ONCE: runs its init subgraph at the first invoke only, as TFLM's kernel.

Init takes the OpData (subgraph index + has_run flag) from the tail; prepare checks
that the op has no inputs and no outputs and clears the flag; eval runs the subgraph
once and sets the flag after it succeeds. TFLM's kernel has no reset function, so
``interpreter.reset()`` does not make it run again (the resource variables it
initialised go back to their default values, and stay there until assigned).
"""
from __future__ import annotations

from .base import Kernel, register
from .internal.subgraph_copy import check_index


class OpData:
    def __init__(self):
        self.init_subgraph_index = 0
        self.has_run = False


@register
class CallOnce(Kernel):
    op = "CALL_ONCE"
    invoke_allocates = True     # runs another subgraph

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("call_once.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        data.has_run = False
        if len(node.inputs) != 0 or len(node.outputs) != 0:
            raise ctx.error(f"takes no inputs and no outputs, got {len(node.inputs)} and "
                            f"{len(node.outputs)}")
        data.init_subgraph_index = check_index(ctx, node, "init_subgraph_index")

    def invoke(self, ctx, node):
        data = node.user_data
        if data.has_run:
            return
        ctx.invoke_subgraph(data.init_subgraph_index)
        data.has_run = True
