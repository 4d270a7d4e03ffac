"""Pre-tokenisation: split text into pieces with a regex before BPE ever sees it.

BPE never merges across a piece boundary, so the pattern decides what a token *can* be: GPT-2's
pattern keeps a leading space with the word (`" world"`), splits digits from letters and keeps
contractions (`"'ll"`) apart. Example with GPT-2's pattern::

    "Hello world's 2024!!"  ->  ["Hello", " world", "'s", " 2024", "!!"]

A pre-tokeniser here is a list of *stages*; each stage splits every piece of the previous stage
with its regex, keeping both the matches and the text between them (Hugging Face's `Split` with
`behavior="Isolated"`). One stage is what tiktoken does; Hugging Face / llama.cpp tokenizers such
as SmolLM's first isolate every digit (`\\p{N}`) and then apply GPT-2's pattern.

The patterns of real tokenizers are in pattern_names.py; GPT-2's (the default) is

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

subtle: tiktoken *drops* text that its pattern does not match, Hugging Face keeps it as a piece.
The named patterns match every character, so the two agree on them; for a custom pattern we
keep the gaps, so `decode(encode(s)) == s` holds for any pattern.
"""
from __future__ import annotations

import regex

from .pattern_names import KNOWN_STAGES, resolve_pattern


class PreTokenizer:
    """Splits text into pieces with one or more regex stages (see the module docstring)."""

    def __init__(self, pattern: str | tuple[str, ...] | list[str] | None = None):
        self.stages = resolve_pattern(pattern)
        try:
            self._compiled = [regex.compile(p) for p in self.stages]
        except regex.error as exc:
            raise ValueError(f"invalid pre-tokenisation regex: {exc}") from None
        # subtle: a regex from a file may backtrack without bound (`(a+)+$`); unless every stage is
        # one of the named patterns, splitting runs under a time limit (see `time_limit`)
        self.timed = not set(self.stages) <= KNOWN_STAGES

    def split(self, text: str) -> list[str]:
        """Text -> pieces; `"".join(pieces) == text` always."""
        timeout = time_limit(text) if self.timed else None
        pieces = [text]
        for rx in self._compiled:
            pieces = [p for piece in pieces for p in split_isolated(rx, piece, timeout)]
        return pieces


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD, as
    tiktoken does: `"a\\ud800b"` -> `"a\\ufffdb"`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


SECONDS_PER_CHAR = 1e-5  # 10 µs; a file's real pattern takes up to ~0.8 µs a character


def time_limit(text: str) -> float:
    """Seconds a file's regex may take on `text`: 1 s + 10 µs a character. Past it,
    `split_isolated` raises a ValueError.

    subtle: the margin is for real patterns on a busy machine. DeepSeek-V4's tokenizer.json
    regex spends ~0.6-0.8 µs a character on short alternating tokens ("a b\\n" repeated), and
    backtracking without bound is still caught: it grows with the square of the length or worse."""
    return 1.0 + SECONDS_PER_CHAR * len(text)


def split_isolated(rx, text: str, timeout: float | None = None) -> list[str]:
    """Non-empty matches of `rx` (a `regex`, or `re`, pattern) and the non-empty gaps between
    them, in order. `timeout` (seconds, `regex` only): a ValueError past it."""
    pieces, end = [], 0
    matches = rx.finditer(text) if timeout is None else rx.finditer(text, timeout=timeout)
    try:
        for m in matches:
            if m.start() > end:
                pieces.append(text[end:m.start()])
            if m.end() > m.start():
                pieces.append(m.group())
            end = m.end()
    except TimeoutError:
        raise ValueError(f"the pre-tokenisation regex {rx.pattern[:80]!r} took over {timeout:.1f} "
                         f"s on {len(text):,} characters (catastrophic backtracking?)") from None
    if end < len(text):
        pieces.append(text[end:])
    return pieces
