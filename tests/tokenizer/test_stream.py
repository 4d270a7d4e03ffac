"""The streaming decoder never emits a broken character and ends where decode ends."""
from hypothesis import given, strategies as st

from minillm.tokenizer import StreamDecoder
from tests.tokenizer.helpers import named


def stream(tok, ids):
    dec = StreamDecoder(tok)
    return [dec.feed(i) for i in ids] + [dec.flush()]


@given(st.lists(st.integers(0, 50256), max_size=40))
def test_stream_pieces_concatenate_to_decode(ids):
    tok = named("gpt2")
    assert "".join(stream(tok, ids)) == tok.decode(ids)


def test_holds_incomplete_character_until_it_completes():
    tok = named("gpt2")
    ids = tok.encode("蓝")  # e8 93 9d: GPT-2 spells it with three one-byte tokens
    assert len(ids) == 3
    assert stream(tok, ids) == ["", "", "蓝", ""]


def test_flush_replaces_an_unfinished_character():
    tok = named("gpt2")
    first = tok.encode("蓝")[0]
    dec = StreamDecoder(tok)
    assert dec.feed(first) == ""
    assert dec.flush() == "\ufffd"
    assert dec.feed(tok.encode("a")[0]) == "a"  # flush resets the decoder
