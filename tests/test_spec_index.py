"""tests/README.md, the specification index, names only tests that exist (found by reading the
test files with ast, not by running or importing them), and every test file it names exists."""
import ast
import re

from tests.conftest import REPO

INDEX = REPO / "tests" / "README.md"
NAME = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def defined_tests(path) -> set[str]:
    """Every test function of a file: top level and in classes (as Class::name)."""
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef):
            found |= {f"{node.name}::{f.name}" for f in node.body
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {name for name in found if name.rpartition("::")[2].startswith("test")}


def test_every_test_the_index_names_exists():
    named = NAME.findall(INDEX.read_text(encoding="utf-8"))
    assert len(named) > 100
    tests = {file: defined_tests(REPO / file) if (REPO / file).is_file() else set()
             for file in {file for file, _ in named}}                # each file parsed once
    missing = [f"{file}::{test}" for file, test in named if test not in tests[file]]
    assert not missing, f"tests/README.md names tests that do not exist: {missing}"
