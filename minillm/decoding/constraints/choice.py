"""One of a list of strings: ``Choice(["yes", "no"])`` is the regex ``(yes|no)``, each escaped.

``escape`` writes a literal text in the regex subset: every metacharacter ``\\ . ^ $ | ? * +
( ) [ ] { }`` gets a backslash, every other character (non-ASCII included) stands for itself.
Example: ``escape("1+1")  == "1\\\\+1"``; ``Choice(["a.b", "c"]).pattern == "(a\\\\.b|c)"``.
"""
from __future__ import annotations

from .guide import Regex

_META = frozenset("\\.^$|?*+()[]{}")


def escape(text: str) -> str:
    """``text`` as a regex matching exactly itself."""
    return "".join("\\" + c if c in _META else c for c in text)


class Choice:
    """A constraint: the reply is exactly one of ``choices`` (non-empty strings; duplicates are
    kept once, the order is kept). ``.pattern`` is the regex, ``.guide(tokenizer)`` its guide."""

    def __init__(self, choices):
        if isinstance(choices, str):
            raise TypeError("Choice takes a list of strings, not one string (Choice(['a', 'b']))")
        choices = list(choices)
        if not choices or any(not isinstance(c, str) or not c for c in choices):
            raise ValueError(f"Choice needs a non-empty list of non-empty strings, got {choices!r}")
        self.choices = tuple(dict.fromkeys(choices))
        self.pattern = "(" + "|".join(escape(c) for c in self.choices) + ")"

    def guide(self, tokenizer, eos_ids=None):
        """The token-level guide of ``pattern`` (``Regex.guide``: built once, cached)."""
        return Regex(self.pattern).guide(tokenizer, eos_ids)

    def __repr__(self) -> str:
        return f"Choice({list(self.choices)!r})"
