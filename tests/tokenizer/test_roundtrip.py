"""Properties of encode/decode on the real vocabularies."""
import pytest
from hypothesis import given, strategies as st

from tests.tokenizer.helpers import named, smollm2_from_gguf

NAMES = ["gpt2", "cl100k", "o200k"]


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text(max_size=60))
def test_decode_inverts_encode(name, text):
    tok = named(name)
    assert tok.decode(tok.encode(text, disallowed_special=())) == text


@given(text=st.text(alphabet=st.characters(exclude_categories=["Cc", "Cs"], max_codepoint=0x3FFFF),
                    max_size=60))
def test_decode_inverts_encode_smollm2(text):
    """SmolLM2's vocabulary lacks 21 single bytes: some control characters and the UTF-8 lead
    bytes f1, f2 (code points U+40000..U+BFFFF); text without them round-trips."""
    tok = smollm2_from_gguf()
    assert tok.decode(tok.encode_ordinary(text)) == text


def test_bytes_missing_from_the_vocabulary_become_the_unknown_token():
    tok = smollm2_from_gguf()
    assert tok.unk_id == 0
    assert tok.encode_ordinary("a\x04") == [tok.encode_ordinary("a")[0], 0]


@pytest.mark.parametrize("name", NAMES)
@given(data=st.binary(max_size=60))
def test_decode_bytes_inverts_encode_bytes(name, data):
    tok = named(name)
    assert tok.decode_bytes(tok.encode_bytes(data)) == data


@given(text=st.text(max_size=40))
def test_encode_bytes_of_utf8_equals_encode_ordinary(text):
    tok = named("gpt2")
    assert tok.encode_bytes(text.encode("utf-8")) == tok.encode_ordinary(text)


@pytest.mark.parametrize("name", NAMES)
@given(text=st.lists(st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "a", " ", "é", "<|", "|>",
                                      "海"]), max_size=12).map("".join))
def test_encode_ordinary_equals_encode_with_nothing_disallowed(name, text):
    tok = named(name)
    assert tok.encode_ordinary(text) == tok.encode(text, disallowed_special=())


@given(texts=st.lists(st.text(max_size=30), max_size=6))
def test_encode_batch_equals_encoding_one_by_one(texts):
    tok = named("cl100k")
    assert tok.encode_batch(texts, allowed_special="all") == \
        [tok.encode(t, allowed_special="all") for t in texts]


def test_lone_surrogates_become_replacement_characters():
    """As tiktoken: a str that is not valid Unicode text is repaired, not rejected."""
    tok = named("gpt2")
    assert tok.decode(tok.encode("a\udce8b")) == "a\ufffdb"


def test_token_bytes_and_vocab_size():
    tok = named("gpt2")
    assert tok.token_bytes(995) == b" world"
    assert tok.vocab_size == 50257 and tok.eos_id == 50256 and tok.bos_id is None
    assert named("o200k").vocab_size == 200019


@pytest.mark.parametrize("name", NAMES)
@given(data=st.binary(min_size=1, max_size=30))
def test_decode_replaces_bytes_that_are_not_utf8_and_strict_refuses_them(name, data):
    """decode = decode_bytes, then UTF-8 with errors="replace" (U+FFFD for a token sequence that
    ends mid-character, as tiktoken does) unless errors="strict" is asked for."""
    tok = named(name)
    ids = tok.encode_bytes(data)
    assert tok.decode(ids) == data.decode("utf-8", errors="replace")
    try:
        want = data.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            tok.decode(ids, errors="strict")
    else:
        assert tok.decode(ids, errors="strict") == want
