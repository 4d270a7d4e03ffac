"""The afternoon: the files a reader goes through first (the README's "The afternoon" table)
stay short, free of speed code, and show each definition before any faster form.

AFTERNOON is the one list; the README's table must name exactly these files. Together they stay
at most 2,500 lines (``wc -l``: docstrings and comments included), and none imports — at module
or function level, absolute or relative — from the engine, the tokenizer's speed-ups (except the
tokenizer class's one seam, ``FastEncoder``), the file formats or the server. The tokenizer's own
part of the afternoon has its tighter rule in tests/tokenizer/test_reading_path.py.
"""
import ast
import re
from pathlib import Path

import pytest

import minillm

ROOT = Path(minillm.__file__).parent
AFTERNOON = (
    "tokenizer/patterns.py", "tokenizer/bpe.py", "tokenizer/special.py", "tokenizer/tokenizer.py",
    "functional.py",
    "model/__init__.py", "model/embedding.py", "model/norm.py", "model/linear.py",
    "model/attention.py", "model/rope.py", "model/ffn.py", "model/block.py", "model/gpt.py",
    "model/params.py", "model/init.py",
    "kv_cache.py",
    "sampling/temperature.py", "sampling/top_k.py", "sampling/top_p.py", "sampling/min_p.py",
    "sampling/greedy.py", "sampling/categorical.py",
    "decoding/generate.py", "decoding/steps.py", "decoding/beam.py",
)
MAX_LINES = 2500
FORBIDDEN = ("minillm.engine", "minillm.tokenizer.fast", "minillm.io", "minillm.decoding.serving")
SEAMS = {"tokenizer/tokenizer.py": {"minillm.tokenizer.fast.FastEncoder"}}
# Definition first, faster forms after: (file, functions in the order they must be defined).
DEFINITION_FIRST = [
    ("sampling/top_k.py", ("top_k_sorted", "top_k", "top_k_ids", "candidates")),
    ("model/rope.py", ("apply_rope", "rope_angles")),
    ("model/attention.py", ("attend_per_head", "scaled_dot_product", "attention")),
    ("model/norm.py", ("layer_norm", "rms_norm", "norm")),
    ("model/ffn.py", ("gelu_tanh", "silu", "gelu_mlp", "swiglu")),
]


def module_name(relative: str) -> str:
    return "minillm." + relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported_names(relative: str) -> set[str]:
    """Every module (and module.name) the file imports, anywhere in it, made absolute."""
    path = ROOT / relative
    package = module_name(relative) if path.name == "__init__.py" else \
        module_name(relative).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found |= {base} | {f"{base}.{a.name}" for a in node.names}
    return found


def test_the_readme_table_names_exactly_the_afternoon():
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("### The afternoon")
    section = readme[start:readme.index("### Beyond", start)]
    named = set(re.findall(r"`minillm/([\w/]+\.py)`", section))
    assert named == set(AFTERNOON)


def test_the_afternoon_is_at_most_2500_lines():
    lines = {name: len((ROOT / name).read_bytes().splitlines()) for name in AFTERNOON}
    assert sum(lines.values()) <= MAX_LINES, lines


@pytest.mark.parametrize("relative", AFTERNOON)
def test_the_afternoon_imports_no_speed_code_files_or_server(relative):
    bad = {name for name in imported_names(relative)
           if name.startswith(FORBIDDEN) and name not in SEAMS.get(relative, set())}
    # the seam's own module path comes with it (``from .fast import FastEncoder``)
    bad -= {name.rpartition(".")[0] for name in SEAMS.get(relative, set())}
    assert not bad, f"{relative} imports {sorted(bad)}"


@pytest.mark.parametrize("relative, order", DEFINITION_FIRST)
def test_each_definition_comes_before_its_faster_forms(relative, order):
    tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [name for name in defined if name in order] == list(order)
