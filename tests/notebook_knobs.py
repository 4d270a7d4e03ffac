"""How the knob test turns a notebook's knobs: ``with_knobs(source, {"N_NEW": "3"})``.

A knob is a name a notebook's "Try this" cell tells the learner to change. The new value (Python
source text) is put on a line of its own right after the first top-level statement that binds the
name — ``N_NEW = 8``, ``N_TOY, D = 6, 4``, a multi-line dict, or an import — so everything after
it sees the new value, exactly as if the learner had edited that line.
"""
from __future__ import annotations

import ast


def binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name) == name for a in node.names)
    return False


def with_knobs(source: str, knobs: dict[str, str]) -> str:
    """``source`` with each knob set to its value after the knob's first top-level binding."""
    lines = source.splitlines()
    tree = ast.parse(source)
    after: dict[int, list[str]] = {}
    for name, value in knobs.items():
        node = next((n for n in tree.body if binds(n, name)), None)
        if node is None:
            raise ValueError(f"no top-level assignment of {name!r} to override")
        after.setdefault(node.end_lineno, []).append(f"{name} = {value}   # knob test")
    out = []
    for number, line in enumerate(lines, 1):
        out.append(line)
        out.extend(after.get(number, []))
    return "\n".join(out) + "\n"
