"""Writing patch programs into a .tflite model (several disjoint stages together)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

from ... import schema
from ...errors import InputError
from ...model import OFFLINE_MEMORY_ALLOCATION, Model, load_model
from ..model_writer import ModelBuilder, _Operator, _Tensor
from .geometry import COMPRESSED_REFUSAL, PatchError, Stage
from .program import PatchProgram, plan_rewrite


#: spacing of the new tensor indices of rewrites planned to be combined
_SLOT_STRIDE = 1 << 20


def slot_base(model: Model, slot: int) -> int:
    """The first new tensor index of the ``slot``-th of several combined rewrites."""
    return len(model.main.tensors) + slot * _SLOT_STRIDE


def _as_list_unchecked(programs) -> List[PatchProgram]:
    return [programs] if isinstance(programs, PatchProgram) else list(programs)


def _as_list(programs) -> List[PatchProgram]:
    programs = _as_list_unchecked(programs)
    if not programs:
        raise InputError("no rewrite given")
    model = programs[0].model
    expected = len(model.main.tensors)
    last_end = -1
    for p in sorted(programs, key=lambda p: p.stage.start):
        if p.model is not model:
            raise InputError("rewrites of different models cannot be combined")
        if p.stage.start <= last_end:
            raise InputError("the stages of combined rewrites overlap")
        last_end = p.stage.end
    expected = len(model.main.tensors)
    for p in sorted(programs, key=lambda p: p.base):
        if p.base < expected:
            raise InputError("combined rewrites need disjoint new tensor indices (see slot_base)")
        expected = p.end
    return programs


def _op_sequence(programs: List[PatchProgram]):
    """(inputs, outputs, copy_of / original index, new op or None) of the rewritten main
    subgraph, in execution order."""
    sg = programs[0].model.main
    by_start = {p.stage.start: p for p in programs}
    i = 0
    while i < len(sg.operators):
        p = by_start.get(i)
        if p is None:
            op = sg.operators[i]
            yield op.inputs, op.outputs, i, None
            i += 1
        else:
            for op in p.ops:
                yield op.inputs, op.outputs, op.copy_of, op
            i = p.stage.end + 1


def build_model(programs: Union[PatchProgram, Sequence[PatchProgram]]) -> bytes:
    """The rewritten model as .tflite bytes, without an offline memory plan; tensors no
    operator uses any more are removed. Several programs (disjoint stages, consecutive
    tensor bases) are written together."""
    programs = _as_list(programs)
    model = programs[0].model
    if model.has_compression():
        raise PatchError(COMPRESSED_REFUSAL)
    builder = ModelBuilder.from_model(model)
    builder.metadata = [(name, index) for name, index in builder.metadata
                        if name != OFFLINE_MEMORY_ALLOCATION]
    g = builder.subgraphs[0]
    index: Dict[int, int] = {}
    for prog in programs:
        for k, t in enumerate(prog.tensors):
            index[prog.base + k] = len(g.tensors)
            if t.data is not None:
                quant = g.tensors[t.proto].quantization if t.proto >= 0 else None
                g.tensors.append(_Tensor(t.name, t.shape, t.ttype, builder.add_buffer(t.data.tobytes()),
                                         quant))
            else:
                proto = g.tensors[t.proto]
                g.tensors.append(_Tensor(t.name, t.shape, proto.type, builder.empty_buffer(),
                                         proto.quantization))
    from ...builtin_options import BUILTIN_DATA

    def m(ts):
        return tuple(index.get(t, t) for t in ts)

    original = list(g.operators)
    operators = []
    for _, _, op_index, new in _op_sequence(programs):
        if new is None:
            operators.append(original[op_index])
        elif new.copy_of is not None:
            src = original[new.copy_of]
            options = dict(src.options)
            options.update(new.options)
            operators.append(_Operator(src.opcode_index, m(new.inputs), m(new.outputs), src.intermediates,
                                       src.options_name, options, src.custom_options))
        else:
            opcode = builder.opcode(schema.BUILTIN_OP_CODES[new.name], None, 1)
            options_name = BUILTIN_DATA.get(new.name, (None, None))[0] if new.options else None
            operators.append(_Operator(opcode, m(new.inputs), m(new.outputs), (), options_name,
                                       dict(new.options), None))
    g.operators = operators
    _drop_unused_tensors(g)
    return builder.build()


def _drop_unused_tensors(g) -> None:
    """Remove tensors no operator or subgraph input/output refers to (TFLM allocates a
    TfLiteEvalTensor for every tensor of a subgraph), renumbering the rest."""
    used = set(g.inputs) | set(g.outputs)
    for op in g.operators:
        used.update(t for t in op.inputs + op.outputs + op.intermediates if t >= 0)
    keep = [i for i in range(len(g.tensors)) if i in used]
    remap = {old: new for new, old in enumerate(keep)}
    g.tensors = [g.tensors[i] for i in keep]

    def m(ts):
        return tuple(remap[t] if t >= 0 else t for t in ts)

    for op in g.operators:
        op.inputs, op.outputs, op.intermediates = m(op.inputs), m(op.outputs), m(op.intermediates)
    g.inputs, g.outputs = list(m(g.inputs)), list(m(g.outputs))


def rewrite_stage(model: Union[Model, bytes, str], stage: Union[Stage, Tuple[int, int]],
                  grid: Optional[Tuple[int, int]] = None, policy: Union[str, Dict[int, str]] = "tight",
                  splits=None) -> Tuple[bytes, PatchProgram]:
    """Plan and write the rewrite of one stage (see :func:`plan_rewrite`): (model bytes,
    program)."""
    model = model if isinstance(model, Model) else load_model(model)
    prog = plan_rewrite(model, stage, grid, policy, splits)
    return build_model(prog), prog
