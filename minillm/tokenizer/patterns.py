"""Pre-tokenisation: split text into pieces with a regex before BPE ever sees it.
Where it runs — definition only (the default's split is tokenizer/fast/split.py, tested equal in tests/tokenizer/test_fast_equals_reading.py, and Tokenizer(..., fast=False) runs this one): PreTokenizer.split.

BPE never merges across a piece boundary, so the pattern decides what a token *can* be: GPT-2's
pattern keeps a leading space with the word (`" world"`), splits digits from letters and keeps
contractions (`"'ll"`) apart. Example with GPT-2's pattern::

    "Hello world's 2024!!"  ->  ["Hello", " world", "'s", " 2024", "!!"]

A pre-tokeniser is a list of *stages*, each splitting every piece of the one before, keeping the
matches and the text between them (Hugging Face's `Split`, "Isolated"). tiktoken has one stage;
SmolLM's first isolates every digit (`\\p{N}`), then applies GPT-2's (llama.cpp's, by name:
formats/pattern_names.py).

subtle: tiktoken *drops* text that its pattern does not match, Hugging Face keeps it as a piece.
The named patterns match every character, so the two agree on them; for a custom pattern we
keep the gaps, so `decode(encode(s)) == s` holds for any pattern.
"""
from __future__ import annotations

from .budget import current_budget, timed_matches
from .checks import check_pattern, compile_stages

# tiktoken's spellings (possessive `++` runs faster in `regex`, same matches). GPT-2 as released: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
# cl100k (GPT-4; also Llama-3's "llama-bpe"): case-insensitive contractions, numbers in groups of
# at most 3 digits, one leading non-letter glued to a word, newlines kept with punctuation.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
                  r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
# o200k (GPT-4o): words split at case changes (camelCase -> camel, Case), contractions attached.
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+"""])
TIKTOKEN_PATTERNS = {**dict.fromkeys(("gpt2", "r50k", "r50k_base", "p50k_base"), GPT2_PATTERN),
                     "cl100k": CL100K_PATTERN, "cl100k_base": CL100K_PATTERN,
                     "o200k": O200K_PATTERN, "o200k_base": O200K_PATTERN}


class PreTokenizer:
    """Splits text with regex stages: `pattern`, a tiktoken name, a regex or a list of them (None:
    GPT-2's). `known`: stages that run in linear time (tiktoken's; the loaders add llama.cpp's)."""

    def __init__(self, pattern: str | tuple[str, ...] | list[str] | None = None, *,
                 known=frozenset(TIKTOKEN_PATTERNS.values())):
        check_pattern(pattern)
        if pattern is None or isinstance(pattern, str):  # a name or one regex: one stage
            pattern = [TIKTOKEN_PATTERNS.get(pattern or "gpt2", pattern)]
        self.stages = tuple(pattern)
        self.known = frozenset(known)
        self._compiled = compile_stages(self.stages)  # [regex.compile(p) for p in stages], checked
        # subtle: a file's regex may backtrack without bound (`(a+)+$`): unless known, time-limited
        self.timed = not set(self.stages) <= self.known

    def split(self, text: str) -> list[str]:  # -> pieces; "".join(pieces) == text always
        budget = current_budget(text) if self.timed else None   # (one for every piece)
        pieces = [text]
        for rx in self._compiled:
            pieces = [p for piece in pieces for p in split_isolated(rx, piece, budget)]
        return pieces


def split_isolated(rx, text: str, budget=None) -> list[str]:
    """Non-empty matches of `rx` (a `regex`, or `re`, pattern) and the non-empty gaps between
    them, in order: `split_isolated(regex.compile(r"\\d+"), "ab12c")` -> `["ab", "12", "c"]`."""
    pieces, end = [], 0
    for m in timed_matches(rx, text, budget):  # (a ValueError once a budget.Budget is spent)
        if m.start() > end:
            pieces.append(text[end:m.start()])
        if m.end() > m.start():
            pieces.append(m.group())
        end = m.end()
    if end < len(text):
        pieces.append(text[end:])
    return pieces
