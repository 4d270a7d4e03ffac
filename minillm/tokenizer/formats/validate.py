"""Refuse a vocabulary that cannot be honoured, before it is used: a clear ValueError naming the
file and what is wrong, never a silently different tokenisation. (What the Tokenizer refuses
while it runs, bad arguments and ids that name no token: ../checks.py.)

What a byte-level BPE vocabulary must satisfy (each check is one finding it prevents):

    ids            ints >= 0 (not bools, floats or strings: ``"10"`` or ``10.7`` are not 10)
    one id, one token   two tokens on one id (duplicate tiktoken ranks, two strings on one id in
                   encoder.json) would make ``decode(encode(x)) != x``
    special vs ordinary a special token on an ordinary token's id shadows that token
    merges         (pairs rule) both parts and their concatenation are tokens: a merge whose
                   result is not a token fails later with a misleading message or emits unk
    patterns       compile with ``regex``, and finish on adversarial probes within a time bound
                   (``(a|aa)+$`` backtracks exponentially: a 40-character text takes minutes)

Example::

    check_vocabulary({b"a": 0, b"b": 0}, None, {}, "x.tiktoken")
    ValueError: x.tiktoken: id 0 is given to two tokens, b'a' and b'b'
"""
from __future__ import annotations

import regex

from ..checks import MAX_ID, is_id, shown

PROBE_TIMEOUT_S = 0.25       # per probe; a real split pattern runs these in microseconds
PROBE_LENGTHS = (40, 4_000)  # exponential blow-ups show at 40 characters, polynomial ones later
PROBE_CHARS = "a1 \n!'中é\t."


def check_id(value, what: str, source: str):
    """None, or an int id >= 0; anything else (bool, float, string) is a ValueError."""
    if value is not None and not is_id(value):
        raise ValueError(f"{source}: {what} must be an integer id in [0, {MAX_ID:,}) (or absent), "
                         f"got {shown(value)} ({type(value).__name__})")
    return value


def check_vocabulary(encoder: dict, merges: dict | None, special_tokens: dict, source: str,
                     **ids) -> None:
    """Raise ValueError unless ids are unique ints, specials do not collide with ordinary tokens,
    and every merge (pairs rule) joins two tokens into a token. ``ids``: bos_id= eos_id= unk_id=."""
    ordinary = set(encoder.values())
    if len(ordinary) != len(encoder) or not all(is_id(i) for i in ordinary):
        _name_bad_id(encoder, source)                  # the slow loop, only to name the culprit
    special_ids: dict[int, str] = {}
    for text, i in special_tokens.items():
        if not isinstance(text, str) or not text or not is_id(i):
            raise ValueError(f"{source}: special token {shown(text)}: {shown(i)} must be a "
                             f"non-empty string with an integer id in [0, {MAX_ID:,})")
        if i in ordinary:
            token = next(t for t, j in encoder.items() if j == i)
            raise ValueError(f"{source}: special token {text!r} has id {i}, the id of the "
                             f"ordinary token {token!r}")
        if i in special_ids:
            raise ValueError(f"{source}: special tokens {special_ids[i]!r} and {text!r} share id {i}")
        special_ids[i] = text
    for name, value in ids.items():
        check_id(value, name, source)
    if merges:
        bad = [(pair, rank) for pair, rank in merges.items()
               if pair[0] not in encoder or pair[1] not in encoder or pair[0] + pair[1] not in encoder]
        if bad:
            (left, right), rank = min(bad, key=lambda b: b[1])
            missing = next(p for p in (left, right, left + right) if p not in encoder)
            raise ValueError(f"{source}: merge {rank} ({left!r} + {right!r}): {missing!r} is not "
                             f"a token of the vocabulary")


def _name_bad_id(encoder: dict, source: str) -> None:
    by_id: dict = {}
    for token, i in encoder.items():
        if not is_id(i):
            raise ValueError(f"{source}: token {token!r} has id {shown(i)}; ids must be integers "
                             f"in [0, {MAX_ID:,})")
        if i in by_id:
            raise ValueError(f"{source}: id {i} is given to two tokens, {by_id[i]!r} and {token!r} "
                             f"(duplicate ranks or ids)")
        by_id[i] = token


def check_patterns(stages, source: str) -> None:
    """Each pre-tokeniser regex must compile and run on adversarial probes within a time bound.

    subtle: a probe only finds the blow-ups it triggers. The probes catch the classic
    nested-quantifier shapes at load time; whatever slips past them is stopped where it runs:
    a pattern that is not a named one runs under the encode call's time budget (budget.py).
    """
    for p in stages:
        if not isinstance(p, str) or not p:
            raise ValueError(f"{source}: a pattern must be a non-empty string, got {shown(p)}")
        try:
            rx = regex.compile(p)
        except (regex.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"{source}: pattern {p[:80]!r} is not a valid regex: {exc}") from None
        probe_regex(rx, source)


def probe_regex(rx, source: str) -> None:
    """A ValueError unless the compiled regex ``rx`` runs on the adversarial probes (runs of
    each of its letters and digits, and of PROBE_CHARS, then a NUL) within PROBE_TIMEOUT_S each:
    Split stages and Replace normalisers alike."""
    p = rx.pattern
    literals = {c for c in p if c.isalnum()} | set(PROBE_CHARS)
    for c in sorted(literals)[:64]:
        for n in PROBE_LENGTHS:
            try:
                for _ in rx.finditer(c * n + "\x00", timeout=PROBE_TIMEOUT_S):
                    pass
            except TimeoutError:
                raise ValueError(f"{source}: pattern {p[:80]!r} takes over "
                                 f"{PROBE_TIMEOUT_S} s on {n} × {c!r} (catastrophic "
                                 f"backtracking); minillm refuses it") from None


def check_pattern_object(pattern, what: str) -> None:
    """A tokenizer.json pattern (of a Split pre-tokeniser, a Replace normaliser: `what`) is
    {"Regex": str} or {"String": str}; anything else is a ValueError."""
    if not (isinstance(pattern, dict) and len(pattern) == 1
            and isinstance(pattern.get("Regex", pattern.get("String")), str)):
        raise ValueError(f"tokenizer.json: a {what} pattern must be {{\"Regex\": str}} or "
                         f"{{\"String\": str}}, got {shown(pattern)}")


def json_kind(value, what: str, kinds: tuple, depth: int, steps: str) -> str:
    """The "type" of a tokenizer.json step (`what`: "normalizer", ...) that must be one of `kinds`,
    nested at most 8 deep; a Sequence must hold a list under `steps`. Else a ValueError."""
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in kinds or depth > 8:
        raise ValueError(f"tokenizer.json: {what} {shown(kind if kind else value)} is not "
                         f"supported (supported: {', '.join(kinds)}, nested at most 8 deep)")
    if kind == "Sequence" and not isinstance(value.get(steps), list):
        raise ValueError(f"tokenizer.json: a Sequence {what} needs a {steps} list")
    return kind


def written_spec(step, what: str):
    """The JSON a writer writes for a Tokenizer's normalizer / post_processor (`what`): its
    `spec` (formats/hf/normalizers.py, post_processors.py); None for None. A plain function has
    none to write: a ValueError."""
    if step is None:
        return None
    if not hasattr(step, "spec"):
        raise ValueError(f"the {what} {shown(step)} is not a tokenizer.json step (no .spec): it "
                         f"cannot be written to a file")
    return step.spec
