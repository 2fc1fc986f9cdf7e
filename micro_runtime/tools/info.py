"""``micro-runtime info``: what a model needs and costs, read from the model alone.

Inputs and outputs (name, shape, dtype, scale, zero point), the flash it takes
(``model_bytes``: the .tflite file; ``weights_bytes``: its constant tensor data), the
operator list with multiply-accumulates (MACs) per operator and in total, and (from
:mod:`micro_runtime.tools.sizing`) the exact tensor arena on a target.

MACs count the multiply-accumulates of the operators built on them, from the shapes
stored in the model (every operator of every subgraph once):

* CONV_2D: output elements x kernel height x kernel width x filter input channels
  (input channels / groups); CONV_3D likewise with the kernel depth;
* DEPTHWISE_CONV_2D: output elements x kernel height x kernel width;
* TRANSPOSE_CONV: input elements x kernel height x kernel width x output channels;
* FULLY_CONNECTED: output elements x input features (the filter's second dimension);
* BATCH_MATMUL: output elements x the contracted dimension;
* SVDF: batches x filters x (input size + memory size);
* UNIDIRECTIONAL_SEQUENCE_LSTM / LSTM: per batch and time step, the weight matrices
  (4 gates, or 3 with CIFG) x (input + output size) plus the projection matrix.

Every other operator (pooling, elementwise arithmetic, activations, data movement)
counts 0 MACs. Padding positions count as in the converter (SAME-padded borders are
included). TFLite's converter reports an *arithmetic count* (its
``tfl-get-arithmetic-count`` pass) of ``2 x MACs + bias additions`` for CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED (multiply and add counted apart, plus one add
per output element when the op has a bias), and ``2 x MACs`` for TRANSPOSE_CONV
without bias; TFLite's benchmark_model reports times, not MACs.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..model import Model, OperatorSpec, SubGraphSpec, TensorSpec

#: ``--json`` keys of ``info`` (stable).
INFO_KEYS = ("model", "model_bytes", "weights_bytes", "inputs", "outputs", "macs", "operators",
             "op_types", "arena", "arena_error")


def _numel(shape: Sequence[int]) -> Optional[int]:
    if any(d < 0 for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _shape(sg: SubGraphSpec, op: OperatorSpec, k: int, outputs: bool = False) -> Optional[tuple]:
    idx = op.outputs if outputs else op.inputs
    if k >= len(idx) or idx[k] < 0:
        return None
    return tuple(sg.tensors[idx[k]].shape)


def _conv(sg, op, spatial_dims: int) -> Optional[int]:
    out, flt = _shape(sg, op, 0, True), _shape(sg, op, 1)
    if out is None or flt is None or len(flt) < spatial_dims + 2:
        return None
    # CONV_2D filter: [out_c, kh, kw, in_c / groups]; CONV_3D filter: [kd, kh, kw, in_c, out_c]
    per_output = int(np.prod(flt[1:], dtype=np.int64)) if spatial_dims == 2 else \
        int(np.prod(flt[:-1], dtype=np.int64))
    n = _numel(out)
    return None if n is None else n * per_output


def _depthwise(sg, op) -> Optional[int]:
    out, flt = _shape(sg, op, 0, True), _shape(sg, op, 1)
    if out is None or flt is None or len(flt) != 4:
        return None
    n = _numel(out)
    return None if n is None else n * flt[1] * flt[2]


def _transpose_conv(sg, op) -> Optional[int]:
    flt, inp = _shape(sg, op, 1), _shape(sg, op, 2)
    if flt is None or inp is None or len(flt) != 4:
        return None
    n = _numel(inp)
    return None if n is None else n * flt[0] * flt[1] * flt[2]


def _fully_connected(sg, op) -> Optional[int]:
    out, flt = _shape(sg, op, 0, True), _shape(sg, op, 1)
    if out is None or flt is None or len(flt) != 2:
        return None
    n = _numel(out)
    return None if n is None else n * flt[1]


def _batch_matmul(sg, op) -> Optional[int]:
    out, lhs = _shape(sg, op, 0, True), _shape(sg, op, 0)
    if out is None or lhs is None or len(lhs) < 2:
        return None
    depth = lhs[-2] if op.params.get("adj_x") else lhs[-1]
    n = _numel(out)
    return None if n is None else n * depth


def _svdf(sg, op) -> Optional[int]:
    inp, feature, time = _shape(sg, op, 0), _shape(sg, op, 1), _shape(sg, op, 2)
    if inp is None or feature is None or time is None or len(feature) != 2 or len(time) != 2:
        return None
    batches = inp[0] if len(inp) == 2 else 1
    return batches * feature[0] * (feature[1] + time[1])


def _lstm(sg, op) -> Optional[int]:
    """Weight-matrix MACs of TFLite's LSTM tensor layout: 1..4 input-to-gate weights
    [cell, input], 5..8 recurrent weights [cell, output], 16 projection [output, cell]."""
    inp = _shape(sg, op, 0)
    if inp is None:
        return None
    matrices = [_shape(sg, op, k) for k in (1, 2, 3, 4, 5, 6, 7, 8, 16)]
    n_input = next((m[1] for m in matrices[:4] if m is not None and len(m) == 2), None)
    n = _numel(inp)
    if n_input in (None, 0) or n is None:
        return None
    steps = n // n_input                                   # batch x time
    per_step = sum(int(np.prod(m, dtype=np.int64)) for m in matrices if m is not None)
    return steps * per_step


_MAC_RULES = {
    "CONV_2D": lambda sg, op: _conv(sg, op, 2),
    "CONV_3D": lambda sg, op: _conv(sg, op, 3),
    "DEPTHWISE_CONV_2D": _depthwise,
    "TRANSPOSE_CONV": _transpose_conv,
    "FULLY_CONNECTED": _fully_connected,
    "BATCH_MATMUL": _batch_matmul,
    "SVDF": _svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    "LSTM": _lstm,
}


def operator_macs(sg: SubGraphSpec, op: OperatorSpec) -> Optional[int]:
    """Multiply-accumulates of one operator (see the module doc); None when the model's
    shapes do not determine them (unknown dimensions, unexpected tensor ranks)."""
    rule = _MAC_RULES.get(op.name)
    return 0 if rule is None else rule(sg, op)


def _quant(spec: TensorSpec):
    q = spec.quantization
    if q is None:
        return None, None
    if q.scales.size == 1:
        return float(q.scales[0]), int(q.zero_points[0])
    return [float(s) for s in q.scales], [int(z) for z in np.broadcast_to(q.zero_points, q.scales.shape)]


def tensor_summary(spec: TensorSpec) -> dict:
    """``name``, ``shape``, ``dtype``, ``scale`` and ``zero_point`` (None when the tensor
    is not quantized; lists when quantized per channel), ``bytes``."""
    scale, zero_point = _quant(spec)
    n = _numel(spec.shape)
    return {"name": spec.name, "shape": list(spec.shape), "dtype": spec.type_name.lower(),
            "scale": scale, "zero_point": zero_point,
            "bytes": None if n is None else n * spec.dtype.itemsize}


def weights_bytes(model: Model) -> int:
    """Bytes of constant tensor data (weights, biases, tables, shapes) in the model:
    every buffer a constant tensor points to, counted once."""
    used = {t.buffer_index for sg in model.subgraphs for t in sg.tensors if t.data is not None}
    return sum(model.buffers[i].data.size for i in used if model.buffers[i].data is not None)


def _tensor_bytes(spec: TensorSpec) -> Optional[int]:
    n = _numel(spec.shape)
    return None if n is None else n * spec.dtype.itemsize


def operator_weights_bytes(sg: SubGraphSpec, op: OperatorSpec) -> int:
    """Bytes of the constant inputs of ``op`` (weights, biases, tables), each buffer once."""
    seen, total = set(), 0
    for t in op.inputs:
        if t >= 0 and sg.tensors[t].data is not None and sg.tensors[t].buffer_index not in seen:
            seen.add(sg.tensors[t].buffer_index)
            total += int(sg.tensors[t].data.nbytes)
    return total


def operator_output_bytes(sg: SubGraphSpec, op: OperatorSpec) -> Optional[int]:
    """Bytes of the outputs of ``op`` (None when a shape is not known)."""
    sizes = [_tensor_bytes(sg.tensors[t]) for t in op.outputs if t >= 0]
    return None if any(v is None for v in sizes) else sum(sizes)


def model_info(model: Model, arena: Optional[dict] = None, arena_error: Optional[str] = None,
               allocations: Optional[Dict[tuple, Dict[str, int]]] = None) -> dict:
    """The ``info`` report of ``model`` as a dict (keys :data:`INFO_KEYS`); ``arena`` (the
    sizing figures) and ``arena_error`` (why they could not be measured) are put in as
    given; ``allocations`` (:func:`~micro_runtime.tools.sizing.operator_allocations` of an
    allocated interpreter) gives each operator's ``persistent_bytes`` (its options struct
    and its kernel's persistent buffers, in the tail) and ``scratch_bytes`` (None
    without it)."""
    operators: List[dict] = []
    for sg in model.subgraphs:
        for op in sg.operators:
            out_name = sg.tensors[op.outputs[0]].name if op.outputs and op.outputs[0] >= 0 else ""
            own = (allocations or {}).get((sg.index, op.index))
            operators.append({"subgraph": sg.index, "index": op.index, "op": op.name,
                              "output": out_name, "macs": operator_macs(sg, op),
                              "weights_bytes": operator_weights_bytes(sg, op),
                              "output_bytes": operator_output_bytes(sg, op),
                              "persistent_bytes": None if own is None else
                              own["options_bytes"] + own["persistent_bytes"],
                              "scratch_bytes": None if own is None else own["scratch_bytes"]})
    known = [o["macs"] for o in operators if o["macs"] is not None]
    total = sum(known) if len(known) == len(operators) else None
    by_type: Dict[str, dict] = {}
    for o in operators:
        entry = by_type.setdefault(o["op"], {"op": o["op"], "count": 0, "macs": 0})
        entry["count"] += 1
        entry["macs"] = None if entry["macs"] is None or o["macs"] is None else entry["macs"] + o["macs"]
    main = model.main
    return {
        "model": os.path.basename(model.source) if model.source != "<bytes>" else "<bytes>",
        "model_bytes": len(model.raw),
        "weights_bytes": weights_bytes(model),
        "inputs": [tensor_summary(main.tensors[t]) for t in main.inputs],
        "outputs": [tensor_summary(main.tensors[t]) for t in main.outputs],
        "macs": total,
        "operators": operators,
        "op_types": sorted(by_type.values(), key=lambda e: (-(e["macs"] or 0), e["op"])),
        "arena": arena,
        "arena_error": arena_error,
    }


def _fmt_quant(t: dict) -> str:
    if t["scale"] is None:
        return "not quantized"
    if isinstance(t["scale"], list):
        return f"per channel ({len(t['scale'])} scales)"
    return f"scale {t['scale']:.6g}, zero point {t['zero_point']}"


def format_info(info: dict) -> List[str]:
    """The text report of ``micro-runtime info``."""
    from .plan_view import short_text
    def n(v):
        return "?" if v is None else f"{v:,}"
    lines = [f"{info['model']}: {info['model_bytes']:,} bytes (flash), weights {info['weights_bytes']:,} bytes, "
             f"{len(info['operators'])} operators, {n(info['macs'])} MACs"]
    for kind in ("inputs", "outputs"):
        for k, t in enumerate(info[kind]):
            lines.append(f"  {kind[:-1]} {k}: {t['name']!r} {t['dtype']}{t['shape']} ({_fmt_quant(t)})")
    a = info.get("arena")
    if a:
        lines.append(f"  arena on {a['target']}: {a['min_arena_bytes']:,} bytes (RecordingMicroInterpreter), "
                     f"{a['plain_min_arena_bytes']:,} bytes (MicroInterpreter)")
    elif info.get("arena_error"):
        lines.append(f"  arena: not measured ({info['arena_error']})")
    lines += ["", f"{'#':>5}  {'operator':<28}{'MACs':>13}{'weights':>10}{'output':>10}"
                  f"{'persistent':>11}{'scratch':>9}  output tensor"]
    for o in info["operators"]:
        where = f"{o['subgraph']}:{o['index']}" if o["subgraph"] else str(o["index"])
        lines.append(f"{where:>5}  {o['op']:<28}{n(o['macs']):>13}{n(o['weights_bytes']):>10}"
                     f"{n(o['output_bytes']):>10}{n(o['persistent_bytes']):>11}{n(o['scratch_bytes']):>9}"
                     f"  {short_text(o['output'])}")
    lines.append("       (bytes: weights = constant inputs; output = output tensors; persistent = "
                 "options struct + kernel buffers in the tail; scratch = kernel scratch in the head)")
    lines += ["", f"{'op type':<30}{'count':>6}{'MACs':>14}"]
    for e in info["op_types"]:
        lines.append(f"{e['op']:<30}{e['count']:>6}{n(e['macs']):>14}")
    return lines


__all__ = ["model_info", "format_info", "operator_macs", "tensor_summary", "weights_bytes", "INFO_KEYS"]
