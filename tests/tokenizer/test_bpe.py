"""The merge loop: the list and heap algorithms give the textbook reference's parts."""
from hypothesis import given, strategies as st

from minillm.tokenizer import bpe
from tests.tokenizer.helpers import named

ALPHABET = b"ab c"


@st.composite
def rank_tables(draw):
    """Random vocabularies over a small alphabet, so merges (and ties) are frequent."""
    tokens = draw(st.lists(st.binary(min_size=2, max_size=4).map(
        lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b)), max_size=30, unique=True))
    return {t: 256 + i for i, t in enumerate(tokens)}


pieces = st.binary(max_size=200).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))


@given(rank_tables(), pieces, st.booleans())
def test_list_and_heap_merges_equal_reference(table, piece, pair_rule):
    if pair_rule:  # the `pairs` rule: rank by (left, right), from the table's splits at 1 byte
        merges = {(t[:1], t[1:]): r for t, r in table.items()}
        rank = bpe.rank_function(table, merges)
    else:
        rank = bpe.rank_function(table, None)
    expected = bpe.merge_reference(piece, rank)
    assert bpe.merge_list(piece, rank) == expected
    assert bpe.merge_heap(piece, rank) == expected
    assert b"".join(expected) == piece


def test_ties_go_to_the_leftmost_pair():
    rank = bpe.rank_function({b"aa": 0}, None)
    assert bpe.merge_reference(b"aaa", rank) == [b"aa", b"a"]
    assert bpe.merge_heap(b"aaa", rank) == [b"aa", b"a"]
    assert bpe.merge_list(b"aaaaa", rank) == [b"aa", b"aa", b"a"]


@given(st.text(alphabet="海水会吸收较多红光天空蓝色的", min_size=1, max_size=80))
def test_heap_equals_list_on_long_chinese_pieces(text):
    tok = named("gpt2")
    piece = text.encode()
    assert bpe.merge_heap(piece, tok._pieces.rank) == bpe.merge_list(piece, tok._pieces.rank)


def test_empty_and_one_byte_pieces():
    rank = bpe.rank_function({b"aa": 256}, None)
    for merge in (bpe.merge_reference, bpe.merge_list, bpe.merge_heap):
        assert merge(b"", rank) == []
        assert merge(b"a", rank) == [b"a"]
