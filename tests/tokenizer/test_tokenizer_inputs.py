"""What Tokenizer's methods accept: decode takes any iterable of ids, encode_batch a list of texts
(never one str); a byte without a token is an error unless there is an unknown token; the fast
encoder is the default."""
import numpy as np
import pytest

from minillm.tokenizer import Tokenizer
from tests.tokenizer.helpers import named


def test_decode_takes_any_iterable_of_ids():
    """A list, a tuple, a NumPy array of any integer type, a range, an iterator or a generator of
    ids: the same text (each is read once, so a one-shot iterator is fine too)."""
    tok = named("gpt2")
    text = "Hello, world! 你好"
    ids = tok.encode(text)
    forms = [ids, tuple(ids), np.array(ids), np.array(ids, np.int32), iter(ids),
             (i for i in ids)]
    for form in forms:
        assert tok.decode(form) == text and tok.decode_bytes(iter(ids)) == text.encode()
    assert tok.decode(range(3)) == tok.decode([0, 1, 2]) and tok.decode(iter(())) == ""


def test_a_tokenizer_encodes_with_its_fast_encoder_unless_fast_is_false():
    """fast=True by default (the same ids as the reading path, tests/tokenizer/
    test_fast_equals_reading.py, only faster); fast=False keeps the reading path alone."""
    encoder = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    merges = {(b"a", b"b"): 256}
    fast, reading = Tokenizer(encoder, merges), Tokenizer(encoder, merges, fast=False)
    assert fast.fast_encoder is not None and reading.fast_encoder is None
    assert fast.encode("abcab") == reading.encode("abcab") == [256, 99, 256]


def test_encode_batch_of_one_str_is_a_type_error():
    tok = named("gpt2")
    assert tok.encode_batch(["ab", "c"]) == [tok.encode("ab"), tok.encode("c")]
    with pytest.raises(TypeError, match="encode_batch expects a list of str"):
        tok.encode_batch("abc")


@pytest.mark.parametrize("fast", [True, False])
def test_a_byte_without_a_token_is_an_error_unless_there_is_an_unknown_token(fast):
    encoder = {bytes([b]): b for b in range(256) if b != 4}
    with pytest.raises(ValueError, match="byte.s. 04 have no token"):
        Tokenizer(encoder, {}, fast=fast).encode("a\x04b")
    with_unk = Tokenizer(encoder | {b"<unk>": 256}, {}, unk_id=256, fast=fast)
    assert with_unk.encode("a\x04b") == [97, 256, 98]


def test_encode_bytes_is_refused_by_a_tokenizer_that_normalises_text():
    """Bytes are not text: a normaliser (text -> text) has nothing to act on, so no silent skip."""
    encoder = {bytes([b]): b for b in range(256)}
    assert Tokenizer(encoder, {}).encode_bytes(b"Ab") == [65, 98]
    lower = Tokenizer(encoder, {}, normalizer=str.lower)
    assert lower.encode("Ab") == [97, 98]
    with pytest.raises(ValueError, match="encode_bytes is not defined for a tokenizer that normalises"):
        lower.encode_bytes(b"Ab")
