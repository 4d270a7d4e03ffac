"""Build notebooks/*.ipynb from their sources in scripts/notebook_sources/*.py.

The sources use the "percent" format (as jupytext and VS Code do): a line ``# %%`` starts a code
cell, ``# %% [markdown]`` a markdown cell whose lines are comments (``# `` is stripped). Outputs
are never written: the committed notebooks are stripped and the reader runs them.

    python scripts/make_notebooks.py            # (re)write every notebook
    python scripts/make_notebooks.py --check    # exit 1 if a notebook differs from its source

Only the standard library is used, so tests can call ``build(source_text)``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = REPO / "scripts" / "notebook_sources"
NOTEBOOKS = REPO / "notebooks"

METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def split_cells(text: str) -> list[tuple[str, str]]:
    """Percent-format text -> [(cell_type, source), ...]; text before the first marker is dropped."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            kind = "markdown" if "[markdown]" in line else "code"
            cells.append((kind, []))
        elif cells:
            kind, lines = cells[-1]
            if kind == "markdown":
                line = line[2:] if line.startswith("# ") else line.lstrip("#")
            lines.append(line)
    out = []
    for kind, lines in cells:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            out.append((kind, "\n".join(lines)))
    return out


def build(text: str) -> dict:
    """Percent-format source -> an nbformat 4.5 notebook (a dict), without outputs."""
    cells = []
    for i, (kind, source) in enumerate(split_cells(text)):
        cell = {"cell_type": kind, "id": f"cell-{i:02d}", "metadata": {},
                "source": source.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}


def dumps(notebook: dict) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for source in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        target = NOTEBOOKS / (source.stem + ".ipynb")
        text = dumps(build(source.read_text(encoding="utf-8")))
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target.name)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    verb = "differ from their sources" if args.check else "written"
    print(f"{len(stale)} notebook(s) {verb}: {', '.join(stale) or '-'}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
