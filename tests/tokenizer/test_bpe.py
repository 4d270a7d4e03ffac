"""The textbook merge loop (bpe.py): ties, edge cases, and the trace of every merge."""
from minillm.tokenizer import bpe
from minillm.tokenizer.display import show_merge
from tests.tokenizer.helpers import named


def test_ties_go_to_the_leftmost_pair():
    rank = bpe.rank_function({b"aa": 0}, None)
    assert bpe.merge_reference(b"aaa", rank) == [b"aa", b"a"]
    assert bpe.merge_reference(b"aaaaa", rank) == [b"aa", b"aa", b"a"]


def test_empty_and_one_byte_pieces():
    rank = bpe.rank_function({b"aa": 256}, None)
    assert bpe.merge_reference(b"", rank) == []
    assert bpe.merge_reference(b"a", rank) == [b"a"]


def test_trace_records_every_merge_in_order():
    """merge_reference(trace=) for "hello" under the `pairs` rule: each step's pair, rank and
    parts after it; the last step's parts are the result."""
    merges = {(b"l", b"l"): 0, (b"h", b"e"): 1, (b"he", b"ll"): 2, (b"hell", b"o"): 3}
    steps: list = []
    parts = bpe.merge_reference(b"hello", bpe.rank_function({}, merges), trace=steps)
    assert [(s.pair, s.rank) for s in steps] == [((b"l", b"l"), 0), ((b"h", b"e"), 1),
                                                 ((b"he", b"ll"), 2), ((b"hell", b"o"), 3)]
    assert steps[0].parts == (b"h", b"e", b"ll", b"o") and list(steps[-1].parts) == parts
    assert show_merge(steps[0]) == "l + l -> ll (rank 0): h | e | ll | o"


def test_merge_trace_of_a_chinese_word_shows_partial_characters():
    """GPT-2 merges 光 (e5 85 89) from its bytes and keeps 红 (e7 ba a2) as three byte tokens:
    the trace renders partial characters as <e5 85>."""
    tok = named("gpt2")
    steps = tok.merge_trace("红光")
    assert list(steps[-1].parts) == [tok.token_bytes(i) for i in tok.encode("红光")]
    assert [show_merge(s).split(" (")[0] for s in steps] == ["<e5> + <85> -> <e5 85>",
                                                      "<e5 85> + <89> -> 光"]
    assert show_merge(steps[-1]).endswith(": <e7> | <ba> | <a2> | 光")
