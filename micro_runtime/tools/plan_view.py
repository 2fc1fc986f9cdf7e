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
    """Where the head peaks: the allocation step at which the buffers live together
    reach furthest into the arena (their highest ``offset + size``; of several such
    steps, the one whose buffers fill most of it), that step's operator and those
    buffers (largest first). ``bytes``: that extent, which the head
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
    # among the steps that reach the peak, the one whose buffers fill most of it (the
    # step that explains the peak best; a buffer planned above a later one's place
    # reaches as high with a gap below it), the first on ties
    sizes = np.array([e["size"] for e in entries])
    filled = np.where(live, sizes[None, :], 0).sum(axis=1)
    at = int(np.argmax(np.where(extent == peak, filled, -1)))
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
             + ": the buffers live there"
             + (f", with {gap} bytes unused between them" if gap > 0 else
                f", {-gap} bytes of them shared (an offline plan's overlapping buffers)" if gap < 0
                else "")]
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


#: colours of the operator types that produce buffers (cycled past 12 types; the
#: legend names each type once), model inputs and scratch buffers
_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7",
            "#9c755f", "#e15759", "#8cd17d", "#86bcb6", "#d4a6c8"]
_INPUT_COLOUR, _SCRATCH_COLOUR, _OTHER_COLOUR = "#bab0ac", "#d9d9d9", "#e6e6e6"
#: the picture's size in pixels, whatever the number of buffers
SVG_WIDTH, SVG_HEIGHT = 1200, 720


def _short_name(entry: dict) -> str:
    """The last part of a tensor's name ('Conv2d_3_pointwise/Relu6' -> 'Relu6')."""
    if entry["kind"] == "scratch":
        return f"scratch of {entry['producer']}"
    return entry["name"].rstrip("/").split("/")[-1].split(";")[-1].split(":")[0] or entry["name"]


def _box_label(key: int, entry: dict, max_chars: int) -> str:
    """'3 Relu6' (the buffer's id and the name's last part) where it fits, else the id,
    else nothing."""
    full = f"{key} {_short_name(entry)}"
    if len(full) <= max_chars:
        return full
    return str(key) if len(str(key)) <= max_chars else ""


def _colour_key(entry: dict) -> str:
    """What a buffer's colour says: the type of the operator that produces it."""
    if entry["kind"] == "scratch":
        return "scratch"
    producer = entry["producer"]
    if producer.startswith("#"):
        return producer.split(" ", 1)[1]
    return "model input" if producer in ("model input", "subgraph input") else "other"


def svg_timeline(entries: List[dict], title: str, head_bytes: int) -> str:
    """An SVG picture of the plan, :data:`SVG_WIDTH` x :data:`SVG_HEIGHT` pixels whatever
    the number of buffers: allocation step on x, arena offset (bytes) on y, one bar per
    buffer coloured by the type of the operator that produces it (the legend names the
    types; model inputs and scratch buffers have their own colours). A bar is labelled
    with its id (the id of the text chart and of ``--json``'s ``buffers``, from 0) and
    its name's last part where they fit; every bar's hover title gives its id, full name,
    producer, bytes, offset and steps. The head peak is marked: its step is shaded, the
    buffers live there are outlined in red, a dashed line marks the head."""
    peak = head_peak(entries)
    width, height = SVG_WIDTH, SVG_HEIGHT
    left, right, top = 80, 20, 70
    kinds = list(dict.fromkeys(_colour_key(e) for e in entries))
    ops = [k for k in kinds if k not in ("model input", "scratch", "other")]
    colours = {k: _PALETTE[i % len(_PALETTE)] for i, k in enumerate(ops)}
    colours.update({"model input": _INPUT_COLOUR, "scratch": _SCRATCH_COLOUR, "other": _OTHER_COLOUR})
    legend_items = ops + [k for k in ("model input", "scratch", "other") if k in kinds] + ["at the peak"]
    longest = max(len(f"output of {k}") for k in legend_items)
    per_row = max(1, int((width - left - right) // (longest * 6.5 + 30)))
    legend_rows = -(-len(legend_items) // per_row)
    bottom = 50 + 18 * legend_rows
    max_time = max([e["last_used"] for e in entries] + [1])
    min_time = min([e["first_used"] for e in entries] + [0])
    span_t = max(max_time - min_time + 1, 1)
    span_y = max(head_bytes, max([e["offset"] + e["size"] for e in entries] + [1]))
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(t):
        return left + (t - min_time) * plot_w / span_t

    def y(off):
        return top + plot_h - off * plot_h / span_y

    where = ""
    if peak is not None:
        at = ("the model inputs" if peak["operator"] is None
              else f"operator #{peak['operator']} {peak['op'] or ''}".rstrip())
        where = (f"; head peak {peak['bytes']} bytes at step {peak['step']} ({at}), "
                 f"{len(peak['buffers'])} buffers live there (outlined in red)")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
             f'<text x="{left}" y="40" fill="#555">head {head_bytes} bytes, {len(entries)} buffers'
             f'{escape(where)}</text>',
             f'<text x="{left}" y="56" fill="#555">x: allocation step (step k runs operator #k-1; '
             '0 = model inputs), y: arena offset in bytes; hover a bar for its tensor</text>']
    if peak is not None:
        parts.append(f'<g class="peak"><title>{escape("head peak: step " + str(peak["step"]) + where)}</title>'
                     f'<rect x="{x(peak["step"]):.1f}" y="{top}" width="{max(x(peak["step"] + 1) - x(peak["step"]), 1):.1f}" '
                     f'height="{plot_h}" fill="#fde0dd"/></g>')
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
    live = set() if peak is None else {(b["offset"], b["size"], b["name"]) for b in peak["buffers"]}
    for key, e in enumerate(entries):
        x0, x1 = x(e["first_used"]), x(e["last_used"] + 1)
        y0, y1 = y(e["offset"] + e["size"]), y(e["offset"])
        at_peak = (e["offset"], e["size"], e["name"]) in live
        line = (f'buffer {key}: {e["name"]} (produced by {e["producer"]}), {e["bytes"]} bytes @ '
                f'{e["offset"]}, steps {e["first_used"]}..{e["last_used"]}'
                + ("; live at the head peak" if at_peak else ""))
        stroke = 'stroke="#d62728" stroke-width="2"' if at_peak else 'stroke="black" stroke-width="0.5"'
        parts.append(f'<g class="buffer"><title>{escape(line)}</title><rect x="{x0:.1f}" y="{y0:.1f}" '
                     f'width="{max(x1 - x0, 1):.1f}" height="{max(y1 - y0, 1):.1f}" '
                     f'fill="{colours[_colour_key(e)]}" fill-opacity="0.8" {stroke}/>')
        label = _box_label(key, e, int((x1 - x0) / 6.5))
        if label and (y1 - y0) > 12:
            parts.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" '
                         f'text-anchor="middle" font-size="10">{escape(label)}</text>')
        parts.append("</g>")
    if peak is not None:
        cx = (x(peak["step"]) + x(peak["step"] + 1)) / 2
        parts.append(f'<path class="peak-marker" d="M {cx - 5:.1f} {top - 9} L {cx + 5:.1f} {top - 9} '
                     f'L {cx:.1f} {top - 1} Z" fill="#d62728"/>')
    parts.append(f'<line x1="{left}" y1="{y(head_bytes):.1f}" x2="{left + plot_w}" y2="{y(head_bytes):.1f}" '
                 f'stroke="#d62728" stroke-dasharray="6 4"/>')
    parts.append(f'<text x="{left + plot_w - 4}" y="{y(head_bytes) - 4:.1f}" text-anchor="end" '
                 f'fill="#d62728">head {head_bytes}</text>')
    legend_top = top + plot_h + 34
    parts.append('<g class="legend">')
    for i, item in enumerate(legend_items):
        lx = left + (i % per_row) * (plot_w / per_row)  # columns wide enough for the longest
        ly = legend_top + 18 * (i // per_row)
        if item == "at the peak":
            swatch = f'fill="white" stroke="#d62728" stroke-width="2"'
            text = "live at the head peak"
        else:
            swatch = f'fill="{colours[item]}" fill-opacity="0.8" stroke="black" stroke-width="0.5"'
            text = item if item in ("model input", "scratch", "other") else f"output of {item}"
        parts.append(f'<rect x="{lx:.1f}" y="{ly - 10}" width="12" height="12" {swatch}/>'
                     f'<text x="{lx + 18:.1f}" y="{ly}">{escape(text)}</text>')
    parts += ["</g>", "</svg>"]
    return "\n".join(parts)
