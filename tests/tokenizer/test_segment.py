"""Cutting pre-tokens at safe boundaries never changes BPE's result (segment.py)."""
import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer import bpe
from minillm.tokenizer.segment import SafeCuts, char_units
from tests.tokenizer.helpers import named, smollm2_from_gguf

# CJK, Cyrillic (o200k has tokens such as b"\xd0\xbe\xd0" that end mid-character), Latin, space
chars = st.sampled_from(list("海水会吸收较多红光的了是一不人天空蓝色оабвгд éa ") + ["\udce6"])


def test_char_units():
    assert char_units("a海b".encode()) == [b"a", "海".encode(), b"b"]
    assert char_units(b"\xb5\xb7 \xe6") == [b"\xb5\xb7", b" ", b"\xe6"]


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2"])
@given(st.lists(chars, min_size=1, max_size=40).map("".join))
def test_bpe_of_segments_equals_bpe_of_the_piece(name, piece):
    tok = smollm2_from_gguf() if name == "smollm2" else named(name)
    cuts = tok._safe_cuts or SafeCuts(tok._encoder)
    whole = bpe.merge(piece.encode("utf-8", "surrogateescape"), tok._rank)
    parts = [p for seg in cuts.split(piece)
             for p in bpe.merge(seg.encode("utf-8", "surrogateescape"), tok._rank)]
    assert parts == whole
    assert "".join(cuts.split(piece)) == piece


def test_chinese_clause_is_cut_into_cacheable_segments():
    tok = named("gpt2")
    tok.encode("海水")  # builds the table
    assert len(tok._safe_cuts.split("海水会吸收较多红光")) > 3


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


@pytest.mark.parametrize("name", ["gpt2", "o200k"])
@given(st.lists(chars, min_size=1, max_size=40).map("".join))
def test_fast_split_equals_the_boundary_by_boundary_rule(name, piece):
    tok = named(name)
    cuts = tok._safe_cuts or SafeCuts(tok._encoder)
    assert cuts.split(piece) == reference_split(cuts, piece)
