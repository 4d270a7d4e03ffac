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
