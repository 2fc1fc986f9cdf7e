"""Pictures of a memory plan: TFLM-style ASCII chart and an SVG timeline."""
from __future__ import annotations

from html import escape
from typing import List, Optional

import numpy as np

from arena.planners import BufferRequest, memory_plan_chart


def _producers(subgraph) -> dict:
    """tensor index -> "#k OP" of the operator that writes it."""
    out = {}
    for op in subgraph.operators:
        for t in op.outputs:
            if t >= 0:
                out[t] = f"#{op.index} {op.name}"
    return out


def plan_entries(interpreter) -> List[dict]:
    """The committed plan of an allocated interpreter: one dict per planned buffer
    with ``name``, ``kind`` ("tensor"/"scratch"), ``index``, ``subgraph``, ``offset``,
    ``size`` (bytes given to the planner), ``bytes`` (requested), ``first_used``,
    ``last_used`` (allocation scopes), ``offline`` and ``producer`` (the operator that
    writes the buffer, "#k OP"; "model input" / "subgraph input" / "variable" otherwise)."""
    out = []
    model = interpreter.model
    reqs = interpreter.allocator.scratch_requests
    producers = [_producers(sg) for sg in model.subgraphs]
    for pb in interpreter.allocator.plan:
        if pb.kind == "tensor":
            sg = model.subgraphs[pb.subgraph]
            spec = sg.tensors[pb.index]
            name = spec.name or f"tensor {pb.index}"
            producer = producers[pb.subgraph].get(pb.index)
            if producer is None:
                if pb.index in sg.inputs:
                    producer = "model input" if pb.subgraph == 0 else "subgraph input"
                else:
                    producer = "variable" if spec.is_variable else "none"
        else:
            req = reqs[pb.index]
            op = model.subgraphs[req.subgraph_idx].operators[req.node_idx]
            name = f"scratch of #{op.index} {op.name}"
            producer = f"#{op.index} {op.name}"
        out.append({"name": name, "kind": pb.kind, "index": pb.index, "subgraph": pb.subgraph,
                    "offset": pb.offset, "size": pb.size, "bytes": pb.bytes,
                    "first_used": pb.first_used, "last_used": pb.last_used, "offline": pb.offline,
                    "producer": producer})
    return out


def step_operator(step: int) -> Optional[int]:
    """The operator that runs at allocation step ``step`` (step k runs operator #k-1;
    step 0 holds the model inputs, no operator)."""
    return step - 1 if step >= 1 else None


def head_peak(entries: List[dict]) -> Optional[dict]:
    """Where the head peaks: the first allocation step at which the buffers live
    together reach furthest into the arena (their highest ``offset + size``), that step's
    operator and those buffers (largest first). ``bytes``: that extent, which the head
    is (before its 16-byte alignment); ``steps``: every step reaching it. None for a plan
    without buffers."""
    if not entries:
        return None
    first = min(e["first_used"] for e in entries)
    last = max(e["last_used"] for e in entries)
    starts = np.array([e["first_used"] for e in entries])
    ends = np.array([e["last_used"] for e in entries])
    tops = np.array([e["offset"] + e["size"] for e in entries])
    times = np.arange(first, last + 1)
    live = (starts[None, :] <= times[:, None]) & (ends[None, :] >= times[:, None])
    extent = np.where(live, tops[None, :], 0).max(axis=1)
    peak = int(extent.max())
    at = int(np.argmax(extent == peak))
    step = int(times[at])
    buffers = sorted((entries[i] for i in np.flatnonzero(live[at])), key=lambda e: (-e["size"], e["offset"]))
    op = step_operator(step)
    return {"step": step, "operator": op,
            "op": next((b["producer"].split(" ", 1)[1] for b in buffers
                        if b["producer"].startswith(f"#{op} ")), None) if op is not None else None,
            "bytes": peak, "steps": [int(t) for t in times[extent == peak]],
            "buffers": [{"name": b["name"], "kind": b["kind"], "bytes": b["bytes"], "size": b["size"],
                         "offset": b["offset"], "producer": b["producer"]} for b in buffers]}


def format_peak(peak: Optional[dict], limit: int = 6) -> List[str]:
    """Text lines saying which operator and buffers set the head: the operator of the
    peak step and the live buffers, largest first (at most ``limit``, then a count)."""
    if peak is None:
        return ["  head peak: no planned buffers"]
    where = ("the model inputs (step 0)" if peak["operator"] is None else
             f"operator #{peak['operator']}" + (f" {peak['op']}" if peak["op"] else ""))
    others = len(peak["steps"]) - 1
    gap = peak["bytes"] - sum(b["size"] for b in peak["buffers"])
    lines = [f"  head peak {peak['bytes']} bytes at {where}"
             + (f" (reached at {others} other step{'s' if others > 1 else ''} too)" if others else "")
             + ": the buffers live there" + (f", with {gap} bytes unused between them" if gap else "")]
    for b in peak["buffers"][:limit]:
        lines.append(f"    {b['size']:>9} bytes @ {b['offset']:<8} {short_text(b['name'])}"
                     + (f" (from {b['producer']})" if b["kind"] == "tensor" else ""))
    if len(peak["buffers"]) > limit:
        rest = peak["buffers"][limit:]
        lines.append(f"    ... {len(rest)} smaller buffer(s), {sum(b['size'] for b in rest)} bytes")
    return lines


def short_text(text: str, limit: int = 60) -> str:
    """``text``, or its last ``limit`` - 3 characters after '...' when longer (tensor
    names of converted models run to hundreds of characters; their end names the layer)."""
    return text if len(text) <= limit else "..." + text[-(limit - 3):]


def ascii_chart(entries: List[dict], width: int = 80) -> List[str]:
    """TFLM's PrintMemoryPlan layout for the plan entries."""
    buffers = [BufferRequest(e["size"], e["first_used"], e["last_used"]) for e in entries]
    return memory_plan_chart(buffers, [e["offset"] for e in entries], width)


_PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#bab0ac"]


def _short_name(entry: dict) -> str:
    """The last part of a tensor's name ('Conv2d_3_pointwise/Relu6' -> 'Relu6')."""
    if entry["kind"] == "scratch":
        return f"scratch of {entry['producer']}"
    return entry["name"].rstrip("/").split("/")[-1].split(":")[0] or entry["name"]


def _box_label(key: int, entry: dict, max_chars: int) -> str:
    """'3 Relu6' (the legend key and the name's last part) where it fits, else the key."""
    full = f"{key} {_short_name(entry)}"
    if len(full) <= max_chars:
        return full
    return str(key) if len(str(key)) <= max_chars else ""


LEGEND_ROW = 15


def svg_timeline(entries: List[dict], title: str, head_bytes: int) -> str:
    """An SVG picture: allocation step on x, arena offset (bytes) on y, one box per
    buffer labelled with its legend key and, where it fits, its name; below the plot a
    legend gives each key's full tensor name, the operator that produces it, its bytes,
    offset and steps (the full line is also each box's tooltip). Opens in any browser."""
    left, top, right, bottom = 80, 50, 20, 60
    width, plot_height = 1000, 640
    legend_top = plot_height + 10
    height = legend_top + LEGEND_ROW * (len(entries) + 1) + 10
    max_time = max([e["last_used"] for e in entries] + [1])
    min_time = min([e["first_used"] for e in entries] + [0])
    span_t = max(max_time - min_time + 1, 1)
    span_y = max(head_bytes, max([e["offset"] + e["size"] for e in entries] + [1]))
    plot_w, plot_h = width - left - right, plot_height - top - bottom

    def x(t):
        return left + (t - min_time) * plot_w / span_t

    def y(off):
        return top + plot_h - off * plot_h / span_y

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
             f'<text x="{left}" y="40" fill="#555">head {head_bytes} bytes, {len(entries)} buffers; '
             f'x: allocation step (operator), y: arena offset in bytes</text>']
    # axes
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="black"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="black"/>')
    for k in range(6):
        off = span_y * k // 5
        parts.append(f'<text x="{left - 6}" y="{y(off) + 4:.1f}" text-anchor="end">{off}</text>')
        parts.append(f'<line x1="{left}" y1="{y(off):.1f}" x2="{left + plot_w}" y2="{y(off):.1f}" stroke="#eee"/>')
    step = max(1, span_t // 25)
    for t in range(min_time, max_time + 1, step):
        parts.append(f'<text x="{x(t) + (x(t + 1) - x(t)) / 2:.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle">{t}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{plot_height - 14}" text-anchor="middle">'
                 'allocation step (step k runs operator #k-1; 0 = model inputs)</text>')
    legend = [f'<g class="legend"><text x="10" y="{legend_top + LEGEND_ROW - 3}" font-weight="bold">'
              'key  tensor (produced by)  bytes @ offset, steps</text>']
    for i, e in enumerate(entries):
        key = i + 1
        x0, x1 = x(e["first_used"]), x(e["last_used"] + 1)
        y0, y1 = y(e["offset"] + e["size"]), y(e["offset"])
        color = "#999999" if e["kind"] == "scratch" else _PALETTE[i % len(_PALETTE)]
        line = (f'{key}  {e["name"]} (produced by {e["producer"]})  {e["bytes"]} bytes @ {e["offset"]}, '
                f'steps {e["first_used"]}..{e["last_used"]}')
        parts.append(f'<g><title>{escape(line)}</title><rect x="{x0:.1f}" y="{y0:.1f}" '
                     f'width="{max(x1 - x0, 1):.1f}" height="{max(y1 - y0, 1):.1f}" fill="{color}" '
                     f'fill-opacity="0.75" stroke="black" stroke-width="0.5"/>')
        label = _box_label(key, e, int((x1 - x0) / 6.5))
        if label and (y1 - y0) > 12:
            parts.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" '
                         f'text-anchor="middle" font-size="10">{escape(label)}</text>')
        parts.append("</g>")
        row_y = legend_top + LEGEND_ROW * (key + 1) - 3
        legend.append(f'<rect x="10" y="{row_y - 9}" width="10" height="10" fill="{color}" '
                      f'fill-opacity="0.75"/><text x="26" y="{row_y}">{escape(line)}</text>')
    parts += legend + ["</g>", "</svg>"]
    return "\n".join(parts)
