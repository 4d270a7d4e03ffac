"""A fixed handful of mutants of the afternoon, each of which the suite must catch.

The full mutation run (``python scripts/mutate.py``, see CONTRIBUTING.md) takes many minutes and
is not part of CI; this keeps a small sample of it in CI: each mutant below is one edit that
scripts/mutate.py generates (found by its file, the code of its line and the edit, so it survives
line moves), written into a temporary copy of the package, and the tests named with it — the
properties that specify the behaviour it breaks — must fail on it (they pass unmutated: they are
part of this suite). They are chosen to span the
kinds of edit (a comparison flipped, an eps, a keyword, a statement, a dtype, an operand) and the
afternoon's parts (functional, the cache, the samplers, the draw, beam search).
"""
import importlib.util
import sys

import pytest

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("mutate", REPO / "scripts" / "mutate.py")
mutate = importlib.util.module_from_spec(spec)
sys.modules.setdefault("mutate", mutate)
spec.loader.exec_module(mutate)

# (file, the line's code, the edit, the tests that must catch it)
KNOWN = [
    ("functional.py", "e = x - x.max(axis=axis, keepdims=True)",
     "`- x.max(axis=axis, keepdims=True)` dropped",
     "tests/test_functional.py::test_softmax_is_stable_on_huge_logits"),
    ("sampling/top_p.py", "keep = before < (p - TOL) * total", "`- TOL` dropped",
     "tests/sampling/test_filters.py::test_top_p_counts_a_mass_within_tol_of_p_as_reaching_it"),
    ("sampling/min_p.py", "z = logits.astype(np.float64)", "`.float64` -> `.float32`",
     "tests/sampling/test_filters.py::test_min_p_boundary_is_inclusive_in_float64"),
    ("kv_cache.py", "self.valid[:, self.length:] = True", "statement removed",
     "tests/test_kv_cache.py::test_rollback_keeps_the_padding_it_keeps_and_frees_the_rest"),
    ("kv_cache.py", "if self.length + n_new > self.capacity:", "`>` -> `>=`",
     "tests/test_kv_cache.py::test_check_room_allows_filling_the_cache_exactly"),
    ("sampling/categorical.py", "cdf = np.cumsum(p / top, axis=-1)", "`/ top` dropped",
     "tests/sampling/test_categorical.py::test_weights_whose_sum_overflows_are_drawn_in_proportion"),
    ("decoding/beam.py", "top = top[np.lexsort((top, -flat[top]))]", "`-` dropped",
     "tests/decoding/test_beam.py::test_beam_size_1_equals_greedy"),
    ("sampling/categorical.py", "ids = (cdf <= u * total).sum(axis=-1)", "`<=` -> `<`",
     "tests/sampling/test_categorical_edges.py::test_u_on_a_boundary_belongs_to_the_token_that_starts_there"),
]


def find(file, code, what):
    found = [m for m in mutate.mutants_of(file) if m.code == code and m.what == what]
    assert len(found) == 1, f"scripts/mutate.py makes {len(found)} mutants `{what}` of " \
                            f"`{code}` in {file}: update KNOWN"
    return found[0]


@pytest.mark.parametrize("file, code, what, tests", KNOWN, ids=[k[0] + ":" + k[2] for k in KNOWN])
def test_the_suite_catches_a_known_mutant(file, code, what, tests):
    m = find(file, code, what)
    workers = mutate.Workers(1)
    try:
        status, _, out = workers.run(m, tests.split(), "mutate", timeout=120)
    finally:
        workers.close()
    assert status.startswith("caught"), f"{status}: {m.id} {file}:{m.line} {what}\n{out}"
    # the named test fails (the same test passes unmutated in the suite itself)
    assert status == "caught (timeout)" or f"FAILED {tests}" in out, out
