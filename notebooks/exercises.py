"""Exercises for the notebooks: ``check(name, your_function)`` tests your function and says, in
plain words, the first case where it is wrong — or how many cases it passed.

    from exercises import check
    def my_softmax(x): ...
    check("softmax", my_softmax)

Each exercise states the contract (``describe(name)`` prints it), a few hand-picked cases that
catch the usual mistakes (large logits, ties, the token that crosses p, …), then random cases
drawn by hypothesis — the library's test suite states the same properties in tests/ — and, when
one fails, the smallest failing case hypothesis can find. Solutions: notebooks/solutions/.
A function that returns None, a value of the wrong type or the wrong shape, or that changes its
input in place (``z -= z.max()``: the caller still needs it) is told so before any value is compared; a hint is added only when the answer is what the bug it names gives. The
checks live in ``exercise_checks/`` (one ``Exercise`` per name); this module runs them.
"""
from __future__ import annotations

import copy
import inspect

import numpy as np
from hypothesis import HealthCheck, given, settings

from exercise_checks import EXERCISES, Exercise
from exercise_checks.core import Wrong


class Result:
    """What ``check`` found: ``passed`` (bool), ``cases`` run, and the ``message`` it printed."""

    def __init__(self, name: str, passed: bool, cases: int, message: str, case=None):
        self.name, self.passed, self.cases, self.message = name, passed, cases, message
        self.case = case                        # the failing input, when it failed

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    def _ipython_display_(self) -> None:
        """Nothing: ``check`` has printed the message already (a cell ending in check(...))."""


class _NotWritten(Exception):
    pass


class _ReturnedNone(Exception):
    pass


class _ChangedInPlace(Exception):
    pass


def _plain(a) -> bool:
    """Numbers, text, arrays and lists / tuples of them: what a judge hands as an input."""
    if isinstance(a, (list, tuple)):
        return all(_plain(v) for v in a)
    return isinstance(a, (np.ndarray, np.generic, int, float, str, bytes, bool, type(None)))


def _snapshot(a):
    """A copy of an argument (an array, or a list / tuple of plain values), else None: what
    ``_changed`` compares after the call. Models, tokenizers and functions are not compared."""
    if isinstance(a, (np.ndarray, list, tuple)) and _plain(a):
        return copy.deepcopy(a)
    return None


def _changed(a, before) -> bool:
    if isinstance(before, np.ndarray):
        return not isinstance(a, np.ndarray) or a.shape != before.shape or \
            not np.array_equal(a, before, equal_nan=True)
    if isinstance(before, (list, tuple)):
        return not isinstance(a, (list, tuple)) or len(a) != len(before) or \
            any(_changed(x, b) for x, b in zip(a, before))
    return type(a) is not type(before) or bool(a != before)


def _names(fn, n: int) -> list[str]:
    """The learner's parameter names (for the message), else "argument 1", "argument 2", …"""
    try:
        names = [p for p in inspect.signature(fn).parameters][:n]
    except (TypeError, ValueError):
        names = []
    return names + [f"argument {i + 1}" for i in range(len(names), n)]


def _judge(exercise: Exercise, fn, case) -> str | None:
    """Run ``fn`` on one case: None when right, else "for <the input>: <what went wrong>"."""
    answers = []

    def learner(*args):
        before = [_snapshot(a) for a in args]     # the judge hands copies: compare them after
        answer = fn(*args)
        moved = [i for i, (a, b) in enumerate(zip(args, before)) if b is not None and _changed(a, b)]
        if moved:
            raise _ChangedInPlace(_names(fn, len(args))[moved[0]])
        if answer is None:
            raise _ReturnedNone
        answers.append(answer)
        return answer

    where = f"for {exercise.show(case)}: "
    try:
        with np.errstate(all="ignore"):          # overflow is reported as a wrong answer, not a warning
            verdict = exercise.judge(learner, case)
    except NotImplementedError:
        raise _NotWritten from None
    except _ReturnedNone:
        return where + "you returned None — did you forget `return`?"
    except _ChangedInPlace as moved:              # as notebook 14's grader (build_it_judge.py)
        name = moved.args[0]
        return where + (f"your function changed its input {name} in place (`{name} -= …`, `{name} *= …` or "
                        f"`{name}[…] = …`): the caller still needs it; compute a new array or list "
                        f"({name} = {name} − …)")
    except Wrong as wrong:                       # a str, a wrong shape, …: said before any value
        return where + str(wrong)
    except Exception as error:                  # the learner's bug, reported as such
        return where + f"your function raised {type(error).__name__}: {error}"
    if verdict is None:
        return None
    hint = next((h.text for h in exercise.hints if answers and _matches(h, case, answers[-1])), None)
    return where + verdict + (f" (hint: {hint})" if hint else "")


def _matches(hint, case, answer) -> bool:
    try:
        with np.errstate(all="ignore"):
            return bool(hint.matches(case, answer))
    except Exception:                           # a hint that cannot be evaluated does not match
        return False


def check(name: str, fn, max_examples: int | None = None, quiet: bool = False) -> Result:
    """Test ``fn`` as the exercise ``name``; print and return the verdict (a ``Result``)."""
    if name not in EXERCISES:
        raise ValueError(f"no exercise named {name!r}; the exercises are: {', '.join(EXERCISES)}")
    if not callable(fn):
        raise TypeError(f"check({name!r}, fn): fn must be a function, got {type(fn).__name__}")
    exercise = EXERCISES[name]
    n = max_examples if max_examples is not None else min(settings.default.max_examples, 100)
    try:
        result = _run(exercise, fn, n)
    except _NotWritten:
        result = Result(name, False, 0, f"… {name}: not written yet (replace `raise "
                                        f"NotImplementedError` with your code and run the cell again)")
    if not quiet:
        print(result.message)
    return result


def _run(exercise: Exercise, fn, n: int) -> Result:
    for i, case in enumerate(exercise.cases):               # hand-picked cases first
        message = _judge(exercise, fn, case)
        if message:
            return Result(exercise.name, False, i + 1, f"✗ {exercise.name}: {message}", case)
    failures: list[tuple] = []
    count = [0]

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(exercise.strategy)
    def random_cases(case):
        count[0] += 1
        message = _judge(exercise, fn, case)
        if message:
            failures.append((message, case))                # the last one is the shrunk one
            raise AssertionError(message)

    try:
        random_cases()
    except AssertionError:
        message, case = failures[-1]
        return Result(exercise.name, False, count[0], f"✗ {exercise.name}: {message}", case)
    total = len(exercise.cases) + count[0]
    return Result(exercise.name, True, total, f"✓ {exercise.name}: passed {total} cases")


def describe(name: str) -> None:
    """Print what the exercise ``name`` asks for."""
    print(f"{name}: {EXERCISES[name].task}")


NAMES = list(EXERCISES)
