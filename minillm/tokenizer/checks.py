"""The reading path's refusals: what `Tokenizer(...)`, `encode` and `decode` refuse, with a clear
ValueError / TypeError saying what was wrong and what is allowed, and the time limit under which a
regex that is not a named one splits text. Kept apart so that patterns.py, bpe.py, special.py and
tokenizer.py read as the algorithm. (A file's vocabulary is checked when it is read:
formats/validate.py.)

    check_tokenizer({}, {})          ValueError: a tokenizer needs a non-empty {token bytes: id} ...
    special_set("<|a|>", "allowed_special", {})   TypeError: allowed_special must be "all" or ...
"""
from __future__ import annotations

import operator
import reprlib
from collections.abc import Collection

import regex

MAX_ID = 1 << 24             # the largest token id accepted + 1 (files and Tokenizer(...))
_REPR = reprlib.Repr()       # (keyword arguments only from Python 3.12)
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 60, 60, 4, 4
MAX_SPECIAL_CHARS = 4096     # a special (added) token's length; the longest real ones: ~40
SECONDS_PER_CHAR = 1e-5      # 10 µs; a file's real pattern takes up to ~0.8 µs a character


def shown(value) -> str:
    """A short repr of any JSON value for a message (never recursing into deep nesting)."""
    return _REPR.repr(value)


def is_id(value) -> bool:
    """A JSON value usable as a token id: an int in [0, MAX_ID) that is not a bool."""
    return type(value) is int and 0 <= value < MAX_ID


def check_type(value, kind: type | tuple, what: str) -> None:
    """A TypeError unless `value` is a `kind`: `check_type(b"x", str, "encode")` ->
    "encode expects a str, got bytes"."""
    if not isinstance(value, kind):
        name = kind.__name__ if isinstance(kind, type) else kind[0].__name__
        raise TypeError(f"{what} expects a {name}, got {type(value).__name__}")


def check_tokenizer(encoder, special_tokens: dict, user_defined=(), steps=(), **ids) -> None:
    """`Tokenizer(...)`'s arguments: a non-empty {bytes: id} vocabulary with ids in [0, MAX_ID),
    special tokens as non-empty strings with ids >= 0, user-defined tokens among them; ``steps``
    (normalizer, post_processor) None or callable; ``ids`` (bos_id= ...) None or a used id."""
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
                             f"got {s!r:.80}: {i!r}")
        if len(s) > MAX_SPECIAL_CHARS:     # (1 MB took 3.5 s and its regex on the first encode)
            raise ValueError(f"special token {s[:40]!r}… (id {i}) is {len(s):,} characters; a "
                             f"special or added token is limited to {MAX_SPECIAL_CHARS:,} (real "
                             f"ones have at most a few dozen)")
    if isinstance(user_defined, str) or not set(user_defined) <= special_tokens.keys():
        raise ValueError(f"user_defined must be a collection of special tokens, got "
                         f"{shown(user_defined)}")
    for step in steps:
        if step is not None and not callable(step):
            raise TypeError(f"a normalizer (text -> text) or post_processor (ids -> ids) must be "
                            f"callable or None, got {shown(step)} (a tokenizer.json step: "
                            f"formats/hf/normalizers.py, post_processors.py)")
    for name, value in ids.items():
        if value is not None and not (0 <= value < top + 1):
            raise ValueError(f"{name}={value} is outside the vocabulary [0, {top + 1})")


def check_pattern(pattern) -> None:
    """A pre-tokenisation pattern: None, a regex string or a non-empty sequence of them."""
    if pattern is None or isinstance(pattern, str) or (
            isinstance(pattern, (tuple, list)) and pattern
            and all(isinstance(p, str) for p in pattern)):
        return
    raise TypeError(f"pattern must be a name (gpt2, r50k, cl100k, o200k; llama.cpp's: "
                    f"minillm.tokenizer.NAMED_PATTERNS), a regex string or a non-empty list of "
                    f"regex strings, got {pattern!r}")


def compile_stages(stages: tuple[str, ...]) -> list:
    """Each stage regex compiled with `regex`; a ValueError for one that does not compile."""
    try:
        return [regex.compile(p) for p in stages]
    except regex.error as exc:
        raise ValueError(f"invalid pre-tokenisation regex: {exc}") from None


def time_limit(text: str) -> float:
    """Seconds a file's regexes may take on `text`, all of one encode call together: 1 s + 10 µs
    a character. Past it, budget.timed_matches raises a ValueError.

    subtle: the margin is for real patterns on a busy machine. DeepSeek-V4's tokenizer.json
    regex spends ~0.6-0.8 µs a character on short alternating tokens ("a b\\n" repeated), and
    backtracking without bound is still caught: it grows with the square of the length or worse."""
    return 1.0 + SECONDS_PER_CHAR * len(text)


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


def special_in_text(token: str, at: int) -> ValueError:
    """The error for a text that contains a disallowed special token (special.py)."""
    return ValueError(f"the text contains the special token {token!r} (at character {at}). Pass "
                      f"allowed_special={{{token!r}}} (or \"all\") to encode it as the special "
                      f"token, or disallowed_special=() to encode it as ordinary text.")


def no_token_for(part: bytes) -> ValueError:
    """The error for bytes that have no token and no unknown token to stand for them (bpe.py)."""
    return ValueError(f"byte(s) {part.hex(' ')} have no token in this vocabulary and it has no "
                      f"unknown token")


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
