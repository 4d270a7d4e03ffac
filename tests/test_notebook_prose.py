"""Prose and output stay together, and the committed outputs stay true.

Every notebook (every source in scripts/notebook_sources, so a new one is covered at once) is
committed with the outputs of a run, so that a reader on GitHub sees them. Two checks:

- every number in its markdown — outside the explainer articles' quoted lines (``>``), indented
  code blocks and `inline code` — appears in what its committed cells show (printed text and
  displayed values, not figures) or in the notebook's code, or is in ``STATED`` with the reason it
  is no measurement; numbers compared as written, thousands separators (`,` / `_`) ignored. So a
  sentence cannot keep a figure the code no longer produces;
- a fresh run in a Jupyter kernel, as nbmake runs it, with its default knobs (with SmolLM2 and the
  DeepSeek-V4 tokenizer when present, without them otherwise), shows the committed outputs, as
  scripts/notebook_outputs.py compares them (timings and cells needing absent files aside).

The run is the notebook's test too: a cell that fails fails it, with the cell's traceback. So
where a session also collects nbmake's run of the same notebook (``pytest --nbmake``), that item
is deselected (``pytest_collection_modifyitems`` in tests/conftest.py): each notebook runs once.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_notebooks_meta import load_script

OUTPUTS = load_script("notebook_outputs")

SOURCES = REPO / "scripts" / "notebook_sources"
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
# a notebook named by its number ("notebook 05", "notebooks 03 and 05") and a title ("# 14 · ...")
REFERENCE = re.compile(r"\b[Nn]otebooks? \d\d(?:(?:, | and | or |–)\d\d)*|^# \d\d · ")

# numbers that are facts or conventions, not results of the notebook's code
STATED = {
    "01_tokens": {"256": "the number of byte values", "129": "DeepSeek-V4's vocabulary, ~129K (printed when present)"},
    "02_embeddings": {"48572": "the articles' id for 海水 (computed in notebook 01)",
                      "10000": "Llama 2's RoPE theta"},
    "03_attention": {"2017": "the year of the Transformer paper",
                     "1000": "an example input", "999": "an example input", "998": "an example input"},
    "04_autoregressive": {},
    "05_kv_cache": {},
    "06_sampling": {},
    "11_thinking_is_tokens": {"2024": "the year of OpenAI's o1 announcement, Learning to reason with LLMs"},
    "13_formulas": {"0.044715": "the constant of GELU's tanh approximation"},
    "14_build_it": {"135": "the model's name, SmolLM2-135M", "257": "an example id (the second merge)"},
    "15_finetune": {"135": "SmolLM2-135M's size, in its name", "100": "the download's size, about 100 MB",
                    "199": "the last conversation's index (a knob's range)",
                    "576": "SmolLM2's width (printed as ΔW's shape when SmolLM2 is present)"},
    "16_model_families": {"3.1": "a model's name, Llama 3.1", "3.2": "a model's name, Llama 3.2"},
    "17_structured_output": {"2023": "the year of Willard & Louf's paper on the vocabulary index"},
    "18_look_inside": {"2020": "the year of nostalgebraist's post on the logit lens",
                       "2022": "the year of Olsson et al.'s paper on induction heads",
                       "135": "the model's name, SmolLM2-135M"},
}
NAMES = sorted(path.stem for path in SOURCES.glob("[0-9][0-9]_*.py"))


def plain(number: str) -> str:
    return number.replace(",", "").replace("_", "")


def prose_numbers(source: str) -> list[tuple[str, str]]:
    """(number, line) for every number in the markdown cells' prose."""
    split_cells = load_script("make_notebooks").split_cells
    found = []
    for kind, text in split_cells(source):
        if kind != "markdown":
            continue
        for line in text.splitlines():
            if line.startswith(">") or line.startswith("    "):
                continue
            for match in NUMBER.finditer(REFERENCE.sub("", re.sub(r"`[^`]*`", "", line))):
                found.append((plain(match.group(0).rstrip(",")), line.strip()))
    return found


def test_prose_numbers_are_found_in_text():
    source = ("# %% [markdown]\n# # 14 · Title\n# > 19 tokens\n# We measure 3.5 and 1,024 `x = 7`.\n#\n"
              "#     code 8\n# As notebooks 03 and 05 show, 2e-7.\n")
    assert prose_numbers(source) == [("3.5", "We measure 3.5 and 1,024 `x = 7`."),
                                     ("1024", "We measure 3.5 and 1,024 `x = 7`."),
                                     ("2e-7", "As notebooks 03 and 05 show, 2e-7.")]


def test_every_notebook_source_is_checked():
    assert {"01_tokens", "14_build_it"} <= set(NAMES), NAMES
    assert set(STATED) <= set(NAMES), f"STATED names notebooks that do not exist: {set(STATED) - set(NAMES)}"


def run_notebook(path: Path, timeout: int = 300) -> str:
    """Run the notebook as nbmake does (a Jupyter kernel started in the notebook's folder, each
    cell within ``timeout`` seconds) -> the text its cells show: what they print (stdout) and the
    values they display, but not a figure's placeholder text ("<Figure size 640x480 ...>"). A
    cell that raises fails the calling test with its traceback."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    notebook = nbformat.read(path, as_version=4)
    try:
        NotebookClient(notebook, timeout=timeout).execute(cwd=str(path.parent))
    except CellExecutionError as error:
        pytest.fail(f"{path.name}: a cell failed\n{error}", pytrace=False)
    shown = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream" and output.name == "stdout":
                shown.append(output.text)
            elif output.output_type in ("execute_result", "display_data") and \
                    not any(kind.startswith("image/") for kind in output.data):
                shown.append(output.data.get("text/plain", ""))
    return "".join(shown)


def unprinted(source: str, shown: str, stated=()) -> list[tuple[str, str]]:
    """(number, line) for each number of the prose that is neither in ``shown`` (the cells'
    output), nor in the code, nor ``stated``."""
    split_cells = load_script("make_notebooks").split_cells
    code = plain("\n".join(text for kind, text in split_cells(source) if kind == "code"))
    printed = plain(shown)
    return sorted({(number, line) for number, line in prose_numbers(source)
                   if number not in printed and number not in code and number not in stated})


def committed(name: str) -> dict:
    return json.loads((REPO / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_every_number_in_the_prose_is_printed_or_in_the_code(name):
    """Checked on the committed outputs, which are what a reader sees (and which the next test
    keeps equal to a fresh run's)."""
    source = (SOURCES / f"{name}.py").read_text(encoding="utf-8")
    shown = "".join(OUTPUTS.shown(cell) for cell in committed(name)["cells"] if cell["cell_type"] == "code")
    missing = unprinted(source, shown, STATED.get(name, {}))
    assert not missing, f"{name}: numbers in the text that no cell prints:\n" + \
        "\n".join(f"  {number}: {line}" for number, line in missing)


@pytest.mark.parametrize("name", NAMES)
def test_a_fresh_run_shows_the_committed_outputs(name, request):
    """The notebook runs, as nbmake runs it, and shows what is committed: the same text (numbers
    within one unit of their last digit), the same number of figures; machine-dependent cells
    (tagged ``volatile``) are not compared, nor cells that need optional files this machine has
    not (scripts/notebook_outputs.py says how)."""
    from nbclient.exceptions import CellExecutionError
    notebook = committed(name)
    try:
        fresh = OUTPUTS.run(notebook, REPO / "notebooks",
                            timeout=request.config.getoption("nbmake_timeout", default=300))
    except CellExecutionError as error:
        pytest.fail(f"{name}: a cell failed\n{error}", pytrace=False)
    found = OUTPUTS.differences(notebook, fresh, OUTPUTS.data_found())
    assert not found, f"{name}: a fresh run shows other outputs than the committed ones " \
        f"(python scripts/make_notebooks.py --execute {name[:2]} if the change is meant):\n" + "\n".join(found)


def notebook_of(source: str, folder: Path) -> Path:
    """Write the notebook that scripts/make_notebooks.py builds from ``source`` into ``folder``."""
    make = load_script("make_notebooks")
    path = folder / "00_example.ipynb"
    path.write_text(make.dumps(make.build(source)), encoding="utf-8")
    return path


def test_a_number_no_cell_prints_is_reported_and_a_shown_one_is_not(tmp_path):
    line = "The loss falls to 2.75 in 41 steps, 6 at a time; the figure is 700 pixels wide."
    source = (f"# %% [markdown]\n# {line}\n"
              "# %%\nimport matplotlib.pyplot as plt\nprint(f'loss {11 / 4}')\n"
              "plt.figure(figsize=(7, 3), dpi=100); plt.plot([1, 2]); plt.show()\n"
              "# %%\n40 + 1\n")
    shown = run_notebook(notebook_of(source, tmp_path))
    assert "loss 2.75" in shown and "41" in shown, shown           # printed, and displayed
    # 6: nowhere; 700: only in the figure's placeholder text, which the reader does not see
    assert unprinted(source, shown) == [("6", line), ("700", line)], shown


def test_a_cell_that_fails_fails_the_check_with_its_traceback(tmp_path):
    path = notebook_of("# %%\nprint(1)\n# %%\nraise ValueError('the knob is out of range')\n", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="the knob is out of range"):
        run_notebook(path)


def test_nbmake_runs_only_the_notebooks_the_prose_check_does_not_run():
    """``pytest --nbmake``: a notebook whose prose check is collected runs once, in that check."""
    check = "tests/test_notebook_prose.py::test_a_fresh_run_shows_the_committed_outputs"
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "--nbmake", "notebooks/01_tokens.ipynb", "notebooks/02_embeddings.ipynb",
                           f"{check}[01_tokens]"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected == ["notebooks/02_embeddings.ipynb::02_embeddings.ipynb", f"{check}[01_tokens]"], \
        done.stdout
