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


def afternoon_section() -> str:
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("### The afternoon")
    return readme[start:readme.index("| step | module |", start)]


def number(text: str) -> int:
    """"2,300" -> 2300; "seven" -> 7 (the README writes small counts in words)."""
    words = ("zero one two three four five six seven eight nine ten eleven twelve").split()
    return words.index(text.lower()) if text.lower() in words else int(text.replace(",", ""))


def test_the_readmes_figures_are_the_afternoons():
    """The README's afternoon paragraph states the size ("about N lines": N rounded to its last
    non-zero digit, at most to the hundred), the file count, the cap and the seams (how many, and
    which modules): each computed here from AFTERNOON, MAX_LINES and SEAMS."""
    section = afternoon_section()
    total = sum(len((ROOT / name).read_bytes().splitlines()) for name in AFTERNOON)
    size = re.search(r"Everything a language model is, in about ([\d,]+) lines, (\w+) files", section)
    assert size, "the afternoon paragraph should say 'in about N lines, M files'"
    stated = number(size[1])
    unit = next(u for u in (100, 10, 1) if stated % u == 0)
    assert stated == round(total / unit) * unit, f"the afternoon is {total} lines"
    assert number(size[2]) == len(AFTERNOON), f"the afternoon is {len(AFTERNOON)} files"
    cap = re.search(r"under\s+([\d,]+)\s+lines", section)
    assert cap and number(cap[1]) == MAX_LINES
    seams = re.search(r"except\s+through\s+(\w+)\s+named\s+seams(.*?)\(`tests/test_afternoon.py`",
                      section, re.S)
    assert seams, "the afternoon paragraph should say 'except through N named seams: …'"
    reached = {name.rpartition(".")[0] for names in SEAMS.values() for name in names}
    reached = {m.removeprefix("minillm.").replace(".", "/") for m in reached}
    named = {m.removesuffix(".py").removesuffix("/") for m in re.findall(r"`([\w/]+(?:\.py|/))`", seams[2])}
    assert number(seams[1]) == len(reached), f"the seams reach {sorted(reached)}"
    assert named == reached, "the seams the README names (by module, in backticks) must be SEAMS'"


def is_check(node) -> bool:
    """``if …: raise …`` (an ``elif`` chain of them too): an input check."""
    return (isinstance(node, ast.If) and isinstance(node.body[-1], ast.Raise)
            and (not node.orelse or (len(node.orelse) == 1 and is_check(node.orelse[0]))
                 or isinstance(node.orelse[-1], ast.Raise)))


def check_runs(tree) -> list[tuple[str, int, int]]:
    """(function, first line, last line) of every run of consecutive ``if …: raise`` statements
    in any statement list inside a function."""
    found = []
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                run = []
                statements = getattr(node, field, None)
                for statement in statements if isinstance(statements, list) else []:
                    if isinstance(statement, ast.stmt) and is_check(statement):
                        run.append(statement)
                        continue
                    if run:
                        found.append((function.name, run[0].lineno, run[-1].end_lineno))
                    run = []
                if run:
                    found.append((function.name, run[0].lineno, run[-1].end_lineno))
    return sorted(set(found))


MAX_CHECK_LINES = 5


@pytest.mark.parametrize("relative", AFTERNOON)
def test_each_afternoon_file_starts_with_its_concept(relative):
    """The first statement is the module's docstring (the concept, before any import)."""
    tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
    assert tree.body and isinstance(tree.body[0], ast.Expr) and \
        isinstance(tree.body[0].value, ast.Constant) and isinstance(tree.body[0].value.value, str), \
        f"{relative} must open with its docstring"


@pytest.mark.parametrize("relative", AFTERNOON)
def test_no_afternoon_function_holds_a_block_of_checks(relative):
    """No run of consecutive ``if …: raise`` over 5 lines in an afternoon function: checks that
    long live beside the formula (model/checks.py, config_checks.py, sampling/checks.py,
    decoding/generate_args.py), so that the function reads as the math."""
    long = [(name, a, b) for name, a, b in check_runs(ast.parse((ROOT / relative).read_text(encoding="utf-8")))
            if b - a + 1 > MAX_CHECK_LINES]
    assert not long, f"{relative}: runs of checks over {MAX_CHECK_LINES} lines (function, lines): {long}"


def test_the_check_rule_sees_a_block_of_checks():
    """The rule itself: six one-line checks in a row are caught, five are not, and an elif chain
    counts as one run."""
    six = "def f(x):\n" + "".join(f"    if x == {i}:\n        raise ValueError\n" for i in range(3))
    assert [b - a + 1 for _, a, b in check_runs(ast.parse(six))] == [6]
    five = "def f(x):\n    if x:\n        raise ValueError\n    y = 1\n" + \
        "".join(f"    if x == {i}: raise ValueError\n" for i in range(5))
    assert [b - a + 1 for _, a, b in check_runs(ast.parse(five))] == [2, 5]
    chain = "def f(x):\n    if x == 0:\n        raise ValueError\n    elif x == 1:\n        raise TypeError\n"
    assert max(b - a + 1 for _, a, b in check_runs(ast.parse(chain))) == 4


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
