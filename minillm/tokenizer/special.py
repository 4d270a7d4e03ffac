"""Special tokens (`<|endoftext|>`, `<|im_start|>`, ...) with tiktoken's semantics.

A special token is a string that maps to one id and is never produced by ordinary BPE. Text from
a user that *contains* such a string must not silently become the control token (the
special-token injection attack), so `encode` guards:

* `disallowed_special="all"` (default): every special token not in `allowed_special` is
  disallowed; text containing one raises `ValueError`.
* `allowed_special={"<|endoftext|>"}` or `"all"`: those strings become their ids.
* `disallowed_special=()`: nothing is checked; not-allowed specials are encoded as ordinary text.

Example (GPT-2): `encode("hello <|endoftext|>", allowed_special="all")` -> `[31373, 220, 50256]`.

When specials overlap (`<|a|>` and `<|a|>b|>`) the longest match at a position wins: the regex
alternation lists longer strings first. Adjacent specials (`<|endoftext|><|endoftext|>`) are two
matches.
"""
from __future__ import annotations

import functools
from collections.abc import Collection

import regex


def _alternation(strings) -> regex.Pattern:
    """A regex matching any of `strings`, longest first (so the longest match wins)."""
    longest_first = sorted(strings, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in longest_first))


class SpecialTokens:
    """The special tokens of a tokenizer and the allowed/disallowed logic of `encode`."""

    def __init__(self, tokens: dict[str, int]):
        for s, i in tokens.items():
            if not isinstance(s, str) or not s or not isinstance(i, int) or i < 0:
                raise ValueError(f"a special token must be a non-empty str with an id >= 0, "
                                 f"got {s!r}: {i!r}")
        self.tokens = dict(tokens)
        # subtle: bounded, since callers may pass any set of strings as disallowed_special
        self._regex = functools.lru_cache(maxsize=64)(_alternation)  # frozenset -> regex

    def resolve(self, allowed_special, disallowed_special) -> tuple[frozenset, frozenset]:
        """The `allowed_special` / `disallowed_special` arguments -> (allowed, disallowed) sets."""
        if allowed_special == "all":
            allowed = frozenset(self.tokens)
        elif isinstance(allowed_special, Collection) and not isinstance(allowed_special, str):
            allowed = frozenset(allowed_special)
            unknown = sorted(s for s in allowed if s not in self.tokens)
            if unknown:
                raise ValueError(f"allowed_special names {unknown}, which are not special tokens "
                                 f"of this tokenizer (it has {sorted(self.tokens)[:8]}...)")
        else:
            raise TypeError(f'allowed_special must be "all" or a set of strings, '
                            f"got {allowed_special!r}")
        if disallowed_special == "all":
            disallowed = frozenset(self.tokens) - allowed
        elif isinstance(disallowed_special, Collection) and not isinstance(disallowed_special, str):
            disallowed = frozenset(disallowed_special)
        else:
            raise TypeError(f'disallowed_special must be "all" or a collection of strings '
                            f"(() to disable the check), got {disallowed_special!r}")
        return allowed, disallowed

    def guard(self, text: str, disallowed: frozenset) -> None:
        """Raise if `text` contains a disallowed special token."""
        if disallowed and (m := self._regex(disallowed).search(text)):
            raise ValueError(
                f"the text contains the special token {m.group()!r} (at character {m.start()}). "
                f"Pass allowed_special={{{m.group()!r}}} (or \"all\") to encode it as the special "
                f"token, or disallowed_special=() to encode it as ordinary text.")

    def split(self, text: str, allowed: frozenset) -> list[tuple[str, int | None]]:
        """Text -> segments: (ordinary text, None) or (special string, its id)."""
        segments: list[tuple[str, int | None]] = []
        end = 0
        for m in self._regex(allowed).finditer(text):
            if m.start() > end:
                segments.append((text[end:m.start()], None))
            segments.append((m.group(), self.tokens[m.group()]))
            end = m.end()
        if end < len(text):
            segments.append((text[end:], None))
        return segments
