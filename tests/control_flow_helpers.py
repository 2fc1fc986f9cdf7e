"""Multi-subgraph models (IF, WHILE, CALL_ONCE, resource variables) and the differential
check against TFLM: outputs of every invoke, the allocation report and the minimum arena."""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from micro_runtime import MicroInterpreter
from micro_runtime.api import count_resource_variables
from micro_runtime.model import load_model
from micro_runtime.tools.model_writer import ModelBuilder
from tests.stateful_helpers import compare_invokes_with_tflm


def make_interpreter(model: bytes, arena_size: int = 1 << 20, target: str = "host64",
                     **kwargs) -> MicroInterpreter:
    """Ours, with the resource-variable count the tflite_micro package would pass."""
    return MicroInterpreter(model, arena_size=arena_size, target=target, recording=True,
                            num_resource_variables=count_resource_variables(load_model(model)),
                            error_reporter=lambda m: None, **kwargs)


def compare_runs(oracle, model: bytes, runs: List[Sequence[np.ndarray]], reset_between: bool = False,
                 min_arena: str = "exact", context: str = "", arena_size: int = 1 << 20):
    """Invoke ours and TFLM once per entry of ``runs`` (state carried over, or reset after
    every invoke); assert bit-identical outputs of every invoke, identical
    print_allocations() lines and the same minimum arena. ``min_arena``: ``"exact"``
    (TFLM's binary search), ``"edge"`` (TFLM fits our minimum and not one byte less) or
    ``"none"``. Returns our per-invoke outputs."""
    ours, it = compare_invokes_with_tflm(oracle, model, runs, arena_size, reset_between, context,
                                         interpreter=make_interpreter(model, arena_size))
    if min_arena != "none":
        need = it.min_arena_bytes()
        first = list(runs[0])
        if min_arena == "exact":
            assert oracle.min_arena(model, first) == need, f"{context}: minimum arena differs"
        else:
            assert oracle.fits(model, need, first), f"{context}: TFLM does not fit our minimum {need}"
            assert not oracle.fits(model, need - 1, first), f"{context}: TFLM fits {need - 1} bytes"
    return ours


# ------------------------------------------------------------------ model builders
def _binary_subgraph(b: ModelBuilder, name: str, op: str, shape, dtype: str, extra_op: Optional[str] = None):
    """A subgraph (a, b) -> op(a, b) [-> extra_op(r, b)]."""
    g = b.subgraph(name)
    x = g.add_tensor("a", shape, dtype)
    y = g.add_tensor("b", shape, dtype)
    r = g.add_tensor("r", shape, dtype)
    g.add_operator(op, [x, y], [r])
    if extra_op is not None:
        r2 = g.add_tensor("r2", shape, dtype)
        g.add_operator(extra_op, [r, y], [r2])
        r = r2
    g.inputs, g.outputs = [x, y], [r]
    return g


def if_model(shape=(2, 3), dtype: str = "FLOAT32", then_op: str = "ADD", else_op: str = "MUL",
             else_extra: Optional[str] = None, pre_op: Optional[str] = None,
             cond_shape=(), then_index: int = 1, else_index: int = 2) -> bytes:
    """main: IF(cond, x, y) -> out (optionally x' = pre_op(x, y) first, and the output
    used by a SUB after the IF); subgraph 1: then_op(a, b); subgraph 2: else_op(a, b)."""
    b = ModelBuilder()
    m = b.subgraph("main")
    c = m.add_tensor("cond", cond_shape, "BOOL")
    x = m.add_tensor("x", shape, dtype)
    y = m.add_tensor("y", shape, dtype)
    o = m.add_tensor("o", shape, dtype)
    first = x
    if pre_op is not None:
        first = m.add_tensor("x2", shape, dtype)
        m.add_operator(pre_op, [x, y], [first])
    m.add_operator("IF", [c, first, y], [o], then_subgraph_index=then_index,
                   else_subgraph_index=else_index)
    out = o
    if pre_op is not None:
        out = m.add_tensor("o2", shape, dtype)
        m.add_operator("SUB", [o, x], [out])
    m.inputs, m.outputs = [c, x, y], [out]
    _binary_subgraph(b, "then", then_op, shape, dtype)
    _binary_subgraph(b, "else", else_op, shape, dtype, else_extra)
    return b.build()


def while_model(k: int = 3, counter: str = "INT32", state: str = "FLOAT32", body_op: str = "ADD",
                inner_if: bool = False) -> bytes:
    """main: (n, acc, x) -> WHILE -> outputs (acc', n'): the loop runs n times (the
    condition is CAST(n) to bool), the body does n -= 1, acc = body_op(acc, x). With
    ``inner_if`` the body's update is an IF on a fourth loop input ``c``: ADD when true,
    MUL when false (subgraphs 3 and 4)."""
    b = ModelBuilder()
    m = b.subgraph("main")
    n = m.add_tensor("n", (), counter)
    acc = m.add_tensor("acc", (k,), state)
    x = m.add_tensor("x", (k,), state)
    ins = [n, acc, x]
    if inner_if:
        ins.append(m.add_tensor("c", (), "BOOL"))
    outs = [m.add_tensor(f"{m.tensors[t].name}_out", m.tensors[t].shape, m.tensors[t].type) for t in ins]
    m.add_operator("WHILE", ins, outs, cond_subgraph_index=1, body_subgraph_index=2)
    m.inputs, m.outputs = ins, [outs[1], outs[0]]

    def loop_inputs(g):
        t = [g.add_tensor("n", (), counter), g.add_tensor("acc", (k,), state), g.add_tensor("x", (k,), state)]
        if inner_if:
            t.append(g.add_tensor("c", (), "BOOL"))
        return t

    c = b.subgraph("cond")
    cin = loop_inputs(c)
    flag = c.add_tensor("flag", (), "BOOL")
    c.add_operator("CAST", [cin[0]], [flag])
    c.inputs, c.outputs = cin, [flag]

    g = b.subgraph("body")
    bin_ = loop_inputs(g)
    one = g.add_tensor("one", (), counter, data=np.array(1, np.int32 if counter == "INT32" else np.float32))
    n2 = g.add_tensor("n2", (), counter)
    acc2 = g.add_tensor("acc2", (k,), state)
    g.add_operator("SUB", [bin_[0], one], [n2])
    if inner_if:
        g.add_operator("IF", [bin_[3], bin_[1], bin_[2]], [acc2], then_subgraph_index=3,
                       else_subgraph_index=4)
    else:
        g.add_operator(body_op, [bin_[1], bin_[2]], [acc2])
    g.inputs, g.outputs = bin_, [n2, acc2] + bin_[2:]
    if inner_if:
        _binary_subgraph(b, "then", "ADD", (k,), state)
        _binary_subgraph(b, "else", "MUL", (k,), state)
    return b.build()


def counter_input(counter: str, n: int) -> np.ndarray:
    return np.array(n, np.int32 if counter == "INT32" else np.float32)
