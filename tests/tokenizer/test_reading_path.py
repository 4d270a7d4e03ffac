"""The tokenizer's reading path stays short and free of speed code.

The reading path is what minillm/tokenizer/__init__.py and the README's "afternoon" name as such:
patterns.py -> bpe.py -> special.py -> tokenizer.py. Together they stay at most 340 lines (as
`wc -l` counts them, the Tokenizer's conveniences around encode and decode included: they live on
the class they read). They import only each other, checks.py (their input checks), budget.py (the
one time budget of a file's regexes per encode call), the standard library, numpy and regex, and
two named seams: fast/'s `FastEncoder` (`Tokenizer._encode_text`) and files.py's `TokenizerFiles`
(load, save, train).
"""
import ast
import sys
from pathlib import Path

import minillm.tokenizer

TOKENIZER_DIR = Path(minillm.tokenizer.__file__).parent
READING_PATH = ("patterns", "bpe", "special", "tokenizer")
MAX_LINES = 340
ALLOWED = {"minillm.tokenizer." + name for name in (*READING_PATH, "checks", "budget")}
SEAMS = {"minillm.tokenizer.fast.FastEncoder", "minillm.tokenizer.files.TokenizerFiles"}


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


def test_the_reading_path_is_at_most_340_lines():
    lines = {name: len((TOKENIZER_DIR / f"{name}.py").read_bytes().splitlines())
             for name in READING_PATH}
    assert sum(lines.values()) <= MAX_LINES, lines


def imports(name: str) -> set[str]:
    """Every module (and module.name) `name`.py imports, anywhere in it, made absolute."""
    tree = ast.parse((TOKENIZER_DIR / f"{name}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            base = f"minillm.tokenizer.{base}".rstrip(".") if node.level == 1 else base
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in ALLOWED | SEAMS
                      or base == "minillm.tokenizer" else base for a in node.names}
    return found


def test_the_reading_path_imports_only_itself_its_checks_and_two_seams():
    outside = {name: sorted(m for m in imports(name)
                            if m.startswith("minillm") and m not in ALLOWED | SEAMS)
               for name in READING_PATH}
    assert outside == {name: [] for name in READING_PATH}
    other = {m.split(".")[0] for name in READING_PATH for m in imports(name)} - {"minillm"}
    assert other <= set(sys.stdlib_module_names) | {"numpy", "regex"}, other


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
