"""Refuse a vocabulary that cannot be honoured, before it is used: a clear ValueError naming the
file and what is wrong, never a silently different tokenisation. Below them, the refusals the
Tokenizer makes while it runs (bad constructor or `encode` arguments, ids that name no token) and
`without_lone_surrogates` (what UTF-8 cannot encode, replaced as tiktoken does).

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

import operator
import reprlib
from collections.abc import Collection

import regex

MAX_ID = 1 << 24             # the largest token id accepted + 1 (files and Tokenizer(...))
_REPR = reprlib.Repr()       # (keyword arguments only from Python 3.12)
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 60, 60, 4, 4
PROBE_TIMEOUT_S = 0.25       # per probe; a real split pattern runs these in microseconds
PROBE_LENGTHS = (40, 4_000)  # exponential blow-ups show at 40 characters, polynomial ones later
PROBE_CHARS = "a1 \n!'中é\t."


def shown(value) -> str:
    """A short repr of any JSON value for a message (never recursing into deep nesting)."""
    return _REPR.repr(value)


def is_id(value) -> bool:
    """A JSON value usable as a token id: an int in [0, MAX_ID) that is not a bool."""
    return type(value) is int and 0 <= value < MAX_ID


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
    a pattern that is not a named one splits text under a time limit (pattern_names.time_limit).
    """
    for p in stages:
        if not isinstance(p, str) or not p:
            raise ValueError(f"{source}: a pattern must be a non-empty string, got {shown(p)}")
        try:
            rx = regex.compile(p)
        except (regex.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"{source}: pattern {p[:80]!r} is not a valid regex: {exc}") from None
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


# ----- while the Tokenizer runs ---------------------------------------------------------------
def check_tokenizer(encoder, special_tokens: dict, user_defined=(), **ids) -> None:
    """`Tokenizer(...)`'s arguments: a non-empty {bytes: id} vocabulary with ids in [0, MAX_ID),
    special tokens as non-empty strings with ids >= 0, user-defined tokens among them; ``ids``
    (bos_id= ...) None or a used id."""
    if not isinstance(encoder, dict) or not encoder:
        raise ValueError("a tokenizer needs a non-empty {token bytes: id} vocabulary")
    if min(encoder.values()) < 0:
        raise ValueError(f"token ids must be >= 0, got {min(encoder.values())}")
    top = max([*encoder.values(), *special_tokens.values()])
    if top >= MAX_ID:  # (the id -> bytes table has one slot per id)
        raise ValueError(f"token ids must be below {MAX_ID:,} (real vocabularies have up to "
                         f"~260,000 tokens), got {top:,}")
    for s, i in special_tokens.items():
        if not isinstance(s, str) or not s or not isinstance(i, int) or i < 0:
            raise ValueError(f"a special token must be a non-empty str with an id >= 0, "
                             f"got {s!r}: {i!r}")
    if isinstance(user_defined, str) or not set(user_defined) <= special_tokens.keys():
        raise ValueError(f"user_defined must be a collection of special tokens, got "
                         f"{shown(user_defined)}")
    for name, value in ids.items():
        if value is not None and not (0 <= value < top + 1):
            raise ValueError(f"{name}={value} is outside the vocabulary [0, {top + 1})")


def special_set(value, name: str, known: dict | None = None) -> frozenset:
    """An `allowed_special` (``known``: the special tokens) or `disallowed_special` argument that
    is not "all" -> a frozenset of strings; a str or a non-collection is a TypeError."""
    if not isinstance(value, Collection) or isinstance(value, str):
        kind = "a set of strings" if known is not None else \
            "a collection of strings (() to disable the check)"
        raise TypeError(f'{name} must be "all" or {kind}, got {value!r}')
    strings = frozenset(value)
    unknown = sorted(s for s in strings if s not in known) if known is not None else []
    if unknown:
        raise ValueError(f"{name} names {unknown}, which are not special tokens "
                         f"of this tokenizer (it has {sorted(known)[:8]}...)")
    return strings


def bad_id(ids, table: list) -> ValueError:
    """The error for ids that cannot be decoded, naming the first id that is not an integer
    (int, NumPy integer) with a token in `table` (id -> bytes, None where an id has no token)."""
    bad = next((i for i in ids if not _names_a_token(i, table)), None)
    return ValueError(f"cannot decode id {bad!r}: ids must be ints in [0, {len(table)}) that "
                      f"name a token")


def _names_a_token(token_id, table: list) -> bool:
    try:
        i = operator.index(token_id)  # (a 1-D array, a float or a str is not an integer)
    except TypeError:
        return False
    return 0 <= i < len(table) and table[i] is not None


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD, as
    tiktoken does: `"a\\ud800b"` -> `"a\\ufffdb"`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


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
