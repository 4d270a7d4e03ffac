"""The tokenizer's reading path stays short and free of speed code.

The reading path is what minillm/tokenizer/__init__.py and the README's "afternoon" name as such:
patterns.py -> bpe.py -> special.py -> tokenizer.py. Together they stay at most 300 lines (as
`wc -l` counts them), and none of them imports from fast/ except tokenizer.py's one seam,
`FastEncoder` (`Tokenizer._encode_text`).
"""
import ast
from pathlib import Path

import minillm.tokenizer

TOKENIZER_DIR = Path(minillm.tokenizer.__file__).parent
READING_PATH = ("patterns", "bpe", "special", "tokenizer")
MAX_LINES = 300


def reading_path_paragraph() -> str:
    doc = minillm.tokenizer.__doc__
    return doc[doc.index("The reading path"):doc.index("\n\n", doc.index("The reading path"))]


def test_the_docstring_and_the_readme_name_the_same_reading_path():
    paragraph = " ".join(reading_path_paragraph().split())
    assert "patterns (" in paragraph and "-> bpe" in paragraph and "-> special (" in paragraph
    assert "-> tokenizer (" in paragraph
    readme = (TOKENIZER_DIR.parents[1] / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| tokens |"))
    assert all(f"/tokenizer/{name}.py`" in row for name in READING_PATH), row   # the afternoon's


def test_the_reading_path_is_at_most_300_lines():
    lines = {name: len((TOKENIZER_DIR / f"{name}.py").read_bytes().splitlines())
             for name in READING_PATH}
    assert sum(lines.values()) <= MAX_LINES, lines


def imports_from_fast(name: str) -> list[str]:
    """The names `name`.py imports from minillm.tokenizer.fast (relative or absolute)."""
    tree = ast.parse((TOKENIZER_DIR / f"{name}.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if (node.level == 1 and module.split(".")[0] == "fast") or \
                    module.startswith("minillm.tokenizer.fast") or \
                    (node.level == 1 and not module and any(a.name == "fast" for a in node.names)):
                found += [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("minillm.tokenizer.fast")]
    return found


def test_the_reading_path_imports_nothing_from_fast_but_the_seam():
    assert {name: imports_from_fast(name) for name in READING_PATH} == {
        "patterns": [], "bpe": [], "special": [], "tokenizer": ["fast.FastEncoder"]}
