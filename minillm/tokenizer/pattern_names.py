"""The pre-tokenisation patterns of real tokenizers, by name (patterns.py splits text with them).

    >>> resolve_pattern("cl100k") == (CL100K_PATTERN,)
    True
"""
from __future__ import annotations

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
    """A pattern name, a regex, or a sequence of regexes -> the tuple of stage regexes."""
    if pattern is None:
        return (GPT2_PATTERN,)
    if isinstance(pattern, str):
        return NAMED_PATTERNS.get(pattern, (pattern,))
    if isinstance(pattern, (tuple, list)) and pattern and all(isinstance(p, str) for p in pattern):
        return tuple(pattern)
    raise TypeError(f"pattern must be a name ({', '.join(sorted(NAMED_PATTERNS))}), a regex "
                    f"string or a non-empty list of regex strings, got {pattern!r}")
