"""Mutation testing of the afternoon: does the test suite notice when a code line changes?

A mutant is ONE small edit of one code line of an afternoon file (the list ``AFTERNOON`` in
tests/test_afternoon.py, read at run time): a comparison flipped, a constant changed, an operand
(an eps) or a keyword argument (keepdims=True) dropped, an operator swapped, min/max swapped, a
condition negated, a statement removed, a slice bound shifted. Docstrings, comments, annotations
and message strings (f-strings, the arguments of ``raise``) are never mutated. Each mutant is run
against the tests mapped to its file (``TESTS`` below, else the test folder that mirrors it); it is
*caught* when they fail, fail to load (pytest's exit 2: a test module's import fails under the
mutant) or hang past the time limit, a *survivor* otherwise. Mutants judged
equivalent (no test could tell them apart: a speed-only threshold, an inert default) are listed,
each with its reason, in scripts/mutants_equivalent.txt and reported, not run.

Standard library only. The repository is never edited: every worker runs on its own temporary
copy of the package and the tests (taken at the start: edits during a run change nothing), in a
pytest started for each mutant; a mutant is written into that copy and undone after its run.

    python scripts/mutate.py                                  # every mutant of every file
    python scripts/mutate.py --sample 300 --seed 1            # a random sample of 300
    python scripts/mutate.py --files sampling/top_p.py kv_cache.py
    python scripts/mutate.py --list --files kv_cache.py       # the mutants, not run
    python scripts/mutate.py --show 3f2a9c01be                # one mutant as a diff

Exit status 1 when a mutant survives or the unmutated tests fail.
"""
from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures
import dataclasses
import difflib
import hashlib
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "minillm"
EQUIVALENT_FILE = REPO / "scripts" / "mutants_equivalent.txt"

# Each afternoon file -> the tests that specify it, most direct first (pytest runs them in this
# order and stops at the first failure). A file missing here gets the folder that mirrors it.
TOKENIZER = ["tests/tokenizer/test_bpe.py", "tests/tokenizer/test_special.py",
             "tests/tokenizer/test_roundtrip.py", "tests/tokenizer/test_regressions.py",
             "tests/tokenizer/test_special_sets.py", "tests/tokenizer/test_split_pieces.py"]
FILTERS = ["tests/sampling/test_filters.py", "tests/sampling/test_pipeline.py",
           "tests/sampling/test_top_p_edge.py", "tests/sampling/test_top_p_near_one.py"]
DECODING = ["tests/decoding/test_generate.py", "tests/decoding/test_generate_simple.py",
            "tests/decoding/test_steps.py", "tests/decoding/test_beam.py"]
TESTS = {
    "tokenizer/patterns.py": [*TOKENIZER, "tests/tokenizer/test_refusals.py",
                              "tests/tokenizer/formats/hf/test_tokenizer_json.py"],
    "tokenizer/bpe.py": [*TOKENIZER, "tests/tokenizer/test_tokenizer_inputs.py"],
    "tokenizer/special.py": ["tests/tokenizer/test_special.py", *TOKENIZER,
                             "tests/tokenizer/test_user_defined.py"],
    "tokenizer/tokenizer.py": ["tests/tokenizer/test_tokenizer_object.py", *TOKENIZER,
                               "tests/tokenizer/test_tokenizer_inputs.py",
                               "tests/tokenizer/test_user_defined.py",
                               "tests/tokenizer/test_fast_equals_reading.py",
                               "tests/tokenizer/formats/hf/test_tokenizer_json.py"],
    "functional.py": ["tests/test_functional.py", "tests/model/test_model_properties.py",
                      "tests/sampling/test_temperature.py"],
    "model/embedding.py": ["tests/model/test_layers.py", "tests/model"],
    "model/init.py": ["tests/model/test_params.py", "tests/model/test_init_values.py",
                      "tests/model"],
    "model/gpt.py": ["tests/model", "tests/test_kv_cache.py"],
    "model/block.py": ["tests/model"],                             # the folder, test_block_cache too
    "kv_cache.py": ["tests/test_kv_cache.py", "tests/test_kv_cache_sizes.py",
                    "tests/decoding/test_beam.py", "tests/decoding/test_generate.py",
                    "tests/decoding/test_parity_generation.py"],
    "sampling/temperature.py": ["tests/sampling/test_temperature.py", *FILTERS],
    "sampling/top_k.py": FILTERS,
    "sampling/top_p.py": FILTERS,
    "sampling/min_p.py": FILTERS,
    "sampling/greedy.py": ["tests/sampling/test_greedy.py", "tests/sampling/test_temperature.py",
                           *FILTERS],
    "sampling/categorical.py": ["tests/sampling/test_categorical.py",
                                "tests/sampling/test_categorical_edges.py"],
    "decoding/generate.py": [*DECODING, "tests/decoding/test_generate_calls.py",
                             "tests/decoding/test_step_sampled.py",
                             "tests/decoding/test_generate_stops.py",
                             "tests/decoding/test_generate_draft.py",
                             "tests/decoding/test_speculative.py",         # draft=: its seam
                             "tests/decoding/test_generate_contract.py", "tests/decoding/test_eos.py"],
    "decoding/steps.py": ["tests/decoding/test_steps.py", "tests/decoding/test_step_ties.py",
                          *DECODING],
    "decoding/beam.py": ["tests/decoding/test_beam.py", "tests/decoding/test_beam_rules.py",
                         "tests/decoding/test_parity_generation.py",
                         "tests/decoding/test_user_sizes.py"],
    "tokenizer/stream.py": ["tests/tokenizer/test_stream.py", *DECODING],
    "config.py": ["tests/test_config.py", "tests/test_config_refusals.py",
                  "tests/model/test_params.py",
                  "tests/model/test_model_properties.py", "tests/model/test_families.py",
                  "tests/io/test_bounds.py", "tests/decoding/test_eos.py",
                  "tests/model/test_sliding_window.py", "tests/model/test_gemma.py",
                  "tests/model/test_later_families.py", "tests/model/test_moe.py"],
    "sampling/pipeline.py": [*FILTERS, "tests/sampling/test_sampler_inputs.py",
                             "tests/sampling/test_categorical.py",
                             "tests/decoding/test_generation_settings.py",
                             "tests/sampling/test_penalties_off.py"],
}
# Only hypothesis's plugin is loaded (PYTEST_DISABLE_PLUGIN_AUTOLOAD below): xdist, nbmake and the
# like cost each run a second of imports and no mutant needs them.
TEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin", "--no-header"]


# ---------------------------------------------------------------------------------- the files
def afternoon_files() -> list[str]:
    """The AFTERNOON tuple of tests/test_afternoon.py, read without importing the tests."""
    tree = ast.parse((REPO / "tests" / "test_afternoon.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "AFTERNOON"
                                                for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise SystemExit("tests/test_afternoon.py defines no AFTERNOON list")


def tests_for(relative: str) -> list[str]:
    """The mapped tests of an afternoon file that exist (a table entry, else the mirror)."""
    if relative in TESTS:
        found = TESTS[relative]
    else:
        parent = Path(relative).parent
        stem = Path(relative).stem
        found = [f"tests/{parent}" if str(parent) != "." else f"tests/test_{stem}.py",
                 f"tests/test_{stem}.py"]
    unique = list(dict.fromkeys(t for t in found if (REPO / t).exists()))
    if not unique:
        raise SystemExit(f"no tests found for {relative}: add it to TESTS in scripts/mutate.py")
    return unique


# -------------------------------------------------------------------------------- the mutants
@dataclasses.dataclass(frozen=True)
class Mutant:
    file: str          # relative to minillm/
    line: int          # 1-based, where the edit starts
    col: int
    end_line: int
    end_col: int
    new: str           # the replacement text of [line:col, end_line:end_col)
    what: str          # "`<` -> `<=`"
    code: str          # the original line without its comment, stripped (report and id)
    indent: int = 0    # the line's indentation
    repeat: int = 0    # how many identical edits of identical lines come before it in the file

    @property
    def id(self) -> str:
        """Stable across edits elsewhere in the file and in comments: the file, the line's code,
        the edit and where on the line (the column, less the line's indentation)."""
        key = f"{self.file}\0{self.code}\0{self.what}\0{self.col - self.indent}" + \
            (f"\0{self.repeat}" if self.repeat else "")
        return hashlib.sha1(key.encode()).hexdigest()[:10]


COMPARE = {ast.Lt: ["<=", ">="], ast.LtE: ["<", ">"], ast.Gt: [">=", "<="], ast.GtE: [">", "<"],
           ast.Eq: ["!="], ast.NotEq: ["=="], ast.In: ["not in"], ast.NotIn: ["in"],
           ast.Is: ["is not"], ast.IsNot: ["is"]}
COMPARE_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
BINARY = {ast.Add: ("+", ["-"]), ast.Sub: ("-", ["+"]), ast.Mult: ("*", ["/"]),
          ast.Div: ("/", ["*"]), ast.FloorDiv: ("//", ["/", "*"]), ast.Mod: ("%", ["//"]),
          ast.Pow: ("**", ["*"]), ast.MatMult: ("@", ["*"])}
SWAPS = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum",
         "argmin": "argmax", "argmax": "argmin", "any": "all", "all": "any",
         "float32": "float64", "float64": "float32", "int64": "int32", "ravel": "copy"}
SKIP_CALLS = {"ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "warn",
              "print", "SystemExit", "NotImplementedError", "OverflowError", "MemoryError"}


class Finder(ast.NodeVisitor):
    """Collects the edits of one file as (node span, replacement text, description)."""

    def __init__(self, source: str):
        self.lines = source.splitlines()
        self.edits: list[tuple[int, int, int, int, str, str]] = []

    def seg(self, node) -> str:
        return ast.get_source_segment("\n".join(self.lines), node) or ""

    def add(self, node, new: str, what: str, start=None, end=None):
        s = start or (node.lineno, node.col_offset)
        e = end or (node.end_lineno, node.end_col_offset)
        self.edits.append((*s, *e, new, what))

    # never inside messages, annotations, docstrings
    def visit_JoinedStr(self, node):
        return

    def visit_Raise(self, node):
        return                                   # removed whole by statement removal only

    def visit_Call(self, node):
        name = node.func.id if isinstance(node.func, ast.Name) else \
            node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if name in SKIP_CALLS:
            return
        for kw in node.keywords:                 # a keyword argument dropped (keepdims, dtype, ...)
            if kw.arg is not None:
                self.drop_keyword(node, kw)
        self.generic_visit(node)

    def drop_keyword(self, call, kw):
        text = self.seg(call)
        tree = ast.parse(text, mode="eval").body
        tree.keywords = [k for k in tree.keywords if k.arg != kw.arg]
        self.add(call, ast.unparse(tree), f"drop `{kw.arg}=`")

    def visit_arg(self, node):
        return                                   # annotations of parameters

    def visit_FunctionDef(self, node):
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.body(node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.body(node.body)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)

    def visit_Module(self, node):
        self.body(node.body)

    def body(self, statements):
        for i, st in enumerate(statements):
            if i == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) \
                    and isinstance(st.value.value, str):
                continue                          # a docstring
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr, ast.Raise, ast.Return,
                               ast.Break, ast.Continue, ast.If, ast.For)) \
                    and not isinstance(st, ast.AnnAssign):
                self.add(st, "pass", "statement removed")
            self.visit(st)

    def visit_If(self, node):
        self.add(node.test, f"not ({self.seg(node.test)})", "condition negated")
        self.generic_visit_stmt(node)

    def visit_While(self, node):
        self.visit(node.test)
        self.body(node.body)

    def visit_For(self, node):
        self.visit(node.iter)
        self.body(node.body)

    def visit_With(self, node):
        for item in node.items:
            self.visit(item.context_expr)
        self.body(node.body)

    def visit_Try(self, node):
        self.body(node.body)
        for h in node.handlers:
            self.body(h.body)

    def generic_visit_stmt(self, node):
        self.visit(node.test)
        self.body(node.body)
        if node.orelse:
            self.body(node.orelse)

    def visit_IfExp(self, node):
        self.add(node.test, f"not ({self.seg(node.test)})", "condition negated")
        self.generic_visit(node)

    def visit_Compare(self, node):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            for new in COMPARE[type(op)]:
                self.add(node, f" {new} ", f"`{COMPARE_TEXT[type(op)]}` -> `{new}`",
                         start=(left.end_lineno, left.end_col_offset),
                         end=(right.lineno, right.col_offset))
            left = right
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if type(node.op) in BINARY:
            old, news = BINARY[type(node.op)]
            for new in news:
                self.add(node, f" {new} ", f"`{old}` -> `{new}`",
                         start=(node.left.end_lineno, node.left.end_col_offset),
                         end=(node.right.lineno, node.right.col_offset))
            if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                self.add(node, f"({self.seg(node.left)})", f"`{old} {self.seg(node.right)}` dropped")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if type(node.op) in BINARY:
            old, news = BINARY[type(node.op)]
            target = self.seg(node.target)
            for new in news + [""]:
                self.add(node, f"{target} {new}= {self.seg(node.value)}",
                         f"`{old}=` -> `{new}=`")
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        new = "or" if isinstance(node.op, ast.And) else "and"
        self.add(node, f" {new} ".join(f"({self.seg(v)})" for v in node.values),
                 f"`{'and' if new == 'or' else 'or'}` -> `{new}`")
        for i, v in enumerate(node.values):
            rest = [w for j, w in enumerate(node.values) if j != i]
            self.add(node, f" {'and' if new == 'or' else 'or'} ".join(f"({self.seg(w)})" for w in rest),
                     f"operand `{self.seg(v)}` dropped")
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, (ast.Not, ast.USub)):
            self.add(node, f"({self.seg(node.operand)})",
                     f"`{'not ' if isinstance(node.op, ast.Not) else '-'}` dropped")
        if not (isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)):
            self.generic_visit(node)
        else:
            self.constant(node, -node.operand.value)

    def visit_Constant(self, node):
        self.constant(node, node.value)

    def constant(self, node, value):
        if isinstance(value, bool):
            self.add(node, str(not value), f"`{value}` -> `{not value}`")
        elif isinstance(value, int):
            for new in dict.fromkeys([value + 1, value - 1] if value else [1, -1]):
                self.add(node, f"({new})", f"`{value}` -> `{new}`")
        elif isinstance(value, float):
            for new in dict.fromkeys([0.0 if value else 1.0, value * 2 if value else -1.0]):
                self.add(node, f"({new!r})", f"`{value!r}` -> `{new!r}`")

    def visit_Name(self, node):
        if node.id in SWAPS and node.id in ("min", "max", "any", "all"):
            self.add(node, SWAPS[node.id], f"`{node.id}` -> `{SWAPS[node.id]}`")

    def visit_Attribute(self, node):
        if node.attr in SWAPS:
            end = (node.end_lineno, node.end_col_offset)
            start = (node.end_lineno, node.end_col_offset - len(node.attr))
            self.add(node, SWAPS[node.attr], f"`.{node.attr}` -> `.{SWAPS[node.attr]}`",
                     start=start, end=end)
        self.generic_visit(node)

    def visit_Subscript(self, node):
        sl = node.slice
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for part in parts:
            if isinstance(part, ast.Slice):
                for bound in (part.lower, part.upper):
                    if bound is not None:
                        for d in ("+ 1", "- 1"):
                            self.add(bound, f"({self.seg(bound)} {d})",
                                     f"slice bound `{self.seg(bound)}` {d}")
        self.generic_visit(node)


def apply(source: str, m: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line, col):                       # ast columns count UTF-8 bytes
        text = lines[line - 1]
        return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8"))
    return source[:offset(m.line, m.col)] + m.new + source[offset(m.end_line, m.end_col):]


def mutants_of(relative: str) -> list[Mutant]:
    """Every mutant of one file that compiles and differs from the original code."""
    source = (PACKAGE / relative).read_text(encoding="utf-8")
    finder = Finder(source)
    finder.visit(ast.parse(source))
    original = ast.dump(ast.parse(source))
    comments = {t.start[0]: t.start[1] for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT}           # a comment edit changes no mutant's id
    found, seen, repeats = [], set(), collections.Counter()
    for line, col, end_line, end_col, new, what in sorted(finder.edits, key=lambda e: e[:4]):
        code = finder.lines[line - 1][:comments.get(line)].strip()
        text = finder.lines[line - 1]
        indent = len(text) - len(text.lstrip())
        same = (code, what, col - indent)                  # e.g. one check at the top of two functions
        m = Mutant(relative, line, col, end_line, end_col, new, what, code, indent, repeats[same])
        text = apply(source, m)
        try:
            dump = ast.dump(ast.parse(text))
            compile(text, relative, "exec")
        except SyntaxError:
            continue
        if dump == original or dump in seen:
            continue
        seen.add(dump)
        repeats[same] += 1
        found.append(m)
    return found


def diff(m: Mutant) -> str:
    source = (PACKAGE / m.file).read_text(encoding="utf-8")
    return "".join(difflib.unified_diff(source.splitlines(keepends=True),
                                        apply(source, m).splitlines(keepends=True),
                                        f"minillm/{m.file}", f"minillm/{m.file} (mutant {m.id})", n=1))


def equivalent_list() -> dict[str, str]:
    """id -> reason, from scripts/mutants_equivalent.txt (``id | file | what | reason``)."""
    found = {}
    if EQUIVALENT_FILE.exists():
        for row in EQUIVALENT_FILE.read_text(encoding="utf-8").splitlines():
            if row.strip() and not row.lstrip().startswith("#"):
                fields = [f.strip() for f in row.split("|")]
                if len(fields) < 4 or not fields[3]:
                    raise SystemExit(f"{EQUIVALENT_FILE.name}: needs `id | file | what | reason`: {row}")
                found[fields[0]] = fields[3]
    return found


# ---------------------------------------------------------------------------------- running
BOOT = ("import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1]); "
        "import minillm; assert minillm.__file__.startswith(sys.argv[1]), minillm.__file__; "
        "import pytest; sys.exit(pytest.main(sys.argv[2:]))")


class Workers:
    """One temporary copy of the package per worker; a mutant is written into a copy, run, undone."""

    def __init__(self, n: int):
        self.root = Path(tempfile.mkdtemp(prefix="minillm-mutants-"))
        self.free = []
        for i in range(n):                       # the package and the tests as they are now:
            where = self.root / str(i)               # editing either during a run changes nothing
            for part in ("minillm", "tests"):
                shutil.copytree(REPO / part, where / part,
                                ignore=shutil.ignore_patterns("__pycache__", "fixtures"))
            for linked in ("weights", "tests/fixtures", "docs", "pyproject.toml", "setup.cfg"):
                if (REPO / linked).exists():
                    (where / linked).symlink_to(REPO / linked)
            self.free.append(where)
        self.lock = threading.Lock()

    def run(self, m: Mutant | None, tests: list[str], profile: str, timeout: float):
        with self.lock:
            where = self.free.pop()
        path = where / "minillm" / m.file if m else None
        original = path.read_text(encoding="utf-8") if m else None
        try:
            if m:
                path.write_text(apply(original, m), encoding="utf-8")
            env = {**os.environ, "HYPOTHESIS_PROFILE": profile, "PYTHONDONTWRITEBYTECODE": "1",
                   "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                   "MINILLM_SHARED_DATA": os.environ.get("MINILLM_SHARED_DATA",
                                                         str(REPO.parent / "shared" / "data"))}
            start = time.monotonic()
            try:
                done = subprocess.run([sys.executable, "-c", BOOT, str(where), *TEST_ARGS, *tests],
                                      cwd=where, env=env, capture_output=True, text=True,
                                      timeout=timeout)
                # exit 2: pytest stopped while loading the tests (a test module's import failed
                # under the mutant); the unmutated baseline passing rules out a broken command
                status = "survived" if done.returncode == 0 else \
                    "caught" if done.returncode == 1 else \
                    "caught (tests fail to load)" if done.returncode == 2 else f"error {done.returncode}"
                out = done.stdout[-3000:] + done.stderr[-2000:]
            except subprocess.TimeoutExpired:
                status, out = "caught (timeout)", ""
            return status, time.monotonic() - start, out
        finally:
            if m:
                path.write_text(original, encoding="utf-8")
            with self.lock:
                self.free.append(where)

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", nargs="+", help="afternoon files (relative to minillm/), default all")
    ap.add_argument("--sample", type=int, help="run a random sample of N mutants (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    ap.add_argument("--profile", default="mutate",
                    help="hypothesis profile of tests/conftest.py (default mutate: ci's "
                         "derandomized examples, no shrinking)")
    ap.add_argument("--ids", nargs="+", metavar="ID", help="run only these mutants (e.g. the "
                    "survivors of an earlier run, after adding the properties they asked for)")
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    ap.add_argument("--from-log", metavar="LOG", help="report a --verbose run's output again, "
                    "against the equivalent list as it is now (nothing is run)")
    ap.add_argument("--show", metavar="ID", help="print one mutant as a diff")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds before a mutant's tests count as hung, i.e. caught (default 300)")
    ap.add_argument("--verbose", action="store_true", help="print each result as it comes")
    args = ap.parse_args(argv)

    files = afternoon_files()
    if args.files:
        unknown = [f for f in args.files if f not in files]
        if unknown:
            raise SystemExit(f"not afternoon files: {unknown} (the list: {files})")
        files = args.files
    everything = [m for f in files for m in mutants_of(f)]
    if args.show:
        for m in everything:
            if m.id == args.show:
                print(f"{m.id}  {m.file}:{m.line}  {m.what}\n{diff(m)}")
                return 0
        raise SystemExit(f"no mutant {args.show}")
    chosen = everything
    if args.ids:
        chosen = [m for m in everything if m.id in set(args.ids)]
        missing = set(args.ids) - {m.id for m in chosen}
        if missing:
            raise SystemExit(f"no such mutants (now): {sorted(missing)}")
    elif args.sample is not None and args.sample < len(everything):
        chosen = sorted(random.Random(args.seed).sample(everything, args.sample),
                        key=lambda m: (files.index(m.file), m.line, m.col))
    if args.list:
        for m in chosen:
            print(f"{m.id}  {m.file}:{m.line}:{m.col}  {m.what:40}  {m.code[:70]}")
        print(f"{len(chosen)} of {len(everything)} mutants")
        return 0

    # Ctrl-C, or ``kill -INT``/``-TERM`` (a run in the background ignores SIGINT unless told
    # otherwise): stop, and report the mutants run so far
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if args.from_log:
        return from_log(Path(args.from_log), files, everything, args)
    equivalent = equivalent_list()
    # stale: listed, but no mutant of any afternoon file has that id (a run of a few files
    # still checks the whole list, so entries of the other files are not reported)
    every_id = {m.id for f in afternoon_files() for m in mutants_of(f)}
    stale = set(equivalent) - every_id
    start = time.monotonic()
    workers = Workers(max(1, args.jobs))
    print(f"{len(chosen)} mutants of {len(files)} files (the tests of each file also run "
          f"unmutated: they must pass)", flush=True)
    results: dict[Mutant, str] = {}
    pool = concurrent.futures.ThreadPoolExecutor(max(1, args.jobs))
    try:
        todo = [m for m in chosen if m.id not in equivalent]
        random.Random(args.seed).shuffle(todo)     # run in random order: stopped early (Ctrl-C),
                                                   # the mutants run so far are a random sample too
        mapped = {f: tuple(tests_for(f)) for f in files}          # fixed at the start, as the copies
        # the unmutated tests must pass: run first, checked before the report
        baseline = {s: pool.submit(workers.run, None, list(s), args.profile, 3 * args.timeout)
                    for s in dict.fromkeys(mapped[m.file] for m in todo)}
        futures = {pool.submit(workers.run, m, list(mapped[m.file]), args.profile,
                               args.timeout): m for m in todo}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            m = futures[fut]
            status, took, out = fut.result()
            results[m] = status
            if status.startswith("error"):
                print(f"\n{m.id} {m.file}:{m.line} {m.what}: pytest {status}\n{out}")
            if args.verbose:
                print(f"[{i}/{len(todo)}] {status:16} {took:5.1f}s {m.id} {m.file}:{m.line} "
                      f"{m.what}", flush=True)
        for tests, fut in baseline.items():
            status, took, out = fut.result()
            if status != "survived":
                print(f"these tests fail without a mutant: {' '.join(tests)}\n{out}")
                return 1
    except KeyboardInterrupt:
        print("\ninterrupted: the report covers the mutants run so far (the repository was not touched)")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)        # the running ones end with Ctrl-C too
        workers.close()
    elapsed = time.monotonic() - start
    return report(files, chosen, results, equivalent, stale, elapsed, args)


def from_log(log: Path, files, everything, args) -> int:
    """The results of a ``--verbose`` run, read back from its output."""
    by_id = {m.id: m for m in everything}
    results = {}
    for row in log.read_text(encoding="utf-8").splitlines():
        fields = row.split()
        if row.startswith("[") and fields[0].endswith("]") and len(fields) > 3:
            status = "caught (timeout)" if "(timeout)" in row else fields[1]
            ident = next((f for f in fields if f in by_id), None)
            if ident:
                results[by_id[ident]] = status
    chosen = sorted(results, key=lambda m: (files.index(m.file), m.line, m.col))
    equivalent = equivalent_list()
    for m in chosen:
        if m.id in equivalent:
            results.pop(m)
    return report(files, chosen, results, equivalent, set(), 0.0, args)


def report(files, chosen, results, equivalent, stale, elapsed, args) -> int:
    print(f"\nmutants: {len(chosen)}" + (f" (a sample, seed {args.seed})" if args.sample else "")
          + f", profile {args.profile}, {elapsed:.0f} s\n")
    print(f"{'file':28} {'mutants':>7} {'equiv':>5} {'caught':>6} {'surv':>4} {'score':>7}")
    total_c = total_s = 0
    for f in files:
        ms = [m for m in chosen if m.file == f]
        if not ms:
            continue
        eq = sum(m.id in equivalent for m in ms)
        caught = sum(results.get(m, "").startswith("caught") for m in ms)
        surv = sum(results.get(m) == "survived" for m in ms)
        total_c, total_s = total_c + caught, total_s + surv
        score = f"{100 * caught / (caught + surv):6.1f}%" if caught + surv else "     -"
        print(f"{f:28} {len(ms):7} {eq:5} {caught:6} {surv:4} {score:>7}")
    n = total_c + total_s
    print(f"{'all':28} {len(chosen):7} {sum(m.id in equivalent for m in chosen):5} {total_c:6} "
          f"{total_s:4} {100 * total_c / n if n else 0:6.1f}%")
    survivors = [m for m in chosen if results.get(m) == "survived"]
    if survivors:
        print("\nsurvivors (python scripts/mutate.py --show ID for the diff):")
        for m in survivors:
            print(f"  {m.id}  {m.file}:{m.line}  {m.what}  | {m.code[:80]}")
    errors = [m for m in chosen if results.get(m, "").startswith("error")]
    for m in errors:
        print(f"  error: {m.id}  {m.file}:{m.line}  {m.what}  ({results[m]})")
    eq = [m for m in chosen if m.id in equivalent]
    if eq:
        print("\nequivalent (scripts/mutants_equivalent.txt):")
        for m in eq:
            print(f"  {m.id}  {m.file}:{m.line}  {m.what}: {equivalent[m.id]}")
    if stale:
        print(f"\nstale entries in {EQUIVALENT_FILE.name} (no such mutant now): {sorted(stale)}")
    return 1 if survivors or errors else 0


if __name__ == "__main__":
    sys.exit(main())
