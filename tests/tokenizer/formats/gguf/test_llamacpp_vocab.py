"""Every vocabulary of llama.cpp's tokenizer test set gives llama.cpp's ids, or is refused by name.

Reference: tests/fixtures/llamacpp_vocab/<name>.json.gz (scripts/make_llamacpp_vocab_fixtures.py):
llama.cpp's own test vectors (`models/ggml-vocab-<name>.gguf.out`) and ids llama.cpp (build
b9190, through cyllama 0.2.18) gave for extra texts, with the part of each vocabulary the texts
can touch; and `pre_names.json.gz`: GPT-2's vocabulary under every pre-tokeniser name of
pattern_names.LLAMA_CPP_PRE, ids by llama.cpp. Exact equality of ids, on the reading path and
the fast path.
"""
import functools

import pytest

from minillm.tokenizer import Tokenizer, tokenizer_from_gguf_metadata
from minillm.tokenizer.formats.gguf.meta import read_gguf_metadata
from minillm.tokenizer.formats.pattern_names import LLAMA_CPP_IGNORE_MERGES, LLAMA_CPP_PRE
from tests.tokenizer.llamacpp_vocab import NAMES, load, metadata

REFUSED = {"bert-bge": "bert", "nomic-bert-moe": "t5"}      # WordPiece, Unigram
BYTE_LEVEL = ("aquila", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2", "gpt-neox",
              "llama-bpe", "mpt", "qwen2", "qwen35", "refact", "starcoder")
SENTENCEPIECE = ("baichuan", "gemma-4", "llama-spm", "phi-3")   # "llama" and "gemma4" models


def tokenizer(name: str, fast: bool = True) -> Tokenizer:
    return tokenizer_from_gguf_metadata(metadata(load(name)["vocab"]), fast=fast)


def test_every_vocabulary_of_the_test_set_is_covered():
    assert set(NAMES) == set(BYTE_LEVEL) | set(SENTENCEPIECE) | set(REFUSED)


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "reading"])
@pytest.mark.parametrize("name", BYTE_LEVEL + SENTENCEPIECE)
def test_llama_cpp_ids(name, fast):
    record = load(name)
    tok = tokenizer(name, fast)
    for text, ids in zip(record["texts"], record["ids"]):
        assert tok.encode_ordinary(text) == ids, text
        # subtle: SentencePiece writes a space "▁", so a "▁" in the text comes back a space
        assert tok.decode(ids) == text.replace("\u2581", " ") if name in SENTENCEPIECE \
            else tok.decode_bytes(ids) == text.encode("utf-8"), text


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_wordpiece_and_unigram_are_refused_by_name(name):
    meta = {"tokenizer.ggml.model": REFUSED[name], "tokenizer.ggml.tokens": ["a"]}
    with pytest.raises(ValueError, match=f"tokenizer.ggml.model is '{REFUSED[name]}'"):
        read_gguf_metadata(meta)


# ----- user-defined tokens (GGUF token_type 4): split out of every text, never refused ---------
def test_user_defined_tokens_split_in_encode_ordinary():
    """mpt / gpt-neox: runs of spaces are user-defined tokens; "a  b" gave [66, 209, 270]."""
    for name in ("mpt", "gpt-neox"):
        assert tokenizer(name).encode_ordinary("a  b") == [66, 50276, 67]
    for name in ("deepseek-llm", "deepseek-coder"):   # "ö" is a user-defined token there
        assert tokenizer(name).encode_ordinary("schön")[1] != 7962
    assert tokenizer("deepseek-llm").encode_ordinary("schön") == [21322, 100003, 77]


def test_encode_does_not_refuse_user_defined_token():
    """encode("schön") raised "the text contains the special token 'ö'"."""
    tok = tokenizer("deepseek-llm")
    assert tok.encode("schön") == [21322, 100003, 77]
    assert tok.encode("schön", allowed_special="all") == [21322, 100003, 77]
    assert tok.encode("schön", disallowed_special={"ö"}) == [21322, 100003, 77]


def test_control_tokens_stay_special():
    tok = tokenizer("deepseek-llm")
    bos = "<｜begin▁of▁sentence｜>"
    assert tok.special_tokens[bos] == 100000 and bos not in tok.user_defined
    with pytest.raises(ValueError, match="special token"):
        tok.encode(f"hi {bos}")
    assert tok.encode(f"hi {bos}", allowed_special={bos})[-1] == 100000
    assert 100000 not in tok.encode_ordinary(f"hi {bos}")


def test_encode_bytes_splits_user_defined_tokens_too():
    tok = tokenizer("deepseek-llm")
    assert tok.encode_bytes("schön".encode()) == tok.encode_ordinary("schön")


def test_user_defined_tokens_survive_a_save(tmp_path):
    tok = tokenizer("mpt")
    for name in ("tokenizer.json", "t.minillm.json"):
        tok.save(tmp_path / name)
        again = Tokenizer.load(tmp_path / name)
        assert again.user_defined == tok.user_defined and again.encode("a  b") == [66, 50276, 67]


def test_user_defined_must_be_special_tokens():
    with pytest.raises(ValueError, match="user_defined"):
        Tokenizer({b"a": 0}, None, special_tokens={"<x>": 1}, user_defined={"<y>"})


# ----- llama.cpp's pre-tokeniser names, through llama.cpp itself ------------------------------
PRE = load("pre_names")
NOT_IN_B9190 = sorted(n for n, ids in PRE["ids"].items() if ids is None)


@functools.cache
def gpt2_kwargs() -> dict:
    return read_gguf_metadata(metadata(PRE["vocab"]))


def test_every_regex_name_has_llama_cpp_ids():
    """Each name of LLAMA_CPP_PRE was run by llama.cpp (b9190 refuses the 8 names newer than it)."""
    assert set(PRE["ids"]) == set(LLAMA_CPP_PRE)
    assert len(NOT_IN_B9190) <= 8, NOT_IN_B9190


@pytest.mark.parametrize("name", sorted(LLAMA_CPP_PRE))
def test_pre_tokeniser_name_gives_llama_cpp_ids(name):
    if PRE["ids"][name] is None:
        pytest.skip(f"llama.cpp b9190 (the reference) does not know the name {name!r} yet")
    kw = gpt2_kwargs()     # (GPT-2's vocabulary read once; the name decides pattern and look-up)
    named = read_gguf_metadata({"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": name,
                                "tokenizer.ggml.tokens": ["a"], "tokenizer.ggml.merges": []})
    tok = Tokenizer(**{**kw, "pattern": named["pattern"],
                       "whole_piece_lookup": named["whole_piece_lookup"]}, fast=False)
    assert tok.whole_piece_lookup == (name in LLAMA_CPP_IGNORE_MERGES)
    for text, ids in zip(PRE["texts"], PRE["ids"][name]):
        assert tok.encode_ordinary(text) == ids, text


def test_vocabulary_with_tokens_outside_the_byte_alphabet_loads():
    """command-r raised "token '\\u200d' is not in GPT-2's byte-to-unicode alphabet". llama.cpp
    never produces such a token from text; minillm keeps it for decoding only."""
    tok = tokenizer("command-r")
    assert tok.decode_bytes([264]) == "\u200d".encode()
    assert tok.encode_ordinary("\u200d") != [264]
