"""No import cycles inside minillm: every module can be read (and loaded) after the ones it uses.

The graph is built from the source with ``ast``, not by importing: EVERY import statement counts,
at module level or inside a function (a lazy import hides a cycle from Python, not from a reader).

    import a.b.c              -> a.b.c
    from a.b import c         -> a.b.c when c is a module, else a.b (the package's __init__)
    from . import c           -> resolved against the importing module's package, then as above

A package is the module of its ``__init__.py``, so it imports what its ``__init__`` imports.
subtle: ``import a.b.c`` also runs a/__init__ and a/b/__init__; those parent edges are left out,
or ``minillm/__init__.py`` (which re-exports everything) would close a cycle with every module.
"""
import ast
from pathlib import Path

import minillm

ROOT = Path(minillm.__file__).resolve().parent          # minillm/


def all_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> source file, for every module of the package at ``root``."""
    def name(path):
        parts = path.relative_to(root.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return {name(p): p for p in sorted(root.rglob("*.py"))}


def imported(name: str, path: Path, modules) -> set[str]:
    """The ``modules`` that module ``name`` (its source at ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                                 # from . / from ..x: up level - 1 packages
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    # ``import a.b.c`` of something that is not a module of ours (a name, an outside package)
    # is reduced to the deepest module of ours it names
    edges = set()
    for target in found:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    modules = all_modules(root)
    return {name: imported(name, path, modules) for name, path in modules.items()}


def knots(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that import each other, directly or not (Tarjan's strongly
    connected components with more than one module)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:                 # v is the first of its component: pop it whole
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def shortest_cycle(graph, knot: set[str]) -> list[str]:
    """A shortest closed path through the knot's first module (breadth-first)."""
    start = min(knot)
    paths, frontier = {start: [start]}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & knot):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("every module of a knot lies on a cycle")


def assert_no_knots(graph):
    """Fails listing one cycle per knot, and the knot's modules (fixing that cycle may leave
    another in the same knot)."""
    found = knots(graph)
    assert not found, "import cycles:\n" + "\n".join(
        " -> ".join(shortest_cycle(graph, k)) + f"   (knot: {', '.join(sorted(k))})" for k in found)


def test_minillm_has_no_import_cycles():
    assert_no_knots(import_graph())


def test_the_walk_sees_every_kind_of_import(tmp_path):
    """The graph builder on a made-up package: lazy, relative and submodule imports all count."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import f\n",
        "a.py": "def f():\n    from . import b\n",              # lazy, relative, a submodule
        "b.py": "import pkg.sub.c\n",
        "sub/__init__.py": "",
        "sub/c.py": "from .. import a\n",                      # two levels up: a cycle a-b-c
        "d.py": "from pkg.sub import nothing_here\nfrom pkg import sub\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    graph = import_graph(pkg)
    assert graph["pkg"] == {"pkg.a"}
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.sub"}
    assert knots(graph) == [{"pkg.a", "pkg.b", "pkg.sub.c"}]
    assert knots({"x": {"y"}, "y": set()}) == []                  # a chain is no knot
    assert shortest_cycle(graph, knots(graph)[0]) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]


def test_the_library_never_imports_its_command_line():
    """The CLI is built on the library, never the reverse: no module outside minillm/cli/
    imports minillm.cli (at module level or inside a function)."""
    graph = import_graph()
    outside = {name: sorted(t for t in targets if t == "minillm.cli" or t.startswith("minillm.cli."))
               for name, targets in graph.items()
               if name != "minillm.cli" and not name.startswith("minillm.cli.")
               and name != "minillm.__main__"}
    assert not {name: t for name, t in outside.items() if t}, outside
