"""load_tokenizer / tokenizer_from_gguf_metadata (formats/load.py): the class is the file's to
choose, as with Hugging Face's AutoTokenizer; `cls.load` reads its own kind and names the factory
for the other."""
import re

import pytest

import minillm
from minillm.tokenizer import (SentencePieceBPE, Tokenizer, load_tokenizer,
                               tokenizer_from_gguf_metadata)

LLAMA_META = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["a", "▁"]}


def test_load_tokenizer_is_the_public_name():
    assert minillm.load_tokenizer is load_tokenizer


def test_a_byte_level_file_gives_a_tokenizer_with_the_same_ids():
    tok = load_tokenizer("gpt2")
    assert type(tok) is Tokenizer
    assert tok.encode("Hello world") == Tokenizer.load("gpt2").encode("Hello world") == [15496, 995]
    assert load_tokenizer("gpt2", fast=False).fast_encoder is None


def test_sentencepiece_metadata_gives_a_sentencepiece_bpe():
    tok = tokenizer_from_gguf_metadata(LLAMA_META)
    assert type(tok) is SentencePieceBPE and tok.encode("a") == [1, 0]
    assert SentencePieceBPE.from_gguf_metadata(LLAMA_META).encode("a") == [1, 0]


def test_each_class_refuses_the_other_kind_naming_the_factory():
    with pytest.raises(ValueError, match=re.escape("minillm.tokenizer_from_gguf_metadata(meta)")):
        Tokenizer.from_gguf_metadata(LLAMA_META)
    with pytest.raises(ValueError, match=re.escape("use minillm.load_tokenizer(path)")):
        SentencePieceBPE.load("gpt2")
