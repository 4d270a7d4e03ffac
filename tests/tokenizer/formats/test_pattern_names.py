"""llama.cpp's pre-tokeniser names (`tokenizer.ggml.pre`) split and encode as the reference does.

Reference: tests/fixtures/gguf_pre/reference.json, made by scripts/make_hf_fixtures.py with
Hugging Face `tokenizers` running each name's regex sequence (Split, Isolated) + ByteLevel over
weights/shakespeare's vocabulary. Exact equality of pieces and ids.
"""
import json

import pytest

from minillm.tokenizer import Tokenizer, formats
from minillm.tokenizer.files import build
from minillm.tokenizer.formats.gguf.meta import read_gguf_metadata
from minillm.tokenizer.formats.pattern_names import LLAMA_CPP_IGNORE_MERGES, LLAMA_CPP_PRE
from minillm.tokenizer.formats.pattern_names import pre_tokenizer
from tests.conftest import FIXTURES, REPO

REFERENCE = json.loads((FIXTURES / "gguf_pre" / "reference.json").read_text(encoding="utf-8"))
# the common pre-tokenizer families; llama.cpp maps each to a BPE split regex sequence
REQUIRED = ("gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "deepseek-coder", "deepseek-v3",
            "falcon", "starcoder", "refact", "command-r", "olmo", "tekken", "smollm", "chatglm-bpe")


SHAKESPEARE = REPO / "weights" / "shakespeare" / "tokenizer.json"


@pytest.fixture(scope="module")
def shakespeare():
    return Tokenizer.load(SHAKESPEARE)


def test_the_required_names_are_known_and_have_references():
    for name in REQUIRED:
        assert name in LLAMA_CPP_PRE and name in REFERENCE["names"], name


@pytest.mark.parametrize("name", sorted(REFERENCE["names"]))
def test_pre_tokeniser_matches_the_reference(name):
    ref = REFERENCE["names"][name]
    assert list(LLAMA_CPP_PRE[name]) == ref["stages"]      # the fixture is of this very table
    pre = pre_tokenizer(name)
    tok = build(Tokenizer, {**formats.read(SHAKESPEARE), "pattern": name,
                            "whole_piece_lookup": name in LLAMA_CPP_IGNORE_MERGES})
    for text, pieces, ids in zip(REFERENCE["texts"], ref["pieces"], ref["ids"]):
        assert pre.split(text) == pieces, text
        assert tok.encode(text) == ids, text


def test_gguf_metadata_naming_deepseek_llm_gets_llama_cpps_regexes(shakespeare):
    """deepseek-llm was refused ("unknown pre-tokeniser"); now it gets llama.cpp's regexes."""
    meta = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "deepseek-llm",
            "tokenizer.ggml.tokens": _tokens(shakespeare),
            "tokenizer.ggml.merges": _merges(shakespeare)}
    kw = read_gguf_metadata(meta)
    assert kw["pattern"] == LLAMA_CPP_PRE["deepseek-llm"] and not kw["whole_piece_lookup"]
    assert read_gguf_metadata({**meta, "tokenizer.ggml.pre": "llama-bpe"})["whole_piece_lookup"]


def test_gguf_metadata_without_a_pre_name_uses_llama_cpp_s_default(shakespeare):
    meta = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": _tokens(shakespeare),
            "tokenizer.ggml.merges": _merges(shakespeare)}
    assert read_gguf_metadata(meta)["pattern"] == LLAMA_CPP_PRE["default"]


def _tokens(tok):
    from minillm.tokenizer.formats.hf.write import token_string
    return [token_string(tok.token_bytes(i)) for i in range(tok.vocab_size)]


def _merges(tok):
    from minillm.tokenizer.formats.hf.write import token_string
    return [f"{token_string(a)} {token_string(b)}"
            for (a, b), _ in sorted(tok.merges.items(), key=lambda kv: kv[1])]
