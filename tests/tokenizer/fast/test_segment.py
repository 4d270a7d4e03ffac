"""Cutting pre-tokens at safe boundaries never changes BPE's result (fast/segment.py)."""
import functools

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer.fast import merge
from minillm.tokenizer.fast.segment import SafeCuts, _chars_with, char_units, is_char, utf8_int
from tests.tokenizer.helpers import named, smollm2_from_gguf

# CJK, Cyrillic (o200k has tokens such as b"\xd0\xbe\xd0" that end mid-character), Latin, space
chars = st.sampled_from(list("海水会吸收较多红光的了是一不人天空蓝色оабвгд éa ") + ["\udce6"])


@functools.lru_cache(maxsize=None)
def cuts_of(name: str) -> SafeCuts:
    tok = smollm2_from_gguf() if name == "smollm2" else named(name)
    extra = (a + b for a, b in tok.merges) if tok.merges else ()
    return SafeCuts([*tok.encoder, *extra])


def test_char_units():
    assert char_units("a海b".encode()) == [b"a", "海".encode(), b"b"]
    assert char_units(b"\xb5\xb7 \xe6") == [b"\xb5\xb7", b" ", b"\xe6"]


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2"])
@given(st.lists(chars, min_size=1, max_size=40).map("".join))
def test_bpe_of_segments_equals_bpe_of_the_piece(name, piece):
    tok = smollm2_from_gguf() if name == "smollm2" else named(name)
    cuts = cuts_of(name)
    whole = merge.merge(piece.encode("utf-8", "surrogateescape"), tok.fast_encoder.rank)
    parts = [p for seg in cuts.split(piece)
             for p in merge.merge(seg.encode("utf-8", "surrogateescape"), tok.fast_encoder.rank)]
    assert parts == whole
    assert "".join(cuts.split(piece)) == piece
    assert list(cuts.split(piece)) == list(cuts.split_exact(piece))


def test_chinese_clause_is_cut_into_cacheable_segments():
    tok = named("gpt2")
    tok.encode("海水")  # builds the table
    assert len(list(tok.fast_encoder.safe_cuts.split("海水会吸收较多红光"))) > 3


def reference_split(cuts: SafeCuts, piece: str) -> list[str]:
    """The rule of the module docstring, boundary by boundary: cut between c1 and c2 unless both
    are ASCII, either is a lone surrogate, or a suffix of c1 and a prefix of c2 form a pair."""
    def ok(c1, c2):
        if (c1.isascii() and c2.isascii()) or any("\udc80" <= c <= "\udcff" for c in (c1, c2)):
            return False
        b1, b2 = c1.encode(), c2.encode()
        return not any((b1[i:], b2[:j]) in cuts.pairs
                       for i in range(len(b1)) for j in range(1, len(b2) + 1))
    segments, start = [], 0
    for k in range(1, len(piece)):
        if ok(piece[k - 1], piece[k]):
            segments.append(piece[start:k])
            start = k
    return segments + [piece[start:]]


@functools.lru_cache(maxsize=None)
def tricky_chars(name: str) -> list[str]:
    """Characters that steer `split` onto each of its paths for this vocabulary: both sides of
    whole-character pairs (bigrams), and for the other pairs the characters that end with the
    left unit or start with the right one (b"\\xb6" | b"\\xe6": 3 of each)."""
    cuts = cuts_of(name)
    ends, starts = {}, {}  # bytes -> the characters whose UTF-8 ends / starts with them
    for c in map(chr, [*range(0x80, 0xD800), *range(0xE000, 0x10000)]):
        b = c.encode()
        for i in range(len(b)):
            ends.setdefault(b[i:], []).append(c)
            starts.setdefault(b[:i + 1], []).append(c)
    pool = {c for b in sorted(cuts.bigrams)[:300] for c in b}
    for u1, u2 in cuts.pairs:
        if not (is_char(u1) and is_char(u2)):
            pool.update(ends.get(u1, [])[:3] + starts.get(u2, [])[:3])
    return sorted(pool)


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
@given(st.data())
def test_fast_split_equals_the_boundary_by_boundary_rule(name, data):
    cuts = cuts_of(name)
    mix = st.one_of(chars, st.sampled_from(tricky_chars(name)))
    piece = data.draw(st.lists(mix, min_size=1, max_size=40).map("".join))
    expected = reference_split(cuts, piece)
    assert list(cuts.split(piece)) == expected
    assert list(cuts.split_exact(piece)) == expected


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_every_pair_with_a_partial_character_blocks_its_cut(name):
    """Exhaustive over the pairs that the fast path's bigram set does not hold: for each, a few
    c1 ending with its left unit and c2 starting with its right unit, alone and amid Han."""
    cuts, pool = cuts_of(name), tricky_chars(name)
    for u1, u2 in [(u1, u2) for u1, u2 in cuts.pairs if not (is_char(u1) and is_char(u2))]:
        for c1 in [c for c in pool if c.encode().endswith(u1)][:3]:
            for c2 in [c for c in pool if c.encode().startswith(u2)][:3]:
                for piece in (c1 + c2, "海" + c1 + c2 + "水"):
                    assert list(cuts.split(piece)) == reference_split(cuts, piece), piece


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2"])
def test_no_token_is_ever_cut(name):
    """fast/pieces.py skips the whole-piece look-up when a piece has a safe cut: this is why.
    Every token of >= 2 characters, one of them not ASCII (invalid bytes as lone surrogates)."""
    tok = smollm2_from_gguf() if name == "smollm2" else named(name)
    cuts = cuts_of(name)
    texts = (t.decode("utf-8", "surrogateescape") for t in tok.encoder)
    cut = [s for s in texts if len(s) > 1 and not s.isascii() and list(cuts.split(s)) != [s]]
    assert cut == []


@pytest.mark.parametrize("unit", [b"\xb6", b"\xe6", b"\xe6\xb5", b"\xb5\xb7", b"\xc3", b"\xa9",
                                  b"\x80", "海".encode(), b"\xb6\xb6\xb6", b"\xf0\x9f"])
def test_characters_ending_or_starting_with_a_unit(unit):
    """The UTF-8 computed in NumPy finds the characters the definition finds (every non-ASCII
    BMP character, UTF-8 by Python, tested with endswith / startswith)."""
    everyone = [(c, c.encode()) for c in map(chr, [*range(0x80, 0xD800), *range(0xE000, 0x10000)])]
    assert _chars_with(unit, at_end=True) == {c for c, b in everyone
                                              if b.endswith(unit) and b != unit}
    assert _chars_with(unit, at_end=False) == {c for c, b in everyone
                                               if b.startswith(unit) and b != unit}


@given(st.lists(st.integers(0, 0xFFFF).filter(lambda c: not 0xD800 <= c < 0xE000), min_size=1))
def test_utf8_int_is_pythons_utf8(code_points):
    value, n = utf8_int(np.array(code_points, np.int64))
    assert value.tolist() == [int.from_bytes(chr(c).encode(), "big") for c in code_points]
    assert n.tolist() == [len(chr(c).encode()) for c in code_points]


def test_a_class_with_every_character_excluded_is_a_regex_matching_none():
    """Regression: a vocabulary whose merges join every byte pair marks every character rare;
    the class of the rest was "[]", which `re` refuses (fast=True failed where fast=False
    encoded the text)."""
    import re
    from minillm.tokenizer.fast.segment import bmp_class
    everything = {chr(cp) for cp in range(0x80, 0x10000) if not 0xD800 <= cp < 0xE000}
    plain = re.compile(bmp_class(everything) + "*")
    assert plain.fullmatch("") is not None and plain.fullmatch("海") is None
    assert re.compile(bmp_class(everything - {"海"}) + "*").fullmatch("海海") is not None
