"""Derive a build's fit tables (micro_runtime/data/fit/<build>.json) from the runner's
outputs: the single-operator links (sections each operator adds to a firmware with
none), the compile-time object sizes, and the FIT_PROBE runs (per-kernel stack) of the
derivation models. No model's own figures go into the tables: flash comes from
single-operator links only, stack from the probe runs of the derivation models.

    python benchmarks/fit_firmware/make_tables.py --build cortex-m4+cmsis-nn \
        --singles singles.json --sizes sizes.json --probe probe.json \
        --records records.json --about "..." --out micro_runtime/data/fit/cortex-m4+cmsis-nn.json
"""
from __future__ import annotations

import argparse  # noqa: I001
import json
import os
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

PHASES = ("init", "prepare", "invoke")
#: bytes by which a firmware's mark may exceed the kernel call explaining it
MARK_SLACK = 8
DATA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data")


def section_key(s: dict) -> Tuple[str, str, str, str]:
    return (s["lib"], s["member"], s["name"], s["kind"])


def build_sections(singles: dict, merge: Dict[Tuple[str, str], List[int]] = None
                   ) -> Tuple[List[list], List[int], Dict[str, List[int]]]:
    """Section table (id -> [lib, kind, size, "member:name"] and, for TFLM's merged
    string sections, a fifth element: the ids of its strings in the string pool), base
    ids, per-op ids.
    A section kept under the same key with different sizes in different links (merged
    string sections) is recorded with its largest size."""
    ids: Dict[tuple, int] = {}
    table: List[list] = []

    def ident(s: dict) -> int:
        key = section_key(s)
        if key not in ids:
            ids[key] = len(table)
            row = [s["lib"], s["kind"], s["size"], f"{s['member']}:{s['name']}"]
            if merge and s["lib"] == "tflm" and (s["member"], s["name"]) in merge:
                row.append(merge[(s["member"], s["name"])])
            table.append(row)
        else:
            row = table[ids[key]]
            row[2] = max(row[2], s["size"])
        return ids[key]

    def idset(sections: List[dict]) -> List[int]:
        seen = defaultdict(int)
        out = []
        for s in sections:
            if s["lib"] in ("firmware", "startup"):
                continue
            # the same key twice in one link (several .text of one member): number them
            key = section_key(s)
            seen[key] += 1
            if seen[key] > 1:
                s = dict(s, name=f"{s['name']}#{seen[key]}")
            out.append(ident(s))
        return out

    base = sorted(set(idset(singles["base"]["sections"])))
    ops = {}
    for name, entry in sorted(singles["ops"].items()):
        if "sections" not in entry:
            continue
        ops[name] = sorted(set(idset(entry["sections"])) - set(base))
    return table, base, ops


def frames_of(frames: Dict[str, int]) -> Dict[str, int]:
    """Frame sizes of the probe's measuring functions and wrappers (-fstack-usage)."""
    out = {"status": None, "init": None, "wrap_status": 0, "wrap_init": 0}
    for fn, size in frames.items():
        if "MeasureStatus" in fn:
            out["status"] = size
        elif "MeasureInit" in fn:
            out["init"] = size
        elif "WrapInit" in fn:
            out["wrap_init"] = max(out["wrap_init"], size)
        elif "WrapPrepare" in fn or "WrapInvoke" in fn:
            out["wrap_status"] = max(out["wrap_status"], size)
    return out


def _node_keys(key: str) -> Dict[str, List[str]]:
    """op -> path keys of its nodes in call order (subgraph by subgraph)."""
    from micro_runtime.fit_tables import model_node_keys
    from micro_runtime.model import load_model
    out: Dict[str, List[str]] = defaultdict(list)
    for op, k in model_node_keys(load_model(os.path.join(DATA, key))):
        out[op].append(k)
    return out


def probe_calls(probe: dict, models: List[str]) -> List[dict]:
    """Per-call kernel stack from the probe runs: op name, phase, usage (kernel's own
    bytes), depth (bytes below the caller of AllocateTensors / Invoke at which TFLM
    calls the kernel)."""
    calls = []
    for key in models:
        entry = probe.get(key)
        if not entry or "run" not in entry or entry["run"].get("status") != "ok":
            continue
        ops = entry["ops"]
        f = frames_of(entry["frames"])
        keys = _node_keys(key)
        for c in entry["run"]["probe"]:
            if c["phase"] == "init":
                depth = c["below"] - f["init"] - f["wrap_init"]
            else:
                depth = c["below"] - f["status"] - f["wrap_status"]
            op = ops[c["op"]]
            node_key = keys[op][c["call"]] if c["call"] < len(keys[op]) else None
            calls.append({"model": key, "op": op, "phase": c["phase"], "usage": c["usage"],
                          "depth": depth, "key": node_key})
    return calls


def stack_tables(probe: dict, records: dict, derivation: List[str]) -> dict:
    """Per-op kernel stack (max over the derivation calls), call depths (the top-level
    subgraph's: the most frequent depth per phase), and the framework's own marks: the
    plain firmware's AllocateTensors / Invoke marks of derivation models where no
    kernel call explains them."""
    calls = probe_calls(probe, derivation)
    per_op: Dict[str, Dict[str, int]] = defaultdict(dict)
    per_node: Dict[str, Dict[str, Dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    depths: Dict[str, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for c in calls:
        per_op[c["op"]][c["phase"]] = max(per_op[c["op"]].get(c["phase"], 0), c["usage"])
        if c["key"] is not None:
            slot = per_node[c["op"]][c["phase"]]
            slot[c["key"]] = max(slot.get(c["key"], 0), c["usage"])
        depths[c["phase"]][c["depth"]] += 1
    depth = {ph: max(d.items(), key=lambda kv: kv[1])[0] for ph, d in depths.items()}
    alloc_fw = invoke_fw = 0
    by_model = defaultdict(list)
    for c in calls:
        by_model[c["model"]].append(c)
    for key in derivation:
        rec = records.get(key)
        if not rec or rec.get("run", {}).get("status") != "ok" or key not in by_model:
            continue
        kernel_alloc = max([depth[c["phase"]] + c["usage"] for c in by_model[key] if c["phase"] != "invoke"],
                           default=0)
        kernel_invoke = max([depth["invoke"] + c["usage"] for c in by_model[key] if c["phase"] == "invoke"],
                            default=0)
        # a mark within MARK_SLACK bytes of a kernel call's is that call (the plain and
        # the probe firmware can differ by a stack slot)
        if rec["run"]["alloc_stack"] > kernel_alloc + MARK_SLACK:
            alloc_fw = max(alloc_fw, rec["run"]["alloc_stack"])
        if rec["run"]["invoke_stack"] > kernel_invoke + MARK_SLACK:
            invoke_fw = max(invoke_fw, rec["run"]["invoke_stack"])
    return {"depth": depth, "alloc_framework": alloc_fw, "invoke_framework": invoke_fw,
            "ops": {op: dict(sorted(v.items())) for op, v in sorted(per_op.items())},
            "nodes": {op: {ph: dict(sorted(k.items())) for ph, k in sorted(v.items())}
                      for op, v in sorted(per_node.items())},
            "derived_from": sorted(derivation), "calls": len(calls)}


RUNTIME_LIBS = ("libc", "libm", "libgcc", "libstdc++")
FLASH_KINDS = ("text", "rodata", "data", "exidx")


def _lib_flash(summary: dict) -> int:
    return sum(summary["by_library"].get(lib, {}).get(k, 0) for lib in RUNTIME_LIBS for k in FLASH_KINDS)


def figures(records: dict, base_summary: dict) -> dict:
    """Per-model recorded figures from the runner's records: what the linked image kept
    and what QEMU measured."""
    out = {}
    base_lib = _lib_flash(base_summary)
    for model, rec in sorted(records.items()):
        if "error" in rec:
            out[model] = {"error": rec["error"]}
            continue
        run = rec["run"]
        entry = {
            "ops": rec["ops"],
            "tflm_flash_bytes": rec["flash"]["tflm_flash_bytes"],
            "tflm_static_ram_bytes": rec["flash"]["tflm_static_ram_bytes"],
            "runtime_library_flash_bytes": _lib_flash(rec["flash"]) - base_lib,
            "by_library": rec["flash"]["by_library"],
            "interpreter_bytes": rec["symbols"].get("main::interpreter"),
            "resolver_bytes": rec["symbols"].get("(anonymous namespace)::resolver"),
            "arena_bytes": rec["arena_bytes"],
        }
        if run.get("status") == "ok":
            entry.update(alloc_stack_bytes=run["alloc_stack"], invoke_stack_bytes=run["invoke_stack"],
                         stack_bytes=max(run["alloc_stack"], run["invoke_stack"]))
        else:
            entry["run_status"] = run.get("status")
        if "run_arena_bytes" in rec:       # it faulted at arena_bytes (fit_runner --fault-pad)
            entry["run_arena_bytes"] = rec["run_arena_bytes"]
            entry["at_arena"] = rec["at_arena"].get("fault") or rec["at_arena"].get("status")
        if "run_one_less" in rec:
            entry["arena_check"] = {"at_arena": run.get("status"), "one_byte_less": rec["run_one_less"]}
        out[model] = entry
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--build-type", default="default")
    p.add_argument("--singles", required=True)
    p.add_argument("--sizes", required=True)
    p.add_argument("--lib", required=True, help="the build's libtensorflow-microlite.a (merged strings)")
    p.add_argument("--probe")
    p.add_argument("--records")
    p.add_argument("--derivation", help="file listing the derivation models (one per line)")
    p.add_argument("--about", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--figures-out", help="also merge the build's recorded per-model figures into this JSON")
    p.add_argument("--figures-about", help="the figures file's about (when creating it)")
    args = p.parse_args(argv)
    singles = json.load(open(args.singles))
    sizes = json.load(open(args.sizes))
    from elf_strings import string_pool
    pool, merge = string_pool(args.lib)
    table, base, ops = build_sections(singles, merge)
    used = sorted({i for row in table if len(row) > 4 for i in row[4]})
    # keep the pool small: only strings some kept section holds (and their supers)
    keep = set(used)
    for i in used:
        keep.update(pool[i][1])
    order = sorted(keep)
    renum = {old: new for new, old in enumerate(order)}
    strings = [[pool[i][0], [renum[j] for j in pool[i][1] if j in renum]] for i in order]
    for row in table:
        if len(row) > 4:
            row[4] = [renum[i] for i in row[4]]
    data = {"build": args.build, "build_type": args.build_type, "about": args.about,
            "objects": {"MicroInterpreter": sizes["MicroInterpreter.sizeof"],
                        "resolver_base": sizes["resolver_base"],
                        "resolver_per_op": sizes["resolver_per_op"]},
            "sections": table, "strings": strings, "base": base, "ops": ops}
    if args.probe and args.records and args.derivation:
        derivation = [line.strip() for line in open(args.derivation) if line.strip()]
        data["stack"] = stack_tables(json.load(open(args.probe)), json.load(open(args.records)), derivation)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    if args.figures_out and args.records:
        fig = {"about": args.figures_about or "", "builds": {}}
        if os.path.exists(args.figures_out):
            fig = json.load(open(args.figures_out))
        models = {k: v for k, v in json.load(open(args.records)).items() if not k.startswith("cmsis_nn_cases/")}
        for k in models:
            if "_lut_metadata" in k and "error" not in models[k]:
                # run with an arena from another record (--arena-from): TFLM ignored the
                # metadata, so the figures are not the compressed model's
                models[k] = {"error": "the model has LUT-compressed tensors (COMPRESSION_METADATA); "
                             "this build has no USE_TFLM_COMPRESSION"}
        fig["builds"][args.build] = {"build_type": args.build_type, "about": args.about,
                                     "models": figures(models, singles["base"]["summary"])}
        with open(args.figures_out, "w") as f:
            json.dump(fig, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"{args.out}: {len(table)} sections, base {len(base)}, {len(ops)} operators"
          + (f", stack from {data['stack']['calls']} kernel calls" if "stack" in data else ""))


if __name__ == "__main__":
    main()
