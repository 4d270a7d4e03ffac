"""The automata (automaton.py, byte_dfa.py): the character DFA full-matches exactly what
Python's `regex` full-matches (ASCII classes), and the byte DFA accepts exactly the UTF-8
encodings of what the character DFA accepts."""
import random

import pytest
import regex
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm.decoding.constraints.automaton import build_dfa, build_nfa
from minillm.decoding.constraints.byte_dfa import build_byte_dfa, utf8_sequences
from minillm.decoding.constraints.regex import parse
from tests.decoding.constraints.strategies import patterns, texts


def char_dfa(pattern):
    return build_dfa(build_nfa(parse(pattern)))


def drawn_dfa(pattern):
    """The DFA of a drawn pattern; the rare one refused as too large is not a case (its
    refusal is tested by name below)."""
    try:
        return char_dfa(pattern)
    except ValueError as refused:
        assume("too large" not in str(refused))
        raise


@given(patterns(), st.lists(texts(), min_size=1, max_size=20))
def test_dfa_fullmatch_equals_python_regex_fullmatch(pattern, samples):
    dfa = drawn_dfa(pattern)
    for text in samples:
        expected = regex.fullmatch(pattern, text, flags=regex.ASCII) is not None
        assert dfa.fullmatch(text) == expected, (pattern, text)


@given(patterns(), st.data())
def test_dfa_accepts_the_texts_python_regex_matches(pattern, data):
    """Texts drawn from matches, not at random, so acceptance is checked too (not only refusal)."""
    found = [t for t in data.draw(st.lists(texts(4), min_size=30, max_size=30))
             if regex.fullmatch(pattern, t, flags=regex.ASCII)]
    assume(found)
    dfa = drawn_dfa(pattern)
    assert all(dfa.fullmatch(t) for t in found)


@given(patterns(), st.lists(texts(), min_size=1, max_size=10),
       st.lists(st.binary(max_size=6), max_size=10))
def test_byte_dfa_accepts_exactly_the_utf8_of_what_the_char_dfa_accepts(pattern, samples, raw):
    chars = drawn_dfa(pattern)
    try:
        data = build_byte_dfa(chars)
    except ValueError as refused:
        assume("too large" not in str(refused))
        raise
    for text in samples:                                       # CJK and 4-byte characters too
        assert data.fullmatch(text.encode("utf-8")) == chars.fullmatch(text), (pattern, text)
        encoded = text.encode("utf-8")
        for cut in range(1, len(encoded)):                     # a cut mid-character never accepts
            try:
                head = encoded[:cut].decode("utf-8")
            except UnicodeDecodeError:
                assert not data.fullmatch(encoded[:cut])
            else:
                assert data.fullmatch(encoded[:cut]) == chars.fullmatch(head)
    for blob in raw:                                           # bytes that are not UTF-8: refused
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            assert not data.fullmatch(blob)
        else:
            assert data.fullmatch(blob) == chars.fullmatch(text)


def test_utf8_sequences_cover_each_range_exactly_once():
    rng = random.Random(42)
    cases = [(0, 0x10FFFF), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    while len(cases) < 300:
        lo = rng.randrange(0x110000)
        hi = min(0x10FFFF, lo + rng.choice([0, 5, 300, 70_000]))
        if hi < 0xD800 or lo > 0xDFFF:
            cases.append((lo, hi))
    for lo, hi in cases:
        if lo <= 0xD800 <= hi:                                  # callers never pass surrogates
            seqs = utf8_sequences(lo, 0xD7FF) + utf8_sequences(0xE000, hi)
            size = hi - lo + 1 - 0x800
        else:
            seqs, size = utf8_sequences(lo, hi), hi - lo + 1
        counted = 0
        for seq in seqs:
            n = 1
            for a, b in seq:
                n *= b - a + 1
            counted += n
        assert counted == size
        for code in {lo, hi, rng.randint(lo, hi)} - set(range(0xD800, 0xE000)):
            encoded = chr(code).encode("utf-8")
            holding = [s for s in seqs if len(s) == len(encoded)
                       and all(a <= x <= b for x, (a, b) in zip(encoded, s))]
            assert len(holding) == 1


@pytest.mark.parametrize("pattern, yes, no", [
    ("^[0-9]+$", ["7", "123"], ["", "1a", "\n"]),         # anchors at the ends: implied anyway
    ("[0-9]{1,3}", ["1", "123"], ["", "1234"]),
    ("中+文?", ["中", "中中文"], ["文", "中文文"]),
    ("😀|é", ["😀", "é"], ["😀é", ""]),
])
def test_small_patterns_match_what_they_say(pattern, yes, no):
    chars = char_dfa(pattern)
    data = build_byte_dfa(chars)
    assert all(chars.fullmatch(t) and data.fullmatch(t.encode()) for t in yes)
    assert not any(chars.fullmatch(t) or data.fullmatch(t.encode()) for t in no)


def test_dead_states_are_pruned_and_the_dfa_is_minimal():
    """(ab|ac)*x: 3 states (start, after a, after x); nothing unreachable from acceptance."""
    assert build_byte_dfa(char_dfa("(ab|ac)*x")).n_states == 3
    assert build_byte_dfa(char_dfa("[^\\x00-\\U0010FFFF]")).n_states == 0   # matches nothing
    data = build_byte_dfa(char_dfa("a(b|[^\\x00-\\U0010FFFF]c)"))
    assert data.walk(data.walk(0, b"a"), b"c") == -1       # c only after the impossible class


def test_absurd_sizes_are_refused_before_they_take_memory():
    with pytest.raises(ValueError, match="too large"):
        char_dfa("((a{1000}){1000}){1000}")
