"""Pictures of a memory plan: TFLM-style ASCII chart and an SVG timeline."""
from __future__ import annotations

from html import escape
from typing import List

from arena.planners import BufferRequest, memory_plan_chart


def plan_entries(interpreter) -> List[dict]:
    """The committed plan of an allocated interpreter: one dict per planned buffer
    with ``name``, ``kind`` ("tensor"/"scratch"), ``index``, ``subgraph``, ``offset``,
    ``size`` (bytes given to the planner), ``bytes`` (requested), ``first_used``,
    ``last_used`` (allocation scopes) and ``offline``."""
    out = []
    model = interpreter.model
    reqs = interpreter.allocator.scratch_requests
    for pb in interpreter.allocator.plan:
        if pb.kind == "tensor":
            spec = model.subgraphs[pb.subgraph].tensors[pb.index]
            name = spec.name or f"tensor {pb.index}"
        else:
            req = reqs[pb.index]
            op = model.subgraphs[req.subgraph_idx].operators[req.node_idx]
            name = f"scratch of #{op.index} {op.name}"
        out.append({"name": name, "kind": pb.kind, "index": pb.index, "subgraph": pb.subgraph,
                    "offset": pb.offset, "size": pb.size, "bytes": pb.bytes,
                    "first_used": pb.first_used, "last_used": pb.last_used, "offline": pb.offline})
    return out


def ascii_chart(entries: List[dict], width: int = 80) -> List[str]:
    """TFLM's PrintMemoryPlan layout for the plan entries."""
    buffers = [BufferRequest(e["size"], e["first_used"], e["last_used"]) for e in entries]
    return memory_plan_chart(buffers, [e["offset"] for e in entries], width)


_PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#bab0ac"]


def _short_label(entry: dict, max_chars: int) -> str:
    """'#12 Relu6' (tensor index and the last part of its name), shortened to fit."""
    if entry["kind"] == "scratch":
        full = f"scratch {entry['index']}"
    else:
        tail = entry["name"].rstrip("/").split("/")[-1].split(":")[0]
        full = f"#{entry['index']} {tail}"
    if len(full) <= max_chars:
        return full
    short = full.split(" ")[0]
    return short if len(short) <= max_chars else ""


def svg_timeline(entries: List[dict], title: str, head_bytes: int) -> str:
    """An SVG picture: allocation step on x, arena offset (bytes) on y, one labelled box
    per buffer. Opens in any browser."""
    left, top, right, bottom = 80, 50, 20, 60
    width, height = 1000, 640
    max_time = max([e["last_used"] for e in entries] + [1])
    min_time = min([e["first_used"] for e in entries] + [0])
    span_t = max(max_time - min_time + 1, 1)
    span_y = max(head_bytes, max([e["offset"] + e["size"] for e in entries] + [1]))
    plot_w, plot_h = width - left - right, height - top - bottom

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
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 14}" text-anchor="middle">'
                 'allocation step (step k runs operator #k-1; 0 = model inputs)</text>')
    for i, e in enumerate(entries):
        x0, x1 = x(e["first_used"]), x(e["last_used"] + 1)
        y0, y1 = y(e["offset"] + e["size"]), y(e["offset"])
        color = "#999999" if e["kind"] == "scratch" else _PALETTE[i % len(_PALETTE)]
        tip = (f'{e["name"]}: {e["bytes"]} bytes at offset {e["offset"]}, steps '
               f'{e["first_used"]}..{e["last_used"]}')
        parts.append(f'<g><title>{escape(tip)}</title><rect x="{x0:.1f}" y="{y0:.1f}" '
                     f'width="{max(x1 - x0, 1):.1f}" height="{max(y1 - y0, 1):.1f}" fill="{color}" '
                     f'fill-opacity="0.75" stroke="black" stroke-width="0.5"/>')
        label = _short_label(e, int((x1 - x0) / 6.5))
        if label and (y1 - y0) > 12:
            parts.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" '
                         f'text-anchor="middle" font-size="10">{escape(label)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)
