"""What must agree across the family modules (minillm/families/): each declares the same fields,
each name it gives is owned once, and each name it points to exists.

- every module of the package holds ``FAMILY``, a Family named as the module, with a docstring,
  within ~120 lines;
- every config.json ``model_type``, every transformers class and every GGUF
  ``general.architecture`` belongs to exactly one family, and the readers read exactly those;
- every switch is a ModelConfig field and builds a valid config; every chat format named is in
  chat.formats.FORMATS;
- every fixture checkpoint reads with its family's switches on and writes its family's names;
- no code in model/ or engine/ compares a value with a family's name;
- io/ names no family in its code (keys, compared values) outside an allow-list with reasons.
"""
import ast
import dataclasses
import importlib
import json
import pkgutil
import re
from collections import Counter
from pathlib import Path

import pytest

import minillm
import minillm.families as package
from minillm.chat.formats import FORMATS
from minillm.config import ModelConfig
from minillm.families import Family, families, family, family_of_gguf, family_of_hf
from minillm.io.gguf.export import gguf_arch
from minillm.io.gguf.model import ARCHS
from minillm.io.hf.config import from_hf_dict, to_hf_dict
from tests.conftest import FIXTURES

MODULES = sorted(m.name for m in pkgutil.iter_modules(package.__path__))
FIELDS = [f.name for f in dataclasses.fields(Family)]
ROOT = Path(minillm.__file__).resolve().parent


@pytest.mark.parametrize("name", MODULES)
def test_each_module_declares_one_family_named_as_itself(name):
    module = importlib.import_module(f"minillm.families.{name}")
    assert isinstance(module.FAMILY, Family) and module.FAMILY.name == name
    assert module.__doc__ and len(module.__doc__.strip().splitlines()) >= 3
    assert len(Path(module.__file__).read_text(encoding="utf-8").splitlines()) <= 120
    f = module.FAMILY
    assert f.base in ("gpt2", "llama") and f.summary and f.hf_model_types
    for field in ("hf_model_types", "hf_keys", "gguf_architectures", "gguf_keys",
                  "chat_formats", "refuses"):
        assert isinstance(getattr(f, field), tuple)
        assert all(isinstance(v, str) and v for v in getattr(f, field)), field
    assert families()[name] is f


def test_every_name_belongs_to_exactly_one_family():
    everything = families().values()
    for field in ("hf_model_types", "gguf_architectures"):
        counts = Counter(v for f in everything for v in getattr(f, field))
        assert [v for v, n in counts.items() if n > 1] == [], field
    classes = Counter(f.hf_architecture for f in everything if f.hf_architecture)
    assert [v for v, n in classes.items() if n > 1] == []
    for f in everything:
        assert all(family_of_hf(t) is f for t in f.hf_model_types)
        assert all(family_of_gguf(a) is f for a in f.gguf_architectures)
    assert sorted(ARCHS) == sorted(a for f in everything for a in f.gguf_architectures)


def test_every_switch_is_a_config_field_and_every_chat_format_exists():
    fields = {f.name for f in dataclasses.fields(ModelConfig)}
    for f in families().values():
        assert set(f.switches) <= fields
        assert f.tensor_switch is None or f.tensor_switch in f.switches
        assert bool(f.tensor_switch) == bool(f.hf_tensors or f.gguf_tensors)
        assert set(f.chat_formats) <= set(FORMATS), f.name
        assert f.write_hf is None or f.hf_marks is not None       # (what it writes, and when)
        assert f.read_hf is None or f.write_hf is not None        # a reader of its own: a writer
        assert f.write_gguf is None or f.gguf_architectures
        ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=2, arch=f.base,
                    **f.switches)                       # (a ValueError if they disagree)


FOLDERS = sorted(p.parent.name for p in FIXTURES.glob("*/config.json"))


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_fixture_reads_with_its_familys_switches_and_writes_its_names(folder):
    d = json.loads((FIXTURES / folder / "config.json").read_text(encoding="utf-8"))
    if "minillm" in d:
        pytest.skip(f"{folder} is minillm's own config.json (its fields, exactly)")
    f = family_of_hf(d.get("model_type", "gpt2"))
    config = from_hf_dict(d)
    assert {k: getattr(config, k) for k in f.switches} == f.switches
    assert to_hf_dict(config)["model_type"] in f.hf_model_types
    try:
        arch = gguf_arch(config)
    except ValueError:                  # (what llama.cpp cannot run: tests/io/ name each)
        return
    assert arch in (f.gguf_architectures or family("llama").gguf_architectures)
    assert family_of_gguf(arch).base == f.base


def test_no_code_in_model_or_engine_compares_with_a_family_name():
    names = {f.name for f in families().values()} | {
        v for f in families().values() for v in f.hf_model_types + f.gguf_architectures}
    names -= {"gpt2", "llama"}                 # ModelConfig.arch's two values: bases, not families
    found = []
    for path in sorted((ROOT / "model").rglob("*.py")) + sorted((ROOT / "engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                found += [f"{path.name}:{node.lineno}" for c in ast.walk(node)
                          if isinstance(c, ast.Constant) and c.value in names]
    assert found == []


# io/'s string literals that still name a family (not a docstring; a literal holding whitespace is
# a message, kept word for word, and "llama.cpp" is the program), and why each stays:
IO_ALLOWED = {
    ("gguf/carry.py", "qwen2"): "ARCH_PREFIXES: the shape keys never carried from a source file "
                                "(a behaviour of carrying, not a family's declaration)",
    ("gguf/families.py", "olmo2"): "OLMO2_NORMS: a re-export kept for old imports",
    ("gguf/gemma.py", "gemma2"): "POST_NORMS: a re-export kept for old imports",
}


def family_literals(path: Path):
    """(line, family name) of each whitespace-free string literal naming a family (the bases
    gpt2 and llama apart: ModelConfig.arch's values, as in the test above)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    names = sorted(set(families()) - {"gpt2", "llama"}, key=len, reverse=True)
    word = re.compile(r"(?<![\w])(" + "|".join(names) + r")(?![\w])")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs and not re.search(r"\s", node.value):
            yield from ((node.lineno, m.group(1)) for m in word.finditer(node.value))


def test_io_names_no_family_outside_its_allow_list():
    """io/ is machinery driven by the family modules: a family's name written in io/ (a key, a
    comparison) is a declaration that belongs in minillm/families/<name>.py."""
    found = {(str(p.relative_to(ROOT / "io")), name): line
             for p in sorted((ROOT / "io").rglob("*.py")) for line, name in family_literals(p)}
    assert sorted(set(found) - set(IO_ALLOWED)) == []
    assert sorted(set(IO_ALLOWED) - set(found)) == []          # (an entry moved out: drop it)
