"""The list and heap merges (fast/merge.py) give the textbook loop's parts (bpe.merge_reference)."""
from hypothesis import given, strategies as st

from minillm.tokenizer import bpe
from minillm.tokenizer.fast import merge
from tests.tokenizer.helpers import named

ALPHABET = b"ab c"


@st.composite
def rank_tables(draw):
    """Random vocabularies over a small alphabet, so merges (and ties) are frequent."""
    tokens = draw(st.lists(st.binary(min_size=2, max_size=4).map(
        lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b)), max_size=30, unique=True))
    return {t: 256 + i for i, t in enumerate(tokens)}


pieces = st.binary(max_size=200).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))


def rank_of(table, pair_rule: bool):
    """The `pairs` rule ranks by (left, right), from the table's splits at 1 byte."""
    merges = {(t[:1], t[1:]): r for t, r in table.items()} if pair_rule else None
    return bpe.rank_function(table, merges)


@given(rank_tables(), pieces, st.booleans())
def test_list_and_heap_merges_equal_reference(table, piece, pair_rule):
    rank = rank_of(table, pair_rule)
    expected = bpe.merge_reference(piece, rank)
    assert merge.merge_list(piece, rank) == expected
    assert merge.merge_heap(piece, rank) == expected
    assert b"".join(expected) == piece


def test_ties_go_to_the_leftmost_pair():
    rank = bpe.rank_function({b"aa": 0}, None)
    assert merge.merge_heap(b"aaa", rank) == [b"aa", b"a"]
    assert merge.merge_list(b"aaaaa", rank) == [b"aa", b"aa", b"a"]


@given(st.text(alphabet="海水会吸收较多红光天空蓝色的", min_size=1, max_size=80))
def test_heap_equals_list_on_long_chinese_pieces(text):
    tok = named("gpt2")
    piece, rank = text.encode(), bpe.rank_function(tok.encoder, tok.merges)
    assert merge.merge_heap(piece, rank) == merge.merge_list(piece, rank)


def test_empty_and_one_byte_pieces():
    rank = bpe.rank_function({b"aa": 256}, None)
    for merge_fn in (merge.merge_list, merge.merge_heap):
        assert merge_fn(b"", rank) == []
        assert merge_fn(b"a", rank) == [b"a"]
