"""Pre-tokenisation: split text into pieces with a regex before BPE ever sees it.

BPE never merges across a piece boundary, so the pattern decides what a token *can* be: GPT-2's
pattern keeps a leading space with the word (`" world"`), splits digits from letters and keeps
contractions (`"'ll"`) apart. Example with GPT-2's pattern::

    "Hello world's 2024!!"  ->  ["Hello", " world", "'s", " 2024", "!!"]

A pre-tokeniser here is a list of *stages*; each stage splits every piece of the previous stage
with its regex, keeping both the matches and the text between them (Hugging Face's `Split` with
`behavior="Isolated"`). One stage is what tiktoken does; Hugging Face / llama.cpp tokenizers such
as SmolLM's first isolate every digit (`\\p{N}`) and then apply GPT-2's pattern.

subtle: tiktoken *drops* text that its pattern does not match, Hugging Face keeps it as a piece.
The named patterns below match every character, so the two agree on them; for a custom pattern we
keep the gaps, so `decode(encode(s)) == s` holds for any pattern.
"""
from __future__ import annotations

import regex

# tiktoken's spellings (possessive quantifiers `++` run faster in `regex` and are equivalent).
# GPT-2 as released: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
# cl100k (GPT-4; also Llama-3's "llama-bpe"): case-insensitive contractions, numbers in groups of
# at most 3 digits, one leading non-letter glued to a word, newlines kept with punctuation.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
                  r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
# o200k (GPT-4o): words split at case changes (camelCase -> camel, Case), contractions attached.
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
# Qwen2: like cl100k but every digit alone.
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
                 r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
DIGIT_PATTERN = r"\p{N}"  # Hugging Face `Digits(individual_digits=True)`: every digit alone

# name -> stages. Names are tiktoken's (gpt2, r50k_base, ...) and llama.cpp's `tokenizer.ggml.pre`
# values (see llama.cpp's llama-vocab.cpp, which lists the regexes behind each name).
NAMED_PATTERNS: dict[str, tuple[str, ...]] = {
    "gpt2": (GPT2_PATTERN,), "r50k": (GPT2_PATTERN,), "r50k_base": (GPT2_PATTERN,),
    "p50k_base": (GPT2_PATTERN,), "gpt-2": (GPT2_PATTERN,), "default": (GPT2_PATTERN,),
    "cl100k": (CL100K_PATTERN,), "cl100k_base": (CL100K_PATTERN,), "llama-bpe": (CL100K_PATTERN,),
    "llama3": (CL100K_PATTERN,),
    "o200k": (O200K_PATTERN,), "o200k_base": (O200K_PATTERN,), "gpt-4o": (O200K_PATTERN,),
    "qwen2": (QWEN2_PATTERN,),
    # llama.cpp groups these: digits isolated first, then GPT-2's pattern.
    "smollm": (DIGIT_PATTERN, GPT2_PATTERN), "starcoder": (DIGIT_PATTERN, GPT2_PATTERN),
    "refact": (DIGIT_PATTERN, GPT2_PATTERN), "codeshell": (DIGIT_PATTERN, GPT2_PATTERN),
}


def resolve_pattern(pattern: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """A pattern name, a regex, or a sequence of regexes -> the tuple of stage regexes.

    >>> resolve_pattern("cl100k") == (CL100K_PATTERN,)
    True
    """
    if pattern is None:
        return (GPT2_PATTERN,)
    if isinstance(pattern, str):
        return NAMED_PATTERNS.get(pattern, (pattern,))
    if isinstance(pattern, (tuple, list)) and pattern and all(isinstance(p, str) for p in pattern):
        return tuple(pattern)
    raise TypeError(f"pattern must be a name ({', '.join(sorted(NAMED_PATTERNS))}), a regex "
                    f"string or a non-empty list of regex strings, got {pattern!r}")


class PreTokenizer:
    """Splits text into pieces with one or more regex stages (see the module docstring)."""

    def __init__(self, pattern: str | tuple[str, ...] | list[str] | None = None):
        self.stages = resolve_pattern(pattern)
        try:
            self._compiled = [regex.compile(p) for p in self.stages]
        except regex.error as exc:
            raise ValueError(f"invalid pre-tokenisation regex: {exc}") from None

    def split(self, text: str) -> list[str]:
        """Text -> pieces; `"".join(pieces) == text` always."""
        pieces = [text]
        for rx in self._compiled:
            pieces = [p for piece in pieces for p in split_isolated(rx, piece)]
        return pieces


def split_isolated(rx, text: str) -> list[str]:  # rx: a `regex` (or `re`) pattern
    """Non-empty matches of `rx` and the non-empty gaps between them, in order."""
    pieces, end = [], 0
    for m in rx.finditer(text):
        if m.start() > end:
            pieces.append(text[end:m.start()])
        if m.end() > m.start():
            pieces.append(m.group())
        end = m.end()
    if end < len(text):
        pieces.append(text[end:])
    return pieces
