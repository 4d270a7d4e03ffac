"""Prose and output stay together: a number written in a notebook's text is one its cells print
(or one its code states), so a sentence cannot keep a figure the code no longer produces.

Every notebook (every source in scripts/notebook_sources, so a new one is covered at once) runs
as a script with its default knobs (with SmolLM2 and the DeepSeek-V4 tokenizer when present,
without them otherwise); every number in its markdown — outside the
explainer articles' quoted lines (``>``), indented code blocks and `inline code` — must appear in
the printed output or in the notebook's code, or be in ``STATED`` with the reason it is no
measurement. Numbers are compared as written, thousands separators (`,` / `_`) ignored.
"""
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.test_notebooks_meta import load_script

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
    "13_formulas": {"0.044715": "the constant of GELU's tanh approximation"},
    "14_build_it": {"135": "the model's name, SmolLM2-135M", "257": "an example id (the second merge)"},
    "15_finetune": {"135": "SmolLM2-135M's size, in its name", "100": "the download's size, about 100 MB",
                    "199": "the last conversation's index (a knob's range)",
                    "576": "SmolLM2's width (printed as ΔW's shape when SmolLM2 is present)"},
    "16_model_families": {"3.1": "a model's name, Llama 3.1", "3.2": "a model's name, Llama 3.2"},
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


@pytest.mark.parametrize("name", NAMES)
def test_every_number_in_the_prose_is_printed_or_in_the_code(name, tmp_path):
    source = (SOURCES / f"{name}.py").read_text(encoding="utf-8")
    split_cells = load_script("make_notebooks").split_cells
    code = plain("\n".join(text for kind, text in split_cells(source) if kind == "code"))
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO / "notebooks")}
    done = subprocess.run([sys.executable, str(SOURCES / f"{name}.py")], cwd=REPO / "notebooks", env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = plain(done.stdout)
    missing = sorted({(number, line) for number, line in prose_numbers(source)
                      if number not in printed and number not in code and number not in STATED.get(name, {})})
    assert not missing, f"{name}: numbers in the text that no cell prints:\n" + \
        "\n".join(f"  {number}: {line}" for number, line in missing)
