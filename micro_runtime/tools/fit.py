"""``micro-runtime fit`` and ``micro-runtime boards``: does a model, with TFLM, fit a
board's RAM and flash, and by how much.

RAM = the tensor arena (exact, for the MicroInterpreter a firmware declares) + the
TFLM objects a firmware declares outside it (the MicroInterpreter object and a
MicroMutableOpResolver<N> with N = the model's distinct operators; the interpreter
places its MicroAllocator in the arena) + TFLM's own .data / .bss + the stack
high-water mark of AllocateTensors() and Invoke().

Flash = the model (a 16-byte aligned array) + TFLM's code and read-only data for
exactly the model's operators on the target's build + the C library / compiler
runtime code those operators add. The TFLM parts are predicted from per-build tables
derived from linked firmware (:mod:`micro_runtime.fit_tables`).
"""
from __future__ import annotations

import os
from html import escape
from typing import Dict, List, Optional, Sequence, Tuple

from ..boards import BOARDS, Board, board_record, boards_table, get_board, target_available
from ..errors import InputError
from ..fit_tables import available_builds, load_table, model_node_keys, object_sizes
from ..targets import DEFAULT_TARGET, canonical_target_name, get_target

#: keys of ``fit --json`` (nested keys of "ram" and "flash" in RAM_KEYS / FLASH_KEYS)
FIT_KEYS = ("model", "target", "board", "interpreter", "build", "ram", "flash", "fits",
            "complete", "suggestions", "notes")
RAM_KEYS = ("capacity_bytes", "largest_block_bytes", "arena_bytes", "interpreter_object_bytes",
            "op_resolver_bytes", "op_resolver_ops", "tflm_static_bytes", "runtime_library_static_bytes",
            "stack_bytes", "total_bytes", "margin_bytes", "fits")
FLASH_KEYS = ("capacity_bytes", "model_bytes", "model_file_bytes", "tflm_code_bytes",
              "tflm_base_bytes", "runtime_library_bytes", "operators", "shared_operator_bytes",
              "total_bytes", "margin_bytes", "fits")


def model_operators(model) -> List[str]:
    """The model's distinct operator names over all subgraphs, in first-use order:
    what a firmware registers in its MicroMutableOpResolver."""
    seen: List[str] = []
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name not in seen:
                seen.append(op.name)
    return seen


def _round16(n: int) -> int:
    return (n + 15) // 16 * 16


def _capacity(board: Optional[Board], target: Optional[str], ram: Optional[int],
              flash: Optional[int]) -> Tuple[Optional[Board], str, int, int, Optional[int]]:
    """(board, target name, RAM bytes, flash bytes, largest RAM block) from the options."""
    if board is not None:
        if target is None and not target_available(board):
            raise InputError(
                f"board {board.id} maps to target {board.target}, which this version of "
                "micro-runtime does not have yet; give a stand-in with --target mcu32 "
                f"(a generic 32-bit build), e.g. --target mcu32 --ram {board.ram_bytes} "
                f"--flash {board.flash_bytes}")
        name = get_target(target or board.target).name
        return (board, name, ram if ram is not None else board.ram_bytes,
                flash if flash is not None else board.flash_bytes,
                board.largest_ram_block_bytes if ram is None else None)
    if ram is None or flash is None:
        raise InputError("give --board NAME, or --ram BYTES and --flash BYTES "
                         "(with --target T; micro-runtime boards lists the boards)")
    return None, get_target(target or DEFAULT_TARGET).name, ram, flash, None


def fit_report(model_path: str, board: Optional[str] = None, target: Optional[str] = None,
               ram: Optional[int] = None, flash: Optional[int] = None,
               model_name: Optional[str] = None, suggest: bool = True) -> dict:
    """The ``fit --json`` record of a model on a board (or a target with RAM / flash
    sizes in bytes). ``fits`` is False when a known part already exceeds the board;
    ``complete`` is False when a part could not be predicted for the target's build
    (no table, or an operator without an entry), and the totals then omit it."""
    from ..model import load_model
    from .sizing import measure_arena
    for name, value in (("--ram", ram), ("--flash", flash)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise InputError(f"{name} must be a positive number of bytes, not {value!r}")
    board_obj = get_board(board) if board is not None else None
    board_obj, target_name, ram_cap, flash_cap, block = _capacity(board_obj, target, ram, flash)
    model = load_model(model_path)
    ops = model_operators(model)
    arena = measure_arena(model, target_name, recording=False).min_arena_bytes
    table = load_table(target_name)
    notes: List[str] = []
    complete = True
    if table is None:
        complete = False
        notes.append(f"no recorded TFLM firmware build for target {target_name} (builds with "
                     f"tables: {', '.join(available_builds()) or 'none'}): TFLM's code, static RAM "
                     "and stack are not predicted" + ("" if object_sizes(target_name) else ", nor its objects"))
        core = target_name.split("+")[0]
        siblings = [b for b in available_builds() if b.split("+")[0] == core and b != target_name]
        if siblings:
            notes.append("the same core with another kernel library has tables: "
                         + ", ".join(f"--target {b}" for b in siblings)
                         + " (its code and stack differ from this build's)")
        pred = None
    else:
        pred = table.predict(ops, model_node_keys(model))
        if pred.unknown_ops:
            complete = False
            notes.append(f"operators without table entries on {target_name}: "
                         f"{', '.join(pred.unknown_ops)} (their code is not counted)")
        if pred.stack_bytes is None:
            complete = False
            notes.append("stack not predicted: " + (
                "the table has no stack figures" if not table.stack else
                "operators without stack figures: " + ", ".join(pred.stack_parts.get("missing_ops", []))))
    n_ops = len(ops)
    objects = object_sizes(target_name)
    interpreter_bytes = pred.interpreter_bytes if pred else (objects or {}).get("MicroInterpreter")
    resolver_bytes = pred.resolver_bytes if pred else (
        objects["resolver_base"] + objects["resolver_per_op"] * max(1, n_ops) if objects else None)
    ram_parts = {
        "arena_bytes": arena,
        "interpreter_object_bytes": interpreter_bytes,
        "op_resolver_bytes": resolver_bytes,
        "op_resolver_ops": n_ops,
        "tflm_static_bytes": pred.tflm_static_ram_bytes if pred else None,
        "runtime_library_static_bytes": pred.runtime_library_ram_bytes if pred else None,
        "stack_bytes": pred.stack_bytes if pred else None,
    }
    ram_total = sum(v for k, v in ram_parts.items() if k.endswith("_bytes") and v is not None)
    ram_fits = ram_total <= ram_cap and (block is None or arena <= block)
    model_bytes = _round16(len(model.raw))
    flash_parts = {
        "model_bytes": model_bytes,
        "model_file_bytes": len(model.raw),
        "tflm_code_bytes": pred.tflm_flash_bytes if pred else None,
        "tflm_base_bytes": pred.base_flash_bytes if pred else None,
        "runtime_library_bytes": pred.runtime_library_flash_bytes if pred else None,
    }
    flash_total = model_bytes + sum(flash_parts[k] or 0 for k in ("tflm_code_bytes", "runtime_library_bytes"))
    operators = []
    if pred:
        operators = sorted(({"op": op, "own_bytes": b} for op, b in pred.op_own_flash_bytes.items()),
                           key=lambda e: -e["own_bytes"])
    record = {
        "model": model_name or os.path.basename(model_path),
        "target": target_name,
        "board": board_obj.id if board_obj else None,
        "interpreter": "MicroInterpreter",
        "build": None if table is None else {"name": table.build, "build_type": table.build_type,
                                             "about": table.about},
        "ram": {"capacity_bytes": ram_cap, "largest_block_bytes": block, **ram_parts,
                "total_bytes": ram_total, "margin_bytes": ram_cap - ram_total, "fits": ram_fits},
        "flash": {"capacity_bytes": flash_cap, **flash_parts, "operators": operators,
                  "shared_operator_bytes": pred.shared_flash_bytes if pred else None,
                  "total_bytes": flash_total, "margin_bytes": flash_cap - flash_total,
                  "fits": flash_total <= flash_cap},
    }
    record["fits"] = bool(record["ram"]["fits"] and record["flash"]["fits"])
    record["complete"] = complete
    record["suggestions"] = _suggestions(record, model_path, board_obj) if suggest and not record["fits"] else []
    if block is not None and arena > block:
        notes.append(f"the arena ({arena} bytes) is larger than the board's largest contiguous "
                     f"RAM block ({block} bytes)")
    if board_obj is not None and board_obj.external_ram_bytes and not ram_fits:
        notes.append(f"the board has {board_obj.external_ram_bytes} bytes of external RAM; an arena "
                     "placed there (slower) is not counted against on-chip RAM")
    record["notes"] = notes
    return {k: record[k] for k in FIT_KEYS}


def _suggestions(record: dict, model_path: str, board: Optional[Board]) -> List[str]:
    """What to change when the model does not fit."""
    out: List[str] = []
    ram, flash = record["ram"], record["flash"]
    if not ram["fits"]:
        over = -ram["margin_bytes"]
        out.append(f"RAM is {max(over, 0)} bytes short; the arena is {ram['arena_bytes']} of "
                   f"{ram['total_bytes']} bytes: `micro-runtime optimize {os.path.basename(model_path)} "
                   f"--target {record['target']} -o smaller.tflite` (offline memory plan, "
                   "--reorder, --patches) can shrink it")
    if not flash["fits"]:
        over = -flash["margin_bytes"]
        text = f"flash is {over} bytes short; the model takes {flash['model_bytes']} bytes"
        if flash["tflm_code_bytes"] is not None:
            text += f", TFLM {flash['tflm_code_bytes']}"
        if flash["operators"]:
            largest = ", ".join(f"{e['op']} {e['own_bytes']}" for e in flash["operators"][:3])
            text += f"; the operators with the most code of their own: {largest} bytes"
        out.append(text)
    boards = _boards_that_fit(model_path, record, board)
    if boards:
        out.append("boards it fits: " + ", ".join(boards))
    return out


def _boards_that_fit(model_path: str, record: dict, current: Optional[Board], limit: int = 4) -> List[str]:
    """Catalogue boards (with a target that has tables) the model fits, smallest RAM first."""
    found = []
    per_target: Dict[str, dict] = {}
    builds = set(available_builds())
    for b in sorted(BOARDS, key=lambda b: (b.ram_bytes, b.flash_bytes)):
        if current is not None and b.id == current.id:
            continue
        name = canonical_target_name(b.target)
        if name not in builds or not target_available(b):
            continue
        if name not in per_target:
            per_target[name] = fit_report(model_path, target=name, ram=1, flash=1, suggest=False)
        r = per_target[name]
        block_ok = b.largest_ram_block_bytes is None or r["ram"]["arena_bytes"] <= b.largest_ram_block_bytes
        if r["ram"]["total_bytes"] <= b.ram_bytes and block_ok and r["flash"]["total_bytes"] <= b.flash_bytes:
            found.append(b.id)
        if len(found) >= limit:
            break
    return found


# --------------------------------------------------------------------- text
def _kb(n: Optional[int]) -> str:
    return "-" if n is None else f"{n / 1024:.1f} KB"


def format_fit(rec: dict) -> List[str]:
    """The text report of a ``fit`` record."""
    ram, flash = rec["ram"], rec["flash"]
    where = f"board {rec['board']}, " if rec["board"] else ""
    lines = [f"{rec['model']} on {where}target {rec['target']} ({rec['interpreter']})"]

    def line(label, n, extra=""):
        value = "not predicted" if n is None else f"{n:>10,} bytes"
        return f"  {label:<48}{value}{extra}"

    def head(name, part):
        cap = part["capacity_bytes"]
        pct = 100.0 * part["total_bytes"] / cap if cap else 0.0
        status = "fits" if part["fits"] else "DOES NOT FIT"
        return (f"{name:<6}{part['total_bytes']:>10,} of {cap:,} bytes ({pct:.0f} %), "
                f"margin {part['margin_bytes']:,} bytes: {status}")

    lines.append(head("RAM", ram))
    lines.append(line("tensor arena (exact, MicroInterpreter)", ram["arena_bytes"]))
    lines.append(line("MicroInterpreter object", ram["interpreter_object_bytes"]))
    lines.append(line(f"MicroMutableOpResolver<{ram['op_resolver_ops']}>", ram["op_resolver_bytes"]))
    lines.append(line("TFLM .data + .bss", ram["tflm_static_bytes"]))
    if ram["runtime_library_static_bytes"]:
        lines.append(line("C library .data + .bss for the operators", ram["runtime_library_static_bytes"]))
    lines.append(line("stack (AllocateTensors + Invoke)", ram["stack_bytes"]))
    lines.append(head("Flash", flash))
    lines.append(line("model (16-byte aligned array)", flash["model_bytes"]))
    lines.append(line(f"TFLM code + read-only data ({len(flash['operators']) or ram['op_resolver_ops']} operators)",
                      flash["tflm_code_bytes"]))
    lines.append(line("C library / compiler runtime for the operators", flash["runtime_library_bytes"]))
    if flash["operators"]:
        lines.append("  TFLM code: framework " + f"{flash['tflm_base_bytes']:,}" + ", each operator's own: "
                     + ", ".join(f"{e['op']} {e['own_bytes']:,}" for e in flash["operators"])
                     + f", shared by several {flash['shared_operator_bytes']:,} bytes")
    verdict = "fits" if rec["fits"] else "does NOT fit"
    lines.append(f"{verdict}" + ("" if rec["complete"] else " (on the parts that could be predicted)"))
    for s in rec["suggestions"]:
        lines.append(f"  - {s}")
    for n in rec["notes"]:
        lines.append(f"note: {n}")
    if rec["build"]:
        lines.append(f"TFLM figures: build {rec['build']['name']} ({rec['build']['build_type']} build type)")
    return lines


# ---------------------------------------------------------------------- svg
_COLOURS = {"arena": "#4e79a7", "objects": "#f28e2b", "static": "#e15759", "stack": "#76b7b2",
            "model": "#59a14f", "tflm": "#edc948", "runtime": "#b07aa1"}


def fit_svg(rec: dict) -> str:
    """Two stacked bars, RAM and flash, each against the board's capacity."""
    width, left, bar_w, bar_h = 900, 90, 760, 46
    ram, flash = rec["ram"], rec["flash"]
    bars = [
        ("RAM", ram, [("arena", "tensor arena", ram["arena_bytes"]),
                      ("objects", "interpreter + resolver",
                       (ram["interpreter_object_bytes"] or 0) + (ram["op_resolver_bytes"] or 0)),
                      ("static", "TFLM .data/.bss",
                       (ram["tflm_static_bytes"] or 0) + (ram["runtime_library_static_bytes"] or 0)),
                      ("stack", "stack", ram["stack_bytes"] or 0)]),
        ("Flash", flash, [("model", "model", flash["model_bytes"]),
                          ("tflm", "TFLM code", flash["tflm_code_bytes"] or 0),
                          ("runtime", "C runtime", flash["runtime_library_bytes"] or 0)]),
    ]
    title = f"{rec['model']} on {rec['board'] or 'target ' + rec['target']}"
    height = 70 + len(bars) * 110
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="20" y="26" font-size="16" font-weight="bold">{escape(title)}</text>',
             f'<text x="20" y="46" fill="#555">{escape(rec["target"])}, {escape(rec["interpreter"])}; '
             f'{"fits" if rec["fits"] else "does not fit"}</text>']
    for k, (name, part, segs) in enumerate(bars):
        y = 70 + k * 110
        cap = part["capacity_bytes"]
        scale = bar_w / max(cap, part["total_bytes"], 1)
        parts.append(f'<text x="20" y="{y + bar_h / 2 + 4}" font-weight="bold">{name}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{cap * scale:.1f}" height="{bar_h}" '
                     'fill="#f3f3f3" stroke="#333"/>')
        x = left
        legend_x = left
        for key, label, n in segs:
            w = n * scale
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                             f'fill="{_COLOURS[key]}"><title>{escape(label)}: {n} bytes</title></rect>')
            x += w
            parts.append(f'<rect x="{legend_x}" y="{y + bar_h + 10}" width="10" height="10" fill="{_COLOURS[key]}"/>')
            text = f"{label} {n:,}"
            parts.append(f'<text x="{legend_x + 14}" y="{y + bar_h + 19}">{escape(text)}</text>')
            legend_x += 16 + 7 * len(text) + 14
        colour = "#2a7a2a" if part["fits"] else "#c0392b"
        parts.append(f'<line x1="{left + cap * scale:.1f}" y1="{y - 6}" x2="{left + cap * scale:.1f}" '
                     f'y2="{y + bar_h + 6}" stroke="#000" stroke-width="2"/>')
        parts.append(f'<text x="{left}" y="{y - 8}" fill="{colour}">{part["total_bytes"]:,} of '
                     f'{cap:,} bytes, margin {part["margin_bytes"]:,}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------- CLI
def cmd_fit(args) -> int:
    import json
    from .model_paths import model_name as _model_name, resolve_model_path
    from .output_paths import check_output_path, reads_of
    svg_path = check_output_path(args.svg, "--svg", "fit.svg", reads_of(args.model)) if args.svg else None
    if args.board is None and args.target is None and (args.ram is None or args.flash is None):
        raise InputError("give --board NAME (micro-runtime boards lists them), or --target T "
                         "--ram BYTES --flash BYTES")
    rec = fit_report(resolve_model_path(args.model), board=args.board, target=args.target,
                     ram=args.ram, flash=args.flash, model_name=_model_name(args.model))
    if svg_path:
        with open(svg_path, "w") as f:
            f.write(fit_svg(rec))
    if args.json:
        print(json.dumps(rec, indent=2))
    else:
        print("\n".join(format_fit(rec) + ([f"SVG written to {args.svg}"] if args.svg else [])))
    return 0 if rec["fits"] else 1


def cmd_boards(args) -> int:
    import json
    if args.json:
        print(json.dumps([board_record(b) for b in BOARDS], indent=2))
    else:
        print("\n".join(boards_table()))
    return 0


def _bytes_arg(text: str) -> int:
    """BYTES, or with a K / M suffix (1024 / 1048576)."""
    import argparse
    t = text.strip().upper().rstrip("B")
    mult = 1
    if t.endswith("K"):
        mult, t = 1024, t[:-1]
    elif t.endswith("M"):
        mult, t = 1024 * 1024, t[:-1]
    try:
        value = int(t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (e.g. 262144, 256K, 1M)")
    return value


def add_parsers(sub, target_help: str) -> None:
    """Register ``fit`` and ``boards`` on the CLI's subparsers."""
    p = sub.add_parser("fit", help="does the model, with TFLM, fit a board: RAM (arena, TFLM objects, "
                                   "static data, stack) and flash (model, TFLM code for its operators)")
    p.add_argument("model", help="path of a .tflite model, or bundled:NAME (bundled:person_detect)")
    p.add_argument("--board", metavar="NAME", help="a board of the catalogue (micro-runtime boards)")
    p.add_argument("--target", default=None, metavar="T",
                   help="the TFLM build (default: the board's, else cortex-m4+cmsis-nn); " + target_help)
    p.add_argument("--ram", type=_bytes_arg, metavar="BYTES",
                   help="RAM available (bytes, or with K / M); overrides the board's")
    p.add_argument("--flash", type=_bytes_arg, metavar="BYTES",
                   help="flash available (bytes, or with K / M); overrides the board's")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--svg", metavar="FILE", help="write two stacked bars (RAM, flash) against the board")
    p.set_defaults(func=cmd_fit, interpreter="micro")

    p = sub.add_parser("boards", help="the board catalogue: core, clock, RAM, flash, target profile, sources")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=cmd_boards, interpreter="micro", target=None)
