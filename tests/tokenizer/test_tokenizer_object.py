"""The Tokenizer object itself (tokenizer.py): the named ids it refuses, and merge traces of any
bytes (a pre-token of ``encode_bytes`` may hold bytes that are not UTF-8)."""
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from minillm.tokenizer import Tokenizer, bpe

BYTES = {bytes([i]): i for i in range(256)}
VOCAB = BYTES | {b"\x80\x81": 256, b"ab": 257, b"ab\x80\x81": 258}   # ranks rule: id = rank
READING = Tokenizer(VOCAB, None, fast=False)


@pytest.mark.parametrize("name", ["bos_id", "eos_id", "unk_id"])
@pytest.mark.parametrize("value", [-1, 259, 10**6])
def test_a_named_id_outside_the_vocabulary_is_a_value_error(name, value):
    with pytest.raises(ValueError, match=f"{name}={value} is outside the vocabulary"):
        Tokenizer(VOCAB, None, fast=False, **{name: value})


@pytest.mark.parametrize("name", ["bos_id", "eos_id", "unk_id"])
def test_a_named_id_may_be_any_id_of_the_vocabulary(name):
    for value in (0, 258):
        assert getattr(Tokenizer(VOCAB, None, fast=False, **{name: value}), name) == value


@given(st.binary(max_size=12))
def test_merge_trace_of_any_bytes_ends_in_their_bpe_parts(data):
    """A piece holding bytes that are not UTF-8 (as lone surrogates, the way encode_bytes reads
    them) is traced on its original bytes: the last step's parts are merge_reference's."""
    steps = READING.merge_trace(data.decode("utf-8", errors="surrogateescape"))
    want = bpe.merge_reference(data, bpe.rank_function(VOCAB, None))
    assert (list(steps[-1].parts) if steps else [bytes([b]) for b in data]) == want
    assert b"".join(want) == data


def test_merge_trace_of_two_bytes_that_are_not_utf8():
    steps = READING.merge_trace(b"\x80\x81".decode("utf-8", "surrogateescape"))
    assert [(s.pair, s.rank, s.parts) for s in steps] == [((b"\x80", b"\x81"), 256, (b"\x80\x81",))]


@pytest.mark.parametrize("fast", [True, False])
def test_a_piece_is_looked_up_whole_only_when_asked(fast):
    """By default a pre-token is always merged pair by pair (a token no merge path reaches, like
    "abc" here without "ab" or "bc", is never produced); whole_piece_lookup=True (tiktoken's rule)
    first looks the whole piece up."""
    vocab = BYTES | {b"abc": 256}
    assert Tokenizer(vocab, None, fast=fast).encode("abc") == [97, 98, 99]
    assert Tokenizer(vocab, None, fast=fast, whole_piece_lookup=True).encode("abc") == [256]


def test_repr_names_the_vocabulary_size_the_specials_and_the_rule():
    assert repr(READING) == "Tokenizer(vocab_size=259, specials=0, rule=ranks)"
    pairs = Tokenizer(BYTES, {(b"a", b"b"): 0}, special_tokens={"<|end|>": 300}, fast=False)
    assert repr(pairs) == "Tokenizer(vocab_size=301, specials=1, rule=pairs)"


@example([5], -1, 1)
@given(st.lists(st.integers(0, 258), max_size=6), st.integers(-300, -1), st.integers(0, 6))
def test_a_negative_id_anywhere_is_a_value_error_naming_it(ids, negative, where):
    """Not the last token (Python's table[-1]), wherever the negative id stands among good ones."""
    ids.insert(where, negative)
    with pytest.raises(ValueError, match=f"cannot decode id {negative}"):
        READING.decode_bytes(ids)


@given(st.binary(max_size=16))
def test_the_reading_path_encodes_any_bytes_back_to_themselves(data):
    """fast=False reads pre-tokens holding bytes that are not UTF-8 (lone surrogates) as those
    bytes, as the fast path does."""
    assert READING.decode_bytes(READING.encode_bytes(data)) == data


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("method, wrong, message", [
    ("encode", b"ab", "encode expects a str, got bytes"),
    ("encode", None, "encode expects a str, got NoneType"),
    ("encode_ordinary", b"ab", "encode expects a str, got bytes"),
    ("encode_bytes", "ab", "encode_bytes expects a bytes, got str"),
    ("encode_bytes", [97], "encode_bytes expects a bytes, got list"),
    ("merge_trace", b"ab", "merge_trace expects a str, got bytes")])
def test_text_and_bytes_of_the_wrong_type_are_a_type_error_naming_the_method(fast, method, wrong,
                                                                            message):
    tok = READING if not fast else Tokenizer(VOCAB, None)
    with pytest.raises(TypeError, match=message):
        getattr(tok, method)(wrong)
