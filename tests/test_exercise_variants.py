"""The grader judges substance, not style: every correct variant of an exercise passes (any
tie-break the contract allows, list/tuple/ndarray, float32/float64, int widths, bool or additive
masks) and every typical wrong attempt fails with a message that names the input, says None /
wrong type / wrong shape before comparing values, and carries exactly the hint of its bug (or
none). The table is tests/exercise_variants/."""
import pytest

from tests.exercise_variants import VARIANTS
from tests.exercise_variants.common import NAMES

from exercise_checks import EXERCISES  # noqa: E402  (notebooks/ is on the path: common.py)
from exercises import check  # noqa: E402

RIGHT = [(name, a) for name, (right, _) in VARIANTS.items() for a in right]
WRONG = [(name, a) for name, (_, wrong) in VARIANTS.items() for a in wrong]


def label(value):
    return value.why if hasattr(value, "why") else value


def test_every_exercise_has_variants_and_at_least_three_wrong_attempts():
    assert sorted(VARIANTS) == sorted(NAMES)
    few = {name: len(wrong) for name, (right, wrong) in VARIANTS.items() if len(wrong) < 3 or not right}
    assert not few, f"fewer than 3 wrong attempts (or no right one): {few}"


@pytest.mark.parametrize("name, attempt", RIGHT, ids=label)
def test_a_correct_variant_passes(name, attempt):
    result = check(name, attempt.fn, quiet=True)
    assert result.passed, f"{attempt.why}: {result.message}"


@pytest.mark.parametrize("name, attempt", WRONG, ids=label)
def test_a_wrong_attempt_fails_naming_the_input_with_its_own_hint(name, attempt):
    result = check(name, attempt.fn, quiet=True)
    assert not result.passed, f"{attempt.why} passed: {result.message}"
    shown = EXERCISES[name].show(result.case)
    assert result.message.startswith(f"✗ {name}: for {shown}: you"), result.message
    hinted = result.message.partition(" (hint: ")[2]
    if attempt.hint:
        assert hinted.startswith(attempt.hint), f"{attempt.why}: expected hint {attempt.hint!r}: {result.message}"
    else:
        assert not hinted, f"{attempt.why}: a hint whose bug it is not: {result.message}"
    assert attempt.says is None or attempt.says in result.message, result.message


def test_every_hint_is_tested_with_the_bug_it_names():
    expected = {(name, a.hint) for name, a in WRONG if a.hint}
    untested = [(name, h.text) for name, ex in EXERCISES.items() for h in ex.hints
                if not any(n == name and h.text.startswith(hint) for n, hint in expected)]
    assert not untested, untested
