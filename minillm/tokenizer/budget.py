"""One time budget per encode call for the regexes a file brings (Split stages, Replace
normalisers).

A regex from a tokenizer.json may backtrack without bound on some text (``(a|aa)+$`` on
"aaaa…!"). The load-time probes (formats/validate.py's probe_regex) catch the classic shapes; whatever slips
past is stopped where it runs, under ``time_limit(text)`` (checks.py: 1 s + 10 µs a
character) of regex time for the WHOLE encode call: every normaliser, every stage and every
piece draws on one budget. Only the regex loops' time is counted (not BPE, nor a cache built on
the first encode), so a slow first call never fails an ordinary text. (Per piece, a regex slow
on each of many pieces spent the full budget on each: 2.3 KB of text took 13.5 s, growing
linearly.)

    with encode_budget(text):                                    # Tokenizer.encode
        for m in timed_matches(rx, piece, current_budget(piece)):  # each timed regex call
            ...

subtle: ``regex``'s own timeout counts per match, not per ``finditer``; so each call's time is
taken from the budget (checked every CHECK_EVERY matches and at its end), and one match can
overrun it by at most the time left when its iteration began: a call ends within about twice
its budget. The time counted is that of the loop over the matches: the regex, and the little
its caller does per match (splitting appends a piece; BPE runs after).
"""
from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from dataclasses import dataclass

from .checks import time_limit


@dataclass
class Budget:
    """``seconds`` of regex time for a text of ``chars`` characters; ``left``: what remains."""
    seconds: float
    chars: int
    left: float

    @classmethod
    def for_text(cls, text: str) -> "Budget":
        seconds = time_limit(text)
        return cls(seconds, len(text), seconds)


CHECK_EVERY = 256     # matches between two looks at the clock (a look per match cost 16 %)
_CURRENT: ContextVar[Budget | None] = ContextVar("minillm_encode_budget", default=None)


@contextlib.contextmanager
def encode_budget(text: str):
    """The budget of one encode call of ``text``, for every timed regex call inside the block
    (an encode inside an encode keeps the outer one)."""
    if _CURRENT.get() is not None:
        yield
        return
    token = _CURRENT.set(Budget.for_text(text))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_budget(text: str) -> Budget:
    """The running encode call's budget; outside one (a split called on its own), ``text``'s."""
    return _CURRENT.get() or Budget.for_text(text)


def timed_matches(rx, text: str, budget: Budget | None, what: str = "the pre-tokenisation regex"):
    """``rx.finditer(text)`` (a ``regex``, or ``re``, pattern); with a ``budget`` (``regex``
    only), a ValueError naming ``what`` once it is spent."""
    if budget is None:
        return rx.finditer(text)
    return _within(rx, text, budget, what)


def _within(rx, text: str, budget: Budget, what: str):
    start, left = time.monotonic(), budget.left
    try:
        for n, m in enumerate(rx.finditer(text, timeout=max(left, 1e-6)), 1):
            if not n % CHECK_EVERY and time.monotonic() - start > left:
                raise TimeoutError
            yield m
    except TimeoutError:
        pass
    budget.left = left - (time.monotonic() - start)
    if budget.left < 0:
        raise ValueError(f"{what} {rx.pattern[:80]!r} ran past this encode call's time limit "
                         f"({budget.seconds:.1f} s for {budget.chars:,} characters): "
                         f"catastrophic backtracking?") from None
