"""Tensor copies between an operator and the subgraphs it calls (IF, WHILE).

TFLM moves data between an op and its subgraphs by memcpy of whole eval tensors: both
tensors must hold the same number of bytes (it fails the op otherwise) and be of the same
type (a debug check; we refuse), and nothing is copied when both are the same buffer.
No kernel is registered here.
"""
from __future__ import annotations

from typing import Sequence

from .tensor_utils import data_address, type_name


def check_index(ctx, node, name: str) -> int:
    """The subgraph index option ``name``; the op's error when it is not a subgraph."""
    if not node.params.present:
        raise ctx.error(f"has no {node.params.options_name} (TFLM's memory planner would crash "
                        "reading the subgraph indices)")
    index = int(node.params.get(name, -1))
    if not 0 <= index < ctx.num_subgraphs:
        raise ctx.error(f"{name} {index} is not a subgraph of the model "
                        f"({ctx.num_subgraphs} subgraphs)")
    if index == node.subgraph_index:
        raise ctx.error(f"{name} {index} is the subgraph of the op itself (endless recursion; "
                        "TFLM would overflow its stack)")
    return index


def copy_tensor(ctx, dst, src, what: str) -> None:
    """memcpy of eval tensor ``src`` into eval tensor ``dst`` (``what`` names them in
    errors)."""
    if dst.type != src.type:
        raise ctx.error(f"{what}: types differ ({type_name(src.type)} vs {type_name(dst.type)})")
    if dst.nbytes != src.nbytes:
        raise ctx.error(f"{what}: sizes differ ({src.nbytes} vs {dst.nbytes} bytes, shapes "
                        f"{tuple(src.shape)} vs {tuple(dst.shape)})")
    if dst.nbytes == 0:
        return
    a, b = dst.data, src.data
    if a is None or b is None:
        raise ctx.error(f"{what}: a tensor has no memory")
    if dst.address is not None and src.address is not None:
        if dst.address == src.address:          # the same arena bytes (TFLM: same pointer)
            return
    elif data_address(a) == data_address(b):
        return
    if not a.flags.writeable:
        raise ctx.error(f"{what}: the destination is a constant tensor (TFLM would write into "
                        "the model)")
    a.reshape(-1)[...] = b.reshape(-1)          # same type and byte size: a memcpy


def _node_tensors(ctx, indices: Sequence[int], kind: str):
    out = []
    for k, t in enumerate(indices):
        if t < 0:
            raise ctx.error(f"{kind} {k} is omitted (-1); TFLM would dereference a null tensor")
        out.append(ctx.eval_tensor(t))
    return out


def op_inputs(ctx, node):
    return _node_tensors(ctx, node.inputs, "input")


def op_outputs(ctx, node):
    return _node_tensors(ctx, node.outputs, "output")


def copy_to_subgraph_inputs(ctx, sources, subgraph: int, what: str) -> None:
    """Copy ``sources`` (the op's tensors) into subgraph ``subgraph``'s inputs."""
    targets = ctx.subgraph_inputs(subgraph)
    if len(sources) != len(targets):
        raise ctx.error(f"{what}: {len(sources)} tensors for the {len(targets)} inputs of "
                        f"subgraph {subgraph}")
    for k, (src, dst) in enumerate(zip(sources, targets)):
        copy_tensor(ctx, dst, src, f"{what} {k} -> subgraph {subgraph} input {k}")


def copy_from_subgraph_outputs(ctx, node, subgraph: int) -> None:
    """Copy subgraph ``subgraph``'s outputs into the op's outputs (nothing when the
    subgraph has no outputs, as in TFLM)."""
    sources = ctx.subgraph_outputs(subgraph)
    if not sources:
        return
    targets = op_outputs(ctx, node)
    if len(sources) != len(targets):
        raise ctx.error(f"subgraph {subgraph} has {len(sources)} outputs but the op has "
                        f"{len(targets)}")
    for k, (src, dst) in enumerate(zip(sources, targets)):
        copy_tensor(ctx, dst, src, f"subgraph {subgraph} output {k} -> op output {k}")
