"""Parity with the reference tokenizers: exact ids (tolerance: none).

References: tiktoken (gpt2, cl100k_base, o200k_base) and Hugging Face `tokenizers` (SmolLM2's
vocabulary), recorded by scripts/make_tokenizer_fixtures.py (see tests/fixtures/*/README.md).
"""
import pytest

from minillm.tokenizer import Tokenizer
from tests.conftest import shared_file
from tests.tokenizer.helpers import fixture_json, named, smollm2_from_gguf, smollm2_from_json

TIKTOKEN = fixture_json("tokenizer/tiktoken_parity.json")
SMOLLM2 = fixture_json("tokenizer_smollm2/reference_ids.json")


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_encode_ordinary_matches_tiktoken_exactly(name):
    tok = named(name)
    for text, ids in zip(TIKTOKEN["texts"], TIKTOKEN["ids"][name]):
        assert tok.encode_ordinary(text) == ids, text


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_encode_with_specials_matches_tiktoken_exactly(name):
    tok = named(name)
    for text, ids in zip(TIKTOKEN["special_texts"], TIKTOKEN["special_ids"][name]):
        assert tok.encode(text, allowed_special="all") == ids, text


@pytest.mark.parametrize("name,text,ids", [
    ("gpt2", "Hello world", [15496, 995]),
    ("cl100k", "hello world", [15339, 1917]),
    ("o200k", "hello world", [24912, 2375]),
])
def test_known_vectors(name, text, ids):
    assert named(name).encode(text) == ids
    assert named(name).decode(ids) == text


def test_known_vector_endoftext_allowed():
    assert named("gpt2").encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]
    assert named("gpt2").encode("hello <|endoftext|>", allowed_special={"<|endoftext|>"}) \
        == [31373, 220, 50256]


def test_r50k_is_gpt2():
    assert Tokenizer.load("r50k").encode("Hello world") == [15496, 995]


def test_gpt2_original_files_match_vendored_ranks():
    """encoder.json + vocab.bpe (the `pairs` rule) give the same ids as gpt2.tiktoken (`ranks`)."""
    directory = shared_file("tokenizers/gpt2/encoder.json").parent
    tok = Tokenizer.load(directory)
    assert tok.merges is not None and tok.special_tokens == {"<|endoftext|>": 50256}
    for text, ids in zip(TIKTOKEN["texts"], TIKTOKEN["ids"]["gpt2"]):
        assert tok.encode_ordinary(text) == ids, text


@pytest.mark.parametrize("source", ["gguf", "tokenizer.json"])
def test_smollm2_matches_hf_tokenizers_exactly(source):
    """Hugging Face adds its added tokens anywhere in the text: that is allowed_special="all"."""
    tok = smollm2_from_gguf() if source == "gguf" else smollm2_from_json()
    for text, ids in zip(SMOLLM2["texts"], SMOLLM2["ids"]):
        assert tok.encode(text, allowed_special="all") == ids, text
    assert tok.encode(SMOLLM2["chat_text"], allowed_special="all") == SMOLLM2["chat_ids"]


def test_smollm2_gguf_and_tokenizer_json_agree():
    a, b = smollm2_from_gguf(), smollm2_from_json()
    assert a.special_tokens == b.special_tokens and a.vocab_size == b.vocab_size == 49152
    assert (a.bos_id, a.eos_id) == (b.bos_id, b.eos_id) == (1, 2)
    for text in SMOLLM2["texts"]:
        assert a.encode_ordinary(text) == b.encode_ordinary(text)
    assert [a.token_bytes(i) for i in range(0, 49152, 97)] == \
        [b.token_bytes(i) for i in range(0, 49152, 97)]


def test_smollm2_chatml_specials():
    tok = smollm2_from_gguf()
    assert tok.special_tokens["<|im_start|>"] == 1 and tok.special_tokens["<|im_end|>"] == 2
    assert tok.encode("<|im_start|>user", allowed_special="all")[0] == 1
    assert tok.decode([1]) == "<|im_start|>"
