"""The pre-tokenisation patterns of real tokenizers, by name: tiktoken's (patterns.py) and
llama.cpp's, as GGUF files name them (`tokenizer.ggml.pre`). The loaders resolve a name with this
table and hand the Tokenizer a PreTokenizer that knows these stages run in linear time (no time
limit: `pre_tokenizer`).

    >>> resolve_pattern("smollm") == (r"\\p{N}", LLAMA_CPP_GPT2)
    True
"""
from __future__ import annotations

from ..checks import check_pattern
from ..patterns import GPT2_PATTERN, O200K_PATTERN, TIKTOKEN_PATTERNS, PreTokenizer

# llama.cpp's pre-tokenisers, by their `tokenizer.ggml.pre` names (GGUF). The regexes are the
# ones llama.cpp's src/llama-vocab.cpp runs for each name (its `regex_exprs`), stage by stage;
# the only change: its capture groups `(...)` are written `(?:...)` (same matches; `findall`
# then returns whole matches). Where llama.cpp rewrites a tokenizer.json regex for its own engine
# (`(?i:'s|...)` -> `(?:'[sS]|...)`), this table keeps llama.cpp's spelling.
# subtle: llama.cpp's GPT-2 regex has no final `|\s+`; a lone whitespace character it leaves
# unmatched is kept as a piece of its own (as here), which is what `\s+` would have matched.
LLAMA_CPP_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA_CPP_LLAMA3 = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
                    r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                    r"|\s+(?!\S)|\s+")
LLAMA_CPP_QWEN2 = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
                   r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                   r"|\s+(?!\S)|\s+")
# DeepSeek-LLM's letters: the cased letters (upper, lower, title case) as code-point ranges
_DEEPSEEK_LETTERS = (
    "A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1"
    "\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5"
    "\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a"
    "\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d"
    "\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3"
    "\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115"
    "\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f"
    "\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
    "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf"
    "\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f"
    "\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2"
    "\U000118a0-\U000118df\U0001e900-\U0001e943")
_CJK_HANGUL = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"     # 一-龥, U+0800-一, 가-U+D7FF
_CJK_KANA = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"       # 一-龥, hiragana, katakana
LLAMA_CPP_PRE: dict[str, tuple[str, ...]] = {
    "default": (r"[\p{P}\$\+<=>\^~\|]+", LLAMA_CPP_GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"),
    "gpt-2": (LLAMA_CPP_GPT2,), "olmo": (LLAMA_CPP_GPT2,), "mpt": (LLAMA_CPP_GPT2,),
    "phi-2": (LLAMA_CPP_GPT2,),
    "llama-bpe": (LLAMA_CPP_LLAMA3,), "llama3": (LLAMA_CPP_LLAMA3,),
    "llama-v3": (LLAMA_CPP_LLAMA3,), "dbrx": (LLAMA_CPP_LLAMA3,),
    "smaug-bpe": (LLAMA_CPP_LLAMA3,), "chatglm-bpe": (LLAMA_CPP_LLAMA3,),
    "glm4": (LLAMA_CPP_LLAMA3,),
    "qwen2": (LLAMA_CPP_QWEN2,), "deepseek-r1-qwen": (LLAMA_CPP_QWEN2,),
    "stablelm2": (LLAMA_CPP_QWEN2,), "megrez": (LLAMA_CPP_QWEN2,),
    "deepseek-llm": ("[\r\n]", rf"\s?[{_DEEPSEEK_LETTERS}]+",
                     "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
                     r"\s+$", _CJK_HANGUL, r"\p{N}+"),
    "deepseek-coder": ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_HANGUL, r"\p{N}"),
    "deepseek-v3": (r"\p{N}{1,3}", _CJK_KANA,
                    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
                    r"|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+"
                    r"|\s+(?!\S)|\s+"),
    "falcon": (r"[\p{P}\$\+<=>\^~\|]+", LLAMA_CPP_GPT2, r"[0-9][0-9][0-9]"),
    # digits one by one first, then GPT-2's regex
    **{name: (r"\p{N}", LLAMA_CPP_GPT2) for name in (
        "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b")},
    # Mistral's Tekken: llama.cpp spells "an upper-case letter" as "a letter that is not a-z"
    "tekken": (r"[^\r\n\p{L}\p{N}]?(?:(?=[\p{L}])[^a-z])*(?:(?=[\p{L}])[^A-Z])+"
               r"|[^\r\n\p{L}\p{N}]?(?:(?=[\p{L}])[^a-z])+(?:(?=[\p{L}])[^A-Z])*"
               r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
}
_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_NOT_SPACE_PUNCT = r" ?[^(\s|.,!?…。，、।۔،)]+"     # (the parentheses and "|" are in the class)
_GPT4O_LLAMA_CPP = (  # o200k as llama.cpp spells it: "upper case" is "a letter but not a-z"
    r"[^\r\n\p{L}\p{N}]?(?:(?=[\p{L}])[^a-z])*(?:(?=[\p{L}])[^A-Z])+" + _CONTRACTIONS + "?"
    r"|[^\r\n\p{L}\p{N}]?(?:(?=[\p{L}])[^a-z])+(?:(?=[\p{L}])[^A-Z])*" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_O200K_CASED = (  # tiktoken's o200k word alternatives, contractions spelled out (tiny_aya, youtu)
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    + _CONTRACTIONS + "?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    + _CONTRACTIONS + "?")
_DEEPSEEK_V3_WORDS = LLAMA_CPP_PRE["deepseek-v3"]
LLAMA_CPP_PRE.update({
    # Qwen 3.5: Qwen2's, with combining marks (\p{M}) kept with letters
    "qwen35": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
               r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    # the same regexes under other names
    **{n: (LLAMA_CPP_GPT2,) for n in (
        "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe", "jais", "trillion",
        "granite-docling")},
    **{n: (LLAMA_CPP_LLAMA3,) for n in (
        "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano")},
    **{n: (LLAMA_CPP_QWEN2,) for n in ("kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2")},
    **{n: _DEEPSEEK_V3_WORDS for n in ("hunyuan-dense", "joyai-llm", "hy_v4")},
    "mellum2": (r"\p{N}", LLAMA_CPP_GPT2),
    **{n: (_NOT_SPACE_PUNCT,) for n in ("poro-chat", "bloom", "gpt3-finnish")},
    "viking": (_NOT_SPACE_PUNCT, r"\p{N}"),
    **{n: (_GPT4O_LLAMA_CPP,) for n in ("llama4", "kanana2", "talkie", "minimax-m2")},
    "granite-embed-multi-97m": (_GPT4O_LLAMA_CPP.replace(r"(?=[\p{L}])", r"(?=[\p{L}\p{M}])"),),
    # subtle: llama.cpp's \d{1,3}(?=(?:\d{3})*\b) runs in std::regex, whose \d and \b are
    # ASCII: "1天" ends a word there (天 is a word character in `regex`), hence the spelling
    "tiny_aya": (r"[0-9]{1,3}(?=(?:[0-9]{3})*(?![0-9A-Za-z_]))", _O200K_CASED + r"|\p{N}{1,3}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "youtu": ("[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
              _O200K_CASED + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "spark2_5": (r"\p{N}{1,3}", _CJK_KANA,
                 r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
                 r"|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+",
                 r"\p{N}"),
    "chameleon": (r"<sentinel:[0-9]+>", r"(?:IMGIMG)(?:(?:A|B|C|D|E|F|G|H|I){1,4})Z",
                  r"(?:[\t\n]|    |  )", r"\p{N}", r"[\p{P}!-/:-@\[-`{-~]", LLAMA_CPP_GPT2),
    "jais-2": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+" + "".join(rf"|\s{{{n}}}(?!\S)" for n in (512, 256, 128, 64, 32, 16, 8, 4))
               + r"|\s{1,2}(?!\S)|\s{1}",),
    **{n: (r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
           r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",)
       for n in ("bailingmoe", "bailingmoe2", "llada-moe")},
    "seed-coder": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+"
                   r"|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "ufakzeka": (r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                 r"|\s+(?!\S)|\s+",),
    "laguna": (r"[^\n]+|[\n]+", LLAMA_CPP_QWEN2),
    "exaone-moe": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",),
    "minicpm5": (r"\p{N}{1,3}", _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
})
# the names for which llama.cpp looks a whole pre-token up first (its `ignore_merges`)
LLAMA_CPP_IGNORE_MERGES = frozenset({
    "llama-bpe", "llama3", "llama-v3", "tekken", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
    "lfm2", "jina-v5-nano", "minicpm5", "youtu", "granite-embed-multi-97m"})
# llama.cpp's names it splits with its own code, not a regex (not implemented here): digits in
# groups counted from the right ("afmoe", "superbpe"), Han handled apart ("kimi-k2")
LLAMA_CPP_CUSTOM_SPLIT = frozenset({"afmoe", "superbpe", "kimi-k2"})

# name -> stages: tiktoken's names (gpt2, r50k_base, ...) and llama.cpp's above.
NAMED_PATTERNS: dict[str, tuple[str, ...]] = {
    **{name: (stage,) for name, stage in TIKTOKEN_PATTERNS.items()},
    "gpt-4o": (O200K_PATTERN,),   # llama.cpp's name; tiktoken's regex (llama.cpp emulates it)
    **LLAMA_CPP_PRE,
}
# every stage regex of the table: known to run in linear time (no time limit: checks.time_limit)
KNOWN_STAGES = frozenset(p for stages in NAMED_PATTERNS.values() for p in stages)


def resolve_pattern(pattern: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """A pattern name (tiktoken's or llama.cpp's), a regex, or a sequence of regexes -> the tuple
    of stage regexes (None: GPT-2's)."""
    check_pattern(pattern)
    if pattern is None:
        return (GPT2_PATTERN,)
    return NAMED_PATTERNS.get(pattern, (pattern,)) if isinstance(pattern, str) else tuple(pattern)


def pre_tokenizer(pattern) -> PreTokenizer:
    """`resolve_pattern(pattern)` as a PreTokenizer that splits the named stages untimed."""
    return PreTokenizer(resolve_pattern(pattern), known=KNOWN_STAGES)
