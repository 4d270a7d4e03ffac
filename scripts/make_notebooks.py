"""Build notebooks/*.ipynb from their sources in scripts/notebook_sources/*.py.

The sources use the "percent" format (as jupytext and VS Code do): a line ``# %%`` starts a code
cell, ``# %% [markdown]`` a markdown cell whose lines are comments (``# `` is stripped);
``# %% tags=["volatile"]`` tags a code cell whose output depends on the machine (a timing, a rate),
which is then never compared.

The committed notebooks carry their outputs, so that a reader on GitHub sees them:

    python scripts/make_notebooks.py --execute          # build and run every notebook, keep outputs
    python scripts/make_notebooks.py --execute 06 12    # only these (by number or name)
    python scripts/make_notebooks.py                    # rebuild cells from sources, keep outputs
    python scripts/make_notebooks.py --check            # exit 1 if a notebook's cells differ from its source

``--execute`` runs each notebook with the optional files (SmolLM2, the DeepSeek-V4 tokenizer,
the development corpora) when they are here, and a notebook that looks for them a second time
without them: a code cell whose output changes is marked ``needs_data``, which the output check
(tests/test_notebook_prose.py, with scripts/notebook_outputs.py) compares only on a machine that
has the same files. Figures are stored as 256-colour PNG.

Building uses only the standard library, so tests can call ``build(source_text)``; executing
needs the ``[notebooks]`` extra (nbclient, a kernel, matplotlib).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = REPO / "scripts" / "notebook_sources"
NOTEBOOKS = REPO / "notebooks"

METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


TAGS = re.compile(r'tags=\[([^\]]*)\]')


def tagged_cells(text: str) -> list[tuple[str, str, list[str]]]:
    """Percent-format text -> [(cell_type, source, tags), ...]; text before the first marker is dropped."""
    cells: list[tuple[str, list[str], list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            kind = "markdown" if "[markdown]" in line else "code"
            found = TAGS.search(line)
            tags = re.findall(r'"([^"]+)"', found.group(1)) if found else []
            cells.append((kind, [], tags))
        elif cells:
            kind, lines, _ = cells[-1]
            if kind == "markdown":
                line = line[2:] if line.startswith("# ") else line.lstrip("#")
            lines.append(line)
    out = []
    for kind, lines, tags in cells:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            out.append((kind, "\n".join(lines), tags))
    return out


def split_cells(text: str) -> list[tuple[str, str]]:
    """Percent-format text -> [(cell_type, source), ...]."""
    return [(kind, source) for kind, source, _ in tagged_cells(text)]


def build(text: str) -> dict:
    """Percent-format source -> an nbformat 4.5 notebook (a dict), without outputs."""
    cells = []
    for i, (kind, source, tags) in enumerate(tagged_cells(text)):
        cell = {"cell_type": kind, "id": f"cell-{i:02d}", "metadata": {"tags": tags} if tags else {},
                "source": source.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}


def cells_only(notebook: dict) -> dict:
    """``notebook`` without what running it adds (outputs, counts, marks): what ``build`` makes."""
    cells = []
    for cell in notebook["cells"]:
        cell = {**cell, "metadata": {k: v for k, v in cell.get("metadata", {}).items() if k == "tags"}}
        if cell["cell_type"] == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {**notebook, "cells": cells, "metadata": METADATA}


def with_outputs(built: dict, executed: dict | None) -> dict:
    """The cells of ``built`` carrying the outputs of ``executed`` (the same cells, run), if any."""
    if executed is None or [c["source"] for c in cells_only(executed)["cells"]] != \
            [c["source"] for c in built["cells"]]:
        return built
    cells = [{**new, **{k: old[k] for k in ("outputs", "execution_count") if k in old},
              "metadata": {**new["metadata"], **{k: v for k, v in old.get("metadata", {}).items()
                                                 if k == "minillm"}}}
             for new, old in zip(built["cells"], executed["cells"])]
    return {**built, "cells": cells, "metadata": {**built["metadata"], **{
        k: v for k, v in executed.get("metadata", {}).items() if k == "minillm"}}}


def execute(built: dict) -> dict:
    """Run ``built`` (with the optional files, and without them if it looks for any) -> the
    notebook with its outputs, each cell whose output depends on those files marked."""
    outputs = load_outputs()
    found = outputs.data_found()
    ran = outputs.run(built, NOTEBOOKS)
    source = "".join("".join(c["source"]) for c in built["cells"])
    if any(found.values()) and OPTIONAL.search(source):
        bare = outputs.run(built, NOTEBOOKS, data=False)
        for cell, other in zip(ran["cells"], bare["cells"]):
            if cell["cell_type"] == "code" and (outputs.shown(cell) != outputs.shown(other)
                                                or outputs.figures(cell) != outputs.figures(other)):
                cell["metadata"]["minillm"] = {"needs_data": True}
    for cell in ran["cells"]:
        cell.get("metadata", {}).pop("execution", None)
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                output["data"]["image/png"] = small_png(output["data"]["image/png"])
    ran["metadata"]["minillm"] = {"data_found": found}
    return ran


def small_png(encoded: str) -> str:
    """A figure re-encoded as a 256-colour PNG (a colour map has 256 entries anyway): about a third
    of matplotlib's size, so that committed outputs keep the repository lean."""
    import base64
    import io
    from PIL import Image                     # matplotlib's own dependency
    image = Image.open(io.BytesIO(base64.b64decode(encoded))).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(256, method=Image.Quantize.MEDIANCUT).save(buffer, "PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode("ascii") + "\n"


OPTIONAL = re.compile(r"find_smollm2|load_pretrained|find_deepseek_v4|load_deepseek_v4|shared_text|shared_data")


def load_outputs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("notebook_outputs", REPO / "scripts" / "notebook_outputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dumps(notebook: dict) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    parser.add_argument("--execute", nargs="*", metavar="NN", default=None,
                        help="run these notebooks (numbers or names; none: all) and store their outputs")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks run at once (with --execute)")
    args = parser.parse_args(argv)
    sources = sorted(SOURCES.glob("[0-9][0-9]_*.py"))
    chosen = [] if args.execute is None else [s for s in sources if not args.execute or any(
        s.stem == name or s.stem.startswith(f"{name}_") for name in args.execute)]
    with concurrent.futures.ProcessPoolExecutor(max(1, args.jobs)) as pool:
        runs = {s.stem: pool.submit(execute, build(s.read_text(encoding="utf-8"))) for s in chosen}
        stale = []
        for source in sources:
            stale += write(source, runs.get(source.stem), args.check)
    verb = "differ from their sources" if args.check else "written"
    print(f"{len(stale)} notebook(s) {verb}: {', '.join(stale) or '-'}")
    return 1 if (args.check and stale) else 0


def write(source: Path, run, check: bool) -> list[str]:
    """Rebuild ``source``'s notebook (with the outputs of ``run``, a future, if given) -> [its name]
    if it changed (or, with ``check``, if its cells differ from the source's)."""
    target = NOTEBOOKS / (source.stem + ".ipynb")
    built = build(source.read_text(encoding="utf-8"))
    old = json.loads(target.read_text(encoding="utf-8")) if target.exists() else None
    if check:
        return [target.name] if old is None or dumps(cells_only(old)) != dumps(built) else []
    if run is not None:
        text = dumps(with_outputs(built, run.result()))
        print(f"ran {target.name}", flush=True)
    else:
        text = dumps(with_outputs(built, old))
    if old is not None and target.read_text(encoding="utf-8") == text:
        return []
    target.write_text(text, encoding="utf-8")
    return [target.name]


if __name__ == "__main__":
    sys.exit(main())
