"""The notebooks as files: valid nbformat 4, committed with the outputs of a run, generated from
their sources, and all listed in notebooks/README.md in reading order. (Running them is
tests/test_notebook_prose.py's job, in a kernel as nbmake runs them, which also checks their prose;
``python -m pytest --nbmake notebooks/NN_x.ipynb`` runs one alone.)"""
import ast
import importlib.util
import json
import re

import pytest

from tests.conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
SOURCES = REPO / "scripts" / "notebook_sources"


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_notebooks_in_reading_order():
    names = [p.name for p in NOTEBOOKS]
    assert names, "no notebooks found"
    assert all(re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", n) for n in names), names
    numbers = [int(n[:2]) for n in names]
    assert numbers == list(range(1, len(names) + 1)), f"notebooks must be numbered 01..NN: {names}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_nbformat_4_and_carries_the_outputs_of_one_whole_run(path):
    """A reader on GitHub sees every output: each code cell ran, in order, without an error
    (``python scripts/make_notebooks.py --execute NN`` writes them; tests/test_notebook_prose.py
    checks that a fresh run still shows them)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["name"] == "python3"
    assert set(nb["metadata"].get("minillm", {}).get("data_found", {})) == \
        {"smollm2", "deepseek_v4", "shared_data"}, \
        f"{path.name}: not executed by python scripts/make_notebooks.py --execute {path.name[:2]}"
    counts = []
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code")
        if cell["cell_type"] == "code":
            counts.append(cell["execution_count"])
            assert not [o for o in cell["outputs"] if o["output_type"] == "error"], \
                f"{path.name} {cell['id']}: the committed run failed here"
    assert counts == list(range(1, len(counts) + 1)), \
        f"{path.name}: cells not run once each, in order: {counts}"
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_matches_its_source(path):
    make = load_script("make_notebooks")
    source = SOURCES / (path.stem + ".py")
    assert source.exists(), f"{path.name} has no source {source}"
    committed = json.loads(path.read_text(encoding="utf-8"))
    assert make.dumps(make.build(source.read_text(encoding="utf-8"))) == \
        make.dumps(make.cells_only(committed)), \
        f"{path.name} differs from {source.name}: run python scripts/make_notebooks.py --execute {path.name[:2]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_uses_minillm(path):
    code = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                   if c["cell_type"] == "code")
    assert re.search(r"^from minillm[\w.]* import|^import minillm", code, re.M), path.name


def test_every_notebook_is_linked_from_the_readme_in_order():
    readme = (REPO / "notebooks" / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((\d\d_[a-z0-9_]+\.ipynb)\)", readme)
    assert links == [p.name for p in NOTEBOOKS]


def test_rebuilding_keeps_outputs_only_while_every_cell_is_unchanged():
    make = load_script("make_notebooks")
    built = make.build("# %%\nprint(1)\n# %% tags=[\"volatile\"]\nprint(2)\n")
    assert built["cells"][1]["metadata"] == {"tags": ["volatile"]}
    ran = json.loads(json.dumps(built))
    for number, cell in enumerate(ran["cells"], 1):
        cell.update(execution_count=number,
                    outputs=[{"output_type": "stream", "name": "stdout", "text": f"{number}\n"}])
    ran["metadata"]["minillm"] = {"data_found": {}}
    assert make.with_outputs(built, ran) == ran and make.cells_only(ran) == built
    changed = make.build("# %%\nprint(10)\n# %% tags=[\"volatile\"]\nprint(2)\n")
    assert make.with_outputs(changed, ran) == changed, "a changed cell drops the stale outputs"


# Every notebook is part of the course: it starts with "Try this" and ends with exercises checked
# by exercises.py.


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_first_cell_names_the_knobs_to_turn(path):
    first = "".join(cells(path)[0]["source"])
    assert "**Try this:**" in first, f"{path.name}: the first cell should say what to change and re-run"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_ends_with_at_least_two_checked_exercises(path):
    import sys
    sys.path.insert(0, str(REPO / "notebooks"))
    from exercises import NAMES
    code = ["".join(c["source"]) for c in cells(path) if c["cell_type"] == "code"]
    checked = re.findall(r'^check\("(\w+)", \w+\)$', "\n".join(code), re.M)
    assert len(set(checked)) >= 2 and set(checked) <= set(NAMES), f"{path.name}: {checked}"
    assert re.search(r'^check\("\w+", \w+\)$', code[-1], re.M), f"{path.name}: end with an exercise"


def test_the_articles_are_never_called_the_seed():
    pattern = re.compile(r"the seed|seed's|seed text", re.I)
    files = [*NOTEBOOKS, *SOURCES.glob("*.py"), REPO / "notebooks" / "README.md"]
    found = [f"{p.name}: {m.group(0)}" for p in files for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert not found, f"say 'the explainer articles' (named in notebooks/README.md): {found}"


def test_find_deepseek_v4_looks_in_the_download_cache_then_the_development_data(tmp_path, monkeypatch):
    import sys
    sys.path.insert(0, str(REPO / "notebooks"))
    import nbhelpers
    monkeypatch.setenv("MINILLM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MINILLM_SHARED_DATA", str(tmp_path / "data"))
    assert nbhelpers.find_deepseek_v4() is None
    shared = tmp_path / "data" / "tokenizers" / "deepseek_v4" / "tokenizer.json"
    shared.parent.mkdir(parents=True)
    shared.write_text("{}")
    assert nbhelpers.find_deepseek_v4() == shared
    downloaded = tmp_path / "home" / "models" / "deepseek-v4" / "tokenizer.json"
    downloaded.parent.mkdir(parents=True)
    downloaded.write_text("{}")
    assert nbhelpers.find_deepseek_v4() == downloaded
    assert "python -m minillm download deepseek-v4" == nbhelpers.DEEPSEEK_V4_COMMAND


@pytest.mark.parametrize("source", sorted(SOURCES.glob("[0-9][0-9]_*.py")), ids=lambda p: p.name)
def test_every_assert_in_a_notebook_says_what_went_wrong(source):
    """A learner who turns a knob and meets an AssertionError reads its message: every assert
    carries one (what was expected, what came out, what to try)."""
    bare = [n.lineno for n in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
            if isinstance(n, ast.Assert) and n.msg is None]
    assert not bare, f"{source.name}: assert without a message at line(s) {bare}"


def test_min_times_interleaves_the_calls_and_keeps_every_key():
    import sys
    sys.path.insert(0, str(REPO / "notebooks"))
    from nbhelpers import min_times
    calls = []
    times = min_times({"a": lambda: calls.append("a"), ("b", 2): lambda: calls.append("b")}, repeats=3)
    assert calls == ["a", "b"] * 4, "one warm-up round, then one call of each per round"
    assert set(times) == {"a", ("b", 2)} and all(0 <= t < float("inf") for t in times.values())


# a cell's last bare expression is displayed: a claim(...) there would print its True under the ✓
# (every notebook: assign it, ``_ = claim(...)``, or end the cell with something else)
QUIET_ENDS = sorted(p.stem for p in SOURCES.glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("name", QUIET_ENDS)
def test_no_cell_ends_with_a_checked_claim_that_would_display_its_value(name):
    text = (SOURCES / f"{name}.py").read_text(encoding="utf-8")
    loud = []
    for number, cell in enumerate(re.split(r"^# %%.*$", text, flags=re.M)[1:]):
        body = ast.parse(cell).body if not cell.lstrip().startswith("# [markdown]") else []
        last = body[-1] if body else None
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
                and getattr(last.value.func, "id", "") == "claim":
            loud.append(number)
    assert not loud, f"{name}: cells {loud} end with claim(...), which Jupyter would show as True"
