"""The stdlib-`re` pre-tokeniser (fast/stdlib_re.py, fast/split.py) splits as the `regex` one."""
import re

import pytest
import regex
from hypothesis import given, strategies as st

from minillm.tokenizer.fast.split import FastSplit
from minillm.tokenizer.fast.stdlib_re import (PROPERTIES, class_body, compile_stdlib, has_astral,
                                              translate)
from minillm.tokenizer.formats.pattern_names import KNOWN_STAGES, pre_tokenizer
from minillm.tokenizer.patterns import PreTokenizer, split_isolated

# Hugging Face's spellings (Llama-3, Qwen2 tokenizer.json), next to the named patterns
HF_PATTERNS = [
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
]
STAGES = sorted(KNOWN_STAGES) + HF_PATTERNS
# one or more of every kind the patterns tell apart: letters of each case class, marks, numbers
# that are not digits, whitespace that `re` and `regex` could disagree on (\x1c-\x1f, \x85),
# characters that case-fold onto ASCII (long s, Kelvin sign), contractions, lone surrogates
TRICKY = [*"aZ09 \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2028\u3000",
          *"'’ſKİǅʰ海水\u0301²½Ⅻ٣!?.,-",
          "\udc80", "\udcff", "'s", "'LL", "'Re"]
texts = st.one_of(st.lists(st.sampled_from(TRICKY), max_size=40).map("".join),
                  st.text(st.characters(max_codepoint=0xFFFF), max_size=40))


TRANSLATED = [pattern for pattern in STAGES if compile_stdlib(pattern) is not None]


def test_only_punctuation_and_symbol_classes_stay_with_regex():
    r"""The stages `re` cannot spell are llama.cpp's with \p{P} / \p{S}, and only those."""
    for pattern in STAGES:
        assert (pattern not in TRANSLATED) == bool(regex.search(r"\\p\{[PS]\}", pattern)), pattern


@pytest.mark.parametrize("pattern", TRANSLATED)
@given(texts)
def test_stdlib_re_splits_like_regex(pattern, text):
    fast = compile_stdlib(pattern)
    assert split_isolated(fast, text) == split_isolated(regex.compile(pattern), text)


@pytest.mark.parametrize("name", PROPERTIES + ("s",))
def test_class_bodies_match_regex_on_every_bmp_character(name):
    bmp = "".join(map(chr, range(0x10000)))
    prop = r"\s" if name == "s" else rf"\p{{{name}}}"
    assert re.findall(f"[{class_body(name)}]", bmp) == regex.findall(prop, bmp)


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm"])
@given(st.text(max_size=30))
def test_pretokenizer_picks_an_engine_and_splits_the_same(name, text):
    # any text: with characters above U+FFFF it must go to `regex` (has_astral)
    fast, slow = FastSplit(pre_tokenizer(name)), pre_tokenizer(name)
    assert fast.stdlib is not None
    assert fast(text) == slow.split(text)
    assert has_astral(text) == any(ord(c) > 0xFFFF for c in text)


@pytest.mark.parametrize("pattern", [r"\w+", r"\d", r"(?i:\p{L})", r"[[a]]", r"[\S]", r"\p{Han}",
                                     r"(?P<x>a)", r"[]a]", r"[a-z--b]", r"\X"])
def test_untranslatable_patterns_fall_back_to_regex(pattern):
    assert translate(pattern) is None
    split = FastSplit(PreTokenizer(pattern))
    assert split.stdlib is None
    assert "".join(split("ab 12 海")) == "ab 12 海"
