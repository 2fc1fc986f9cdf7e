"""Delegates: hand parts of the graph to another executor (TFLite's delegate flow).

A :class:`Delegate` looks at the execution plan in :meth:`Delegate.prepare` and claims
the nodes it supports with ``context.replace_nodes(kernel, node_indices)``. The claimed
nodes are split into the largest subsets that keep the graph acyclic (a subset never
needs a result computed outside it after it starts), and each subset becomes one
delegate node: its inputs are the tensors the subset reads from outside, its outputs the
tensors it produces for the rest of the graph. The delegate kernel's
``init / prepare / invoke / free`` run like any op's; ``node.params`` of a delegate node
is a :class:`DelegateParams`.

Tensors private to a subset leave the arena plan (the delegate holds them), unless the
delegate sets ``keep_private_tensors = True``.

Optional hooks for delegate-owned buffers: ``copy_to_buffer_handle(tensor_index, array)``
is called for every input of a delegate node before it runs, ``copy_from_buffer_handle
(tensor_index, array)`` for every output after, ``free_buffer_handle(tensor_index)`` when
the interpreter is freed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..builtin_options import OpParams
from ..errors import MicroRuntimeError
from ..model import Model, OperatorSpec, SubGraphSpec
from ..schema import BuiltinOperator


class DelegateError(MicroRuntimeError, RuntimeError):
    """A delegate failed to prepare or to take its nodes; the interpreter keeps the
    graph it had before."""


class Delegate:
    """Base class of a delegate."""

    name = "delegate"
    keep_private_tensors = False

    def prepare(self, context: "DelegateContext") -> None:
        """Claim nodes with ``context.replace_nodes(kernel, indices)``."""
        raise NotImplementedError


@dataclass
class DelegateParams:
    """What a delegate kernel gets for its node (TFLite's TfLiteDelegateParams)."""

    delegate: Delegate
    nodes_to_replace: List[int]           #: node indices in the original plan
    operators: List[OperatorSpec]         #: their specs, in execution order
    input_tensors: List[int]              #: tensors read from outside the subset
    output_tensors: List[int]             #: tensors produced for outside the subset
    private_tensors: List[int]            #: tensors used only inside the subset
    present: bool = True
    struct: Optional[str] = None
    options_name: Optional[str] = None

    def get(self, name, default=None):
        return getattr(self, name, default)

    def as_dict(self):
        return {}


class DelegateContext:
    """What a delegate sees while it prepares: the plan and each node's registration."""

    def __init__(self, model: Model, registrations: Sequence):
        self.model = model
        self._registrations = list(registrations)
        self.requests: List[Tuple[object, List[int]]] = []

    @property
    def execution_plan(self) -> List[int]:
        return list(range(len(self.model.main.operators)))

    def node(self, index: int) -> OperatorSpec:
        return self.model.main.operators[index]

    def registration(self, index: int):
        return self._registrations[index]

    def tensor(self, index: int):
        return self.model.main.tensors[index]

    def replace_nodes(self, kernel, node_indices: Sequence[int]) -> None:
        """Ask for ``node_indices`` to run on ``kernel`` (one delegate node per subset)."""
        n = len(self.model.main.operators)
        bad = [i for i in node_indices if not 0 <= int(i) < n]
        if bad:
            raise DelegateError(f"replace_nodes: node indices {bad} are not in the plan (0..{n - 1})")
        self.requests.append((kernel, sorted(set(int(i) for i in node_indices))))


def partition(sg: SubGraphSpec, claimed: Set[int]) -> List[Tuple[bool, List[int]]]:
    """Split the plan into alternating subsets of claimed / unclaimed nodes, each as
    large as the data dependencies allow, in an order that respects them.

    Returns [(is_claimed, node indices)]."""
    producer: Dict[int, int] = {}
    for i, op in enumerate(sg.operators):
        for t in op.outputs:
            producer[t] = i
    deps = []
    for i, op in enumerate(sg.operators):
        d = {producer[t] for t in op.inputs if t >= 0 and t in producer and producer[t] != i}
        deps.append(d)
    remaining = list(range(len(sg.operators)))
    done: Set[int] = set()
    subsets: List[Tuple[bool, List[int]]] = []
    kind = bool(remaining) and (remaining[0] in claimed)
    idle = 0
    while remaining:
        group: List[int] = []
        progress = True
        while progress:
            progress = False
            for i in list(remaining):
                if (i in claimed) == kind and deps[i] <= done:
                    group.append(i)
                    done.add(i)
                    remaining.remove(i)
                    progress = True
        if group:
            subsets.append((kind, group))
            idle = 0
        else:
            idle += 1
            if idle > 2:
                raise DelegateError("the operators are not in a valid execution order "
                                    "(an input is produced by a later operator)")
        kind = not kind
    return subsets


def apply_delegate(model: Model, registrations: Sequence, delegate: Delegate):
    """The model rewritten with ``delegate``'s subsets as delegate nodes.

    Returns (new model, {custom op name: kernel}) ; raises :class:`DelegateError`."""
    if len(model.subgraphs) != 1:
        raise DelegateError("delegates are supported on single-subgraph models")
    context = DelegateContext(model, registrations)
    try:
        delegate.prepare(context)
    except MicroRuntimeError as e:
        raise DelegateError(f"delegate {delegate.name!r} failed to prepare: {e}") from e
    except Exception as e:  # noqa: BLE001 - a user delegate's bug must not break the interpreter
        raise DelegateError(f"delegate {delegate.name!r} failed to prepare: {type(e).__name__}: {e}") from e
    sg = model.main
    owner: Dict[int, object] = {}
    for kernel, nodes in context.requests:
        for i in nodes:
            owner[i] = kernel
    if not owner:
        return model, {}
    if len({id(k) for k in owner.values()}) > 1:
        raise DelegateError(f"delegate {delegate.name!r} used several kernels; one delegate "
                            "runs all its subsets with one kernel")
    kernels: Dict[str, object] = {}
    new_ops: List[OperatorSpec] = []
    private_all: Set[int] = set()
    consumers: Dict[int, Set[int]] = {}
    for i, op in enumerate(sg.operators):
        for t in op.inputs:
            if t >= 0:
                consumers.setdefault(t, set()).add(i)
    graph_outputs = set(sg.outputs)
    for claimed, group in partition(sg, set(owner)):
        if not claimed:
            new_ops.extend(sg.operators[i] for i in group)
            continue
        for nodes in (group,):
            kernel = owner[nodes[0]]
            members = set(nodes)
            produced = {t for i in nodes for t in sg.operators[i].outputs}
            inputs: List[int] = []
            for i in nodes:
                for t in sg.operators[i].inputs:
                    if t >= 0 and t not in produced and t not in inputs:
                        inputs.append(t)
            outputs, private = [], []
            for i in nodes:
                for t in sg.operators[i].outputs:
                    if t in graph_outputs or (consumers.get(t, set()) - members):
                        outputs.append(t)
                    else:
                        private.append(t)
            name = f"DELEGATE_{delegate.name}_{len(kernels)}"
            kernels[name] = kernel
            params = DelegateParams(delegate, list(nodes), [sg.operators[i] for i in nodes],
                                    inputs, outputs, private)
            new_ops.append(OperatorSpec(index=len(new_ops), opcode_index=-1,
                                        builtin_code=BuiltinOperator.CUSTOM, custom_code=name,
                                        version=1, inputs=tuple(inputs), outputs=tuple(outputs),
                                        intermediates=(), params=params, custom_options=None))
            if not delegate.keep_private_tensors:
                private_all.update(private)
    # renumber operators in their new order
    new_ops = [dataclasses.replace(op, index=k) for k, op in enumerate(new_ops)]
    tensors = [dataclasses.replace(t, planned=False) if t.index in private_all else t for t in sg.tensors]
    new_sg = dataclasses.replace(sg, operators=new_ops, tensors=tensors)
    return dataclasses.replace(model, subgraphs=[new_sg]), kernels


class DelegateNodeKernel:
    """Wraps a delegate's kernel so the buffer-handle hooks run around its invoke."""

    def __init__(self, kernel, delegate: Delegate, custom_name: str):
        self.kernel = kernel
        self.delegate = delegate
        self.custom_name = custom_name
        self.op = None

    @property
    def name(self):
        return self.custom_name

    def init(self, ctx, node):
        return self.kernel.init(ctx, node) if hasattr(self.kernel, "init") else None

    def prepare(self, ctx, node):
        return self.kernel.prepare(ctx, node)

    def invoke(self, ctx, node):
        to_handle = getattr(self.delegate, "copy_to_buffer_handle", None)
        if to_handle is not None:
            for t, arr in zip(node.inputs, node.input_arrays):
                to_handle(t, arr)
        self.kernel.invoke(ctx, node)
        from_handle = getattr(self.delegate, "copy_from_buffer_handle", None)
        if from_handle is not None:
            for t, arr in zip(node.outputs, node.output_arrays):
                from_handle(t, arr)

    def free(self, ctx, node):
        if hasattr(self.kernel, "free"):
            self.kernel.free(ctx, node)
        free_handle = getattr(self.delegate, "free_buffer_handle", None)
        if free_handle is not None:
            for t in list(node.inputs) + list(node.outputs):
                free_handle(t)

    def reset(self, ctx, node):
        if hasattr(self.kernel, "reset"):
            self.kernel.reset(ctx, node)
