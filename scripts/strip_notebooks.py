"""Strip outputs from notebooks, in place: the committed notebooks carry no outputs.

    python scripts/strip_notebooks.py                 # every notebooks/*.ipynb
    python scripts/strip_notebooks.py path.ipynb ...  # the given ones

Clears each code cell's outputs and execution count and drops per-cell execution metadata, so
that running a notebook in Jupyter and saving it leaves no trace in the diff. (The notebooks
themselves are generated from scripts/notebook_sources/ by scripts/make_notebooks.py, which
writes them stripped; tests/test_notebooks_meta.py checks both.)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def strip(notebook: dict) -> dict:
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
    return notebook


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        original = path.read_text(encoding="utf-8")
        stripped = json.dumps(strip(json.loads(original)), indent=1, ensure_ascii=False) + "\n"
        if stripped != original:
            path.write_text(stripped, encoding="utf-8")
            print(f"stripped {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
