"""Pre-tokenisation: split text into pieces with a regex before BPE ever sees it.

BPE never merges across a piece boundary, so the pattern decides what a token *can* be: GPT-2's
pattern keeps a leading space with the word (`" world"`), splits digits from letters and keeps
contractions (`"'ll"`) apart. Example with GPT-2's pattern::

    "Hello world's 2024!!"  ->  ["Hello", " world", "'s", " 2024", "!!"]

A pre-tokeniser here is a list of *stages*; each stage splits every piece of the previous stage
with its regex, keeping both the matches and the text between them (Hugging Face's `Split` with
`behavior="Isolated"`). One stage is what tiktoken does; Hugging Face / llama.cpp tokenizers such
as SmolLM's first isolate every digit (`\\p{N}`) and then apply GPT-2's pattern.

The patterns of real tokenizers are in pattern_names.py (GPT-2's, the default, is shown there).

subtle: tiktoken *drops* text that its pattern does not match, Hugging Face keeps it as a piece.
The named patterns match every character, so the two agree on them; for a custom pattern we
keep the gaps, so `decode(encode(s)) == s` holds for any pattern.
"""
from __future__ import annotations

from .formats.pattern_names import (KNOWN_STAGES, compile_stages, resolve_pattern, time_limit,
                            timed_matches)


class PreTokenizer:
    """Splits text into pieces with one or more regex stages (see the module docstring)."""

    def __init__(self, pattern: str | tuple[str, ...] | list[str] | None = None):
        self.stages = resolve_pattern(pattern)
        self._compiled = compile_stages(self.stages)  # [regex.compile(p) for p in stages], checked
        # subtle: a regex from a file may backtrack without bound (`(a+)+$`); unless every stage is
        # one of the named patterns, splitting runs under a time limit (pattern_names.time_limit)
        self.timed = not set(self.stages) <= KNOWN_STAGES

    def split(self, text: str) -> list[str]:
        """Text -> pieces; `"".join(pieces) == text` always."""
        timeout = time_limit(text) if self.timed else None
        pieces = [text]
        for rx in self._compiled:
            pieces = [p for piece in pieces for p in split_isolated(rx, piece, timeout)]
        return pieces


def split_isolated(rx, text: str, timeout: float | None = None) -> list[str]:
    """Non-empty matches of `rx` (a `regex`, or `re`, pattern) and the non-empty gaps between
    them, in order: `split_isolated(regex.compile(r"\\d+"), "ab12c")` -> `["ab", "12", "c"]`."""
    pieces, end = [], 0
    for m in timed_matches(rx, text, timeout):  # (a ValueError past `timeout` seconds)
        if m.start() > end:
            pieces.append(text[end:m.start()])
        if m.end() > m.start():
            pieces.append(m.group())
        end = m.end()
    if end < len(text):
        pieces.append(text[end:])
    return pieces
