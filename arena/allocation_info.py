"""Buffer lifetimes for the memory plan, as TFLM's AllocationInfoBuilder computes them.

Time is counted in *allocation scopes*: the subgraph inputs exist at scope 0 of the
main subgraph, every operator opens a new scope, and control-flow operators (IF, WHILE,
CALL_ONCE) open one more scope per subgraph they call and mark that subgraph's tensors
inside it. A tensor lives from the scope of its producer (or the subgraph start, for
inputs) to the scope of its last reader; subgraph outputs live to the subgraph's end; a
kernel's scratch buffer lives through its operator's scope.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from micro_runtime.errors import ModelError
from micro_runtime.schema import BUILTIN_OP_CODES

from .planners.base import ONLINE

_UNSET = -1

_IF = BUILTIN_OP_CODES["IF"]
_WHILE = BUILTIN_OP_CODES["WHILE"]
_CALL_ONCE = BUILTIN_OP_CODES["CALL_ONCE"]


@dataclass
class AllocationInfo:
    """One candidate buffer for the planner.

    ``kind`` is ``"tensor"`` (``index`` = tensor index in subgraph ``subgraph``) or
    ``"scratch"`` (``index`` = scratch-buffer request index). ``bytes`` is the unaligned
    size; ``first_created`` / ``last_used`` are allocation scopes (-1 = never)."""

    kind: str
    subgraph: int
    index: int
    bytes: int
    first_created: int = _UNSET
    last_used: int = _UNSET
    needs_allocating: bool = False
    offline_offset: int = ONLINE


@dataclass
class ScratchBufferRequest:
    """A kernel's request for scratch memory (bytes), owned by operator ``node_idx``
    (-1 while its operator is still preparing) of subgraph ``subgraph_idx``."""

    bytes: int
    node_idx: int
    subgraph_idx: int


def build_allocation_info(model, subgraph_tensors: Sequence[Sequence], scratch_requests:
                          Sequence[ScratchBufferRequest],
                          offline_offsets: Optional[Sequence[int]]) -> List[AllocationInfo]:
    """Every tensor of every subgraph, then every scratch buffer, with lifetimes.

    ``subgraph_tensors[s][i]`` is the eval tensor (it has ``nbytes``, ``is_constant``,
    ``is_variable``) of tensor ``i`` of subgraph ``s``.
    """
    infos: List[AllocationInfo] = []
    subgraph_base: Dict[int, int] = {}
    offline_index = 0
    for s, sg in enumerate(model.subgraphs):
        subgraph_base[s] = len(infos)
        for op in sg.operators:
            for t in op.intermediates:
                if subgraph_tensors[s][t].nbytes != 0:
                    raise ModelError(
                        f"{op.describe()}: Does not support intermediate tensor with non-zero "
                        f"size: {subgraph_tensors[s][t].nbytes}")
        for i, tensor in enumerate(subgraph_tensors[s]):
            info = AllocationInfo("tensor", s, i, tensor.nbytes)
            # a kernel may have given the tensor memory in prepare (VAR_HANDLE's output)
            has_data = tensor.is_constant or getattr(tensor, "data", None) is not None
            info.needs_allocating = (not has_data and not tensor.is_variable
                                     and tensor.nbytes != 0 and tensor.spec.planned)
            if offline_offsets is not None:
                info.offline_offset = int(offline_offsets[offline_index])
                offline_index += 1
                if tensor.is_variable and info.offline_offset != ONLINE:
                    info.needs_allocating = True
            infos.append(info)
    scratch_base = len(infos)
    for k, req in enumerate(scratch_requests):
        infos.append(AllocationInfo("scratch", req.subgraph_idx, k, 0, needs_allocating=True))

    scope = [0]

    def first(info: AllocationInfo, t: int) -> None:
        if info.first_created == _UNSET:
            info.first_created = t

    def last(info: AllocationInfo, t: int) -> None:
        info.last_used = t

    def mark(s: int, depth: int) -> None:
        if depth > len(model.subgraphs):
            raise ModelError("control-flow operators call subgraphs recursively")
        sg = model.subgraphs[s]
        base = subgraph_base[s]
        for t in sg.inputs:
            first(infos[base + t], scope[0])
            last(infos[base + t], scope[0])
        for op_index, op in enumerate(sg.operators):
            scope[0] += 1
            for t in op.outputs:
                first(infos[base + t], scope[0])
            start = scope[0]
            for called in _called_subgraphs(op, len(model.subgraphs)):
                scope[0] += 1
                mark(called, depth + 1)
            for t in op.inputs:
                if t >= 0:
                    last(infos[base + t], scope[0])
            for t in op.outputs:
                last(infos[base + t], scope[0])
            for k, req in enumerate(scratch_requests):
                if req.node_idx == op_index and req.subgraph_idx == s:
                    info = infos[scratch_base + k]
                    info.bytes = req.bytes
                    first(info, start)
                    last(info, scope[0])
        for t in sg.outputs:
            first(infos[base + t], scope[0])
            last(infos[base + t], scope[0])

    mark(0, 0)
    return infos


def _called_subgraphs(op, n_subgraphs: int) -> List[int]:
    code = op.builtin_code
    if code == _IF:
        names = ("then_subgraph_index", "else_subgraph_index")
    elif code == _WHILE:
        names = ("cond_subgraph_index", "body_subgraph_index")
    elif code == _CALL_ONCE:
        names = ("init_subgraph_index",)
    else:
        return []
    if not op.params.present:
        raise ModelError(f"{op.describe()}: control-flow operator has no options")
    out = []
    for name in names:
        index = int(op.params.get(name, -1))
        if not 0 <= index < n_subgraphs:
            raise ModelError(f"{op.describe()}: {name} {index} is not a subgraph of the model "
                             f"({n_subgraphs} subgraphs)")
        out.append(index)
    return out
