"""The afternoon: the files a reader goes through first (the README's "The afternoon" table)
stay short, self-contained, free of speed code, and show each definition before any faster form.

AFTERNOON is the one list; the README's table must name exactly these files. Together they stay
at most 2,500 lines (``wc -l``: docstrings and comments included).

Self-contained: an afternoon file imports (at module or function level, absolute or relative)
only other afternoon files, the modules BESIDE them, numpy, regex and the standard library. BESIDE
holds what the formulas lean on without being formulas: each package's input checks (so that a
formula file reads as the math), the sampler pipeline's extras (penalties, logit bias) and
generation's settings; those import only the afternoon and each other too. The few ways out are
named SEAMS, each one import inside the one file that needs it: the tokenizer's speed-ups
(``FastEncoder``) and file methods, the model's file methods (``ModelFiles``), the mixture of
experts (``model/moe.py``) and speculative decoding (``generate(..., draft=...)``). The
tokenizer's own part of the afternoon has its tighter rule in tests/tokenizer/test_reading_path.py.
"""
import ast
import re
from pathlib import Path

import pytest

import minillm

ROOT = Path(minillm.__file__).parent
AFTERNOON = (
    "tokenizer/patterns.py", "tokenizer/bpe.py", "tokenizer/special.py", "tokenizer/tokenizer.py",
    "tokenizer/stream.py",
    "functional.py", "config.py",
    "model/__init__.py", "model/embedding.py", "model/norm.py", "model/linear.py",
    "model/attention.py", "model/rope.py", "model/ffn.py", "model/block.py", "model/gpt.py",
    "model/params.py", "model/init.py",
    "kv_cache.py",
    "sampling/temperature.py", "sampling/top_k.py", "sampling/top_p.py", "sampling/min_p.py",
    "sampling/greedy.py", "sampling/categorical.py", "sampling/pipeline.py",
    "decoding/generate.py", "decoding/steps.py", "decoding/beam.py",
)
BESIDE = (
    "model/checks.py", "sampling/checks.py", "tokenizer/checks.py", "tokenizer/budget.py",
    "sampling/__init__.py", "sampling/penalties.py", "sampling/bias.py",
    "decoding/generate_args.py", "decoding/stop_strings.py",
    "config_checks.py", "kv_cache_sizes.py", "hooks.py",
)
MAX_LINES = 2500
# file -> the outside names it may import (a module's name comes with each: ``from .fast import X``)
SEAMS = {"tokenizer/tokenizer.py": {"minillm.tokenizer.fast.FastEncoder",
                                    "minillm.tokenizer.files.TokenizerFiles"},
         "model/gpt.py": {"minillm.model.files.ModelFiles",
                          # Mistral's and Gemma's sliding window and soft-capping
                          "minillm.model.variants.is_sliding", "minillm.model.variants.sliding_inputs",
                          "minillm.model.variants.softcap"},
         "config_checks.py": {"minillm.model.variants.check_variants"},
         "model/block.py": {"minillm.model.moe.moe"},
         "decoding/generate.py": {"minillm.decoding.speculative.speculative_steps",
                                  "minillm.decoding.constraints.masked.masked_steps"},
         "decoding/beam.py": {"minillm.decoding.constraints.masked.BeamGuides"}}
# Definition first, faster forms after: (file, functions in the order they must be defined).
DEFINITION_FIRST = [
    ("sampling/top_k.py", ("top_k_sorted", "top_k", "top_k_ids", "candidates")),
    ("model/rope.py", ("apply_rope", "rope_angles")),
    ("model/attention.py", ("attend_per_head", "scaled_dot_product", "attention")),
    ("model/norm.py", ("layer_norm", "rms_norm", "norm")),
    ("model/ffn.py", ("gelu_tanh", "silu", "gelu_mlp", "swiglu")),
    ("model/moe.py", ("route", "moe_loop", "moe")),
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
            # (``from . import bpe`` names the module bpe, not the package's __init__)
            found |= ({base} if node.module else set()) | {f"{base}.{a.name}" for a in node.names}
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


def test_the_readme_gives_the_afternoons_line_count_to_the_nearest_hundred():
    total = sum(len((ROOT / name).read_bytes().splitlines()) for name in AFTERNOON)
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"Everything a language model is, in about ([\d,]+) lines", readme)
    assert stated, "README.md's afternoon section should say how many lines it is"
    assert int(stated[1].replace(",", "")) == round(total, -2), f"the afternoon is {total} lines"


@pytest.mark.parametrize("relative", AFTERNOON + BESIDE)
def test_the_afternoon_imports_only_itself_and_what_is_beside_it(relative):
    allowed = {module_name(name) for name in AFTERNOON + BESIDE}
    seams = SEAMS.get(relative, set())
    seams = seams | {name.rpartition(".")[0] for name in seams}
    bad = {name for name in imported_names(relative)
           if name.startswith("minillm.") and name not in seams and not within(name, allowed)}
    assert not bad, f"{relative} imports {sorted(bad)}: outside the afternoon and BESIDE"


def within(name: str, modules: set[str]) -> bool:
    """``name`` is one of ``modules`` or a name defined in one (``minillm.model.norm.norm``)."""
    return name in modules or name.rpartition(".")[0] in modules


def test_every_module_outside_the_afternoon_counts():
    """The rule reaches every module: a module is in the afternoon, BESIDE it, or it is none
    of the afternoon's business (and then no afternoon file may import it: the test above)."""
    assert not set(AFTERNOON) & set(BESIDE)
    assert all((ROOT / name).is_file() for name in AFTERNOON + BESIDE)


@pytest.mark.parametrize("relative, order", DEFINITION_FIRST)
def test_each_definition_comes_before_its_faster_forms(relative, order):
    tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [name for name in defined if name in order] == list(order)
