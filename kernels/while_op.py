"""WHILE: runs the body subgraph as long as the condition subgraph says so, as TFLM.

Init takes the OpData (two subgraph indices) from the tail. Prepare checks that the op
has as many outputs as inputs, that both subgraphs take that many inputs and that the
body gives that many outputs. Eval copies the op inputs into the condition's inputs and
into the op outputs (the loop state), runs the condition, and while its first output is
true: state -> body inputs, run the body, body outputs -> state, state -> condition
inputs, run the condition.

Refused where TFLM would read garbage: a condition subgraph whose first output is not
a one-element BOOL tensor. Every iteration is counted (``ctx.count_loop_iteration``):
past the interpreter's ``max_loop_iterations`` for one invoke (all loops together) the
invoke ends with a LimitError instead of running forever as TFLM does. Sizing passes
always have such a bound (:data:`micro_runtime.limits.SIZING_LOOP_ITERATIONS`); a
plain invoke has none unless one is set.
"""
from __future__ import annotations

from micro_runtime import schema

from .base import Kernel, register
from .internal.subgraph_copy import (check_index, copy_from_subgraph_outputs, copy_tensor,
                            copy_to_subgraph_inputs, op_inputs, op_outputs)
from .internal.tensor_utils import type_name


class OpData:
    def __init__(self):
        self.cond_subgraph_index = 0
        self.body_subgraph_index = 0


@register
class While(Kernel):
    op = "WHILE"
    invoke_allocates = True     # runs other subgraphs
    supported_types = ("*",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("while.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        data = node.user_data
        cond = data.cond_subgraph_index = check_index(ctx, node, "cond_subgraph_index")
        body = data.body_subgraph_index = check_index(ctx, node, "body_subgraph_index")
        n_in, n_out = len(node.inputs), len(node.outputs)
        cond_in = len(ctx.subgraph_inputs(cond))
        body_in = len(ctx.subgraph_inputs(body))
        body_out = len(ctx.subgraph_outputs(body))
        if n_in != cond_in:
            raise ctx.error(f"has {n_in} inputs but its condition subgraph {cond} takes {cond_in}")
        if n_in != body_in:
            raise ctx.error(f"has {n_in} inputs but its body subgraph {body} takes {body_in}")
        if n_in != n_out:
            raise ctx.error(f"has {n_in} inputs but {n_out} outputs (they must match)")
        if n_out != body_out:
            raise ctx.error(f"has {n_out} outputs but its body subgraph {body} gives {body_out}")
        cond_outputs = ctx.subgraph_outputs(cond)
        if not cond_outputs:
            raise ctx.error(f"its condition subgraph {cond} has no output (TFLM would read "
                            "past the outputs)")
        flag = cond_outputs[0]
        if flag.type != schema.TensorType.BOOL or flag.nbytes != 1:
            raise ctx.error(f"the output of its condition subgraph {cond} must be a BOOL scalar, "
                            f"not {type_name(flag.type)} of shape {tuple(flag.shape)}")

    def invoke(self, ctx, node):
        data = node.user_data
        cond, body = data.cond_subgraph_index, data.body_subgraph_index
        inputs, state = op_inputs(ctx, node), op_outputs(ctx, node)
        copy_to_subgraph_inputs(ctx, inputs, cond, "input")
        for k, (src, dst) in enumerate(zip(inputs, state)):
            copy_tensor(ctx, dst, src, f"input {k} -> output {k}")
        flag = ctx.subgraph_outputs(cond)[0]
        ctx.invoke_subgraph(cond)
        fast = None
        while bool(flag.data.reshape(-1)[0]):
            ctx.count_loop_iteration()
            if fast is None:
                # the first iteration copies with every check; later ones repeat the same
                # copies between the same arena views (when every tensor is in the arena)
                copy_to_subgraph_inputs(ctx, state, body, "output")
                ctx.invoke_subgraph(body)
                copy_from_subgraph_outputs(ctx, node, body)
                copy_to_subgraph_inputs(ctx, state, cond, "output")
                ctx.invoke_subgraph(cond)
                fast = _copy_plan(ctx, state, body, cond) or False
                continue
            if fast is False:
                copy_to_subgraph_inputs(ctx, state, body, "output")
                ctx.invoke_subgraph(body)
                copy_from_subgraph_outputs(ctx, node, body)
                copy_to_subgraph_inputs(ctx, state, cond, "output")
                ctx.invoke_subgraph(cond)
                continue
            to_body, from_body, to_cond = fast
            for dst, src in to_body:
                dst[...] = src
            ctx.invoke_subgraph(body)
            for dst, src in from_body:
                dst[...] = src
            for dst, src in to_cond:
                dst[...] = src
            ctx.invoke_subgraph(cond)


def _copy_plan(ctx, state, body: int, cond: int):
    """(state -> body inputs, body outputs -> state, state -> condition inputs) as lists
    of (destination, source) flat arena views, the copies of one iteration once checked;
    None when a tensor is not in the arena (its data may change between iterations) or
    the body has no outputs (TFLM then keeps the state)."""
    body_in, body_out = ctx.subgraph_inputs(body), ctx.subgraph_outputs(body)
    cond_in = ctx.subgraph_inputs(cond)
    if not body_out:
        return None

    def pairs(sources, targets):
        out = []
        for src, dst in zip(sources, targets):
            if src.address is None or dst.address is None:
                return None
            if src.address != dst.address and dst.nbytes:
                out.append((dst.data.reshape(-1), src.data.reshape(-1)))
        return out
    plan = (pairs(state, body_in), pairs(body_out, state), pairs(state, cond_in))
    return None if any(p is None for p in plan) else plan
