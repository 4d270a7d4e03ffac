"""Special tokens (`<|endoftext|>`, `<|im_start|>`, ...) with tiktoken's semantics.
Where it runs — shared (every encode, the fast encoder's too): SpecialTokens.split.

A special token is a string that maps to one id and is never produced by ordinary BPE. Text from
a user that *contains* such a string must not silently become the control token (the
special-token injection attack), so `encode` guards:

* `disallowed_special="all"` (default): a special token not in `allowed_special` is a ValueError.
* `allowed_special={"<|endoftext|>"}` or `"all"`: those strings become their ids (GPT-2:
  `encode("hello <|endoftext|>", allowed_special="all")` -> `[31373, 220, 50256]`).
* `disallowed_special=()`: nothing is checked; not-allowed specials are encoded as ordinary text.

Where specials overlap (`<|a|>`, `<|a|>b|>`) the longest match wins (the alternation lists longer
strings first). *User-defined* tokens (GGUF token_type 4, HF added tokens with special=false) are
vocabulary: as in llama.cpp and HF, every encode (`encode_ordinary` too) splits them out.
"""
from __future__ import annotations

import functools

import regex

from .checks import special_in_text, special_set
from .patterns import split_isolated


def _alternation(strings) -> regex.Pattern:
    """A regex matching any of `strings`, longest first (so the longest match wins)."""
    longest_first = sorted(strings, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in longest_first))


class SpecialTokens:
    """The special tokens of a tokenizer ({str: id}) and the allowed/disallowed rules of encode."""

    def __init__(self, tokens: dict[str, int], user_defined=()):
        self.tokens = dict(tokens)
        self.user_defined = frozenset(user_defined)  # split out always (module docstring)
        # subtle: bounded, since callers may pass any set of strings as disallowed_special
        self.alternation = functools.lru_cache(maxsize=64)(_alternation)  # frozenset -> regex

    def resolve(self, allowed_special, disallowed_special) -> tuple[frozenset, frozenset]:
        """The `allowed_special` / `disallowed_special` arguments -> (allowed, disallowed) sets
        (a TypeError or ValueError for anything else: checks.special_set)."""
        allowed = frozenset(self.tokens) if allowed_special == "all" else \
            special_set(allowed_special, "allowed_special", known=self.tokens)
        disallowed = frozenset(self.tokens) - allowed if disallowed_special == "all" else \
            special_set(disallowed_special, "disallowed_special")
        return allowed | self.user_defined, disallowed  # (user-defined: always allowed)

    def guard(self, text: str, disallowed: frozenset) -> None:  # a disallowed special: raise
        if disallowed and (m := self.alternation(disallowed).search(text)):
            raise special_in_text(m.group(), m.start())

    def split(self, text: str, allowed: frozenset) -> list[tuple[str, int | None]]:
        """Text -> segments: (ordinary text, None) or (special string, its id).
        subtle: the text between two matches is never an allowed special (it would match)."""
        if not allowed:
            return [(text, None)]
        segments = split_isolated(self.alternation(allowed), text)  # matches and the text between
        return [(s, self.tokens[s] if s in allowed else None) for s in segments]
