"""No import cycles among micro-runtime's packages: the import graph of micro_runtime/,
recording/, arena/ and kernels/, read statically (every ``import`` statement, module- or
function-level), has no cycle. Layers import downwards only: kernels and arena at the
bottom, the interpreter on them, recording and the tools on the interpreter.

What counts as an edge: ``import a.b`` and ``from a.b import c`` import ``a.b`` and the
packages above it (their ``__init__`` runs), and ``a.b.c`` too when it is a module. A
module naming a package it lives in is not an edge (that package is already being
imported when the module runs). Imports made by name at run time
(``importlib.import_module``) are not seen.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("micro_runtime", "recording", "arena", "kernels")

#: cycles allowed, each with the reason (none today)
ALLOWED: Dict[frozenset, str] = {}


def project_modules(root: str, packages=PACKAGES) -> Dict[str, Tuple[str, bool]]:
    """Dotted module name -> (file, is a package's __init__)."""
    mods = {}
    for top in packages:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    dotted = os.path.relpath(os.path.join(d, f), root)[:-3].replace(os.sep, ".")
                    is_pkg = dotted.endswith(".__init__")
                    mods[dotted[:-len(".__init__")] if is_pkg else dotted] = (os.path.join(d, f), is_pkg)
    return mods


def _targets(module: str, is_pkg: bool, node, mods) -> List[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.split(".") if is_pkg else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        pkg = ".".join(base + ([node.module] if node.module else []))
    else:
        pkg = node.module
    return [pkg] + [f"{pkg}.{a.name}" for a in node.names if f"{pkg}.{a.name}" in mods]


def import_graph(root: str, packages=PACKAGES) -> Dict[str, Dict[str, int]]:
    """module -> {imported project module: line of the first such import}."""
    mods = project_modules(root, packages)
    graph: Dict[str, Dict[str, int]] = {}
    for module, (path, is_pkg) in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        edges: Dict[str, int] = {}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(module, is_pkg, node, mods):
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    dep = ".".join(parts[:i])
                    if dep in mods and dep != module and not (mods[dep][1] and module.startswith(dep + ".")):
                        edges.setdefault(dep, node.lineno)
        graph[module] = edges
    return graph


def cycles(graph: Dict[str, Dict[str, int]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph, component) -> str:
    members = set(component)
    return "\n".join(f"  {m} imports " + ", ".join(f"{d} (line {ln})" for d, ln in sorted(graph[m].items())
                                                   if d in members)
                     for m in component)


def test_the_walker_finds_function_level_and_package_cycles(tmp_path):
    pkg = tmp_path / "kernels"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g()\n")
    (pkg / "b.py").write_text("from kernels.sub.c import h\n\ndef g():\n    return h()\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("import kernels.a\n\ndef h():\n    return 1\n")
    (pkg / "d.py").write_text("from . import a\n")          # a package importing downwards only
    graph = import_graph(str(tmp_path), ("kernels",))
    assert graph["kernels.a"] == {"kernels.b": 2}
    assert graph["kernels.b"] == {"kernels.sub": 1, "kernels.sub.c": 1}
    assert cycles(graph) == [["kernels.a", "kernels.b", "kernels.sub.c"]]


def test_no_import_cycles():
    graph = import_graph(ROOT)
    assert {"micro_runtime.interpreter", "recording.interpreter", "arena.recording",
            "kernels.internal.float_math"} <= set(graph)
    bad = [c for c in cycles(graph) if frozenset(c) not in ALLOWED]
    assert not bad, "import cycles:\n" + "\n".join(_describe(graph, c) for c in bad)
