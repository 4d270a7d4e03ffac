"""SentencePiece-style vocabularies written to GGUF (io/gguf_vocab.tokenizer_metadata) and read
back by minillm to llama.cpp's ids; the ones GGUF's "llama" model cannot hold are refused.

Reference: llama.cpp's ids for llama-spm, phi-3 and baichuan (tests/fixtures/llamacpp_vocab/,
scripts/make_llamacpp_vocab_fixtures.py): the exported vocabulary must still give them.
"""
import json
from pathlib import Path

import pytest

from minillm import GPT, ModelConfig
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.vocab import tokenizer_metadata
from minillm.loading import load_model
from minillm.tokenizer import Tokenizer
from minillm.tokenizer.files import build
from minillm.tokenizer.gguf_meta import read_gguf_metadata
from minillm.tokenizer.hf import read_hf_json
from tests.tokenizer.llamacpp_vocab import load, metadata

SCORED = ("llama-spm", "phi-3", "baichuan")      # tokenizer.ggml.model "llama": merges by score
SPM_BASE = Path(__file__).resolve().parents[1] / "fixtures/tokenizer_json/spm_base.json"


def read_back(meta: dict) -> Tokenizer:
    """{key: (type, value)} as written -> the Tokenizer minillm reads from those keys."""
    plain = {k: v[1][1] if isinstance(v[1], tuple) else v[1] for k, v in meta.items()}
    return Tokenizer.from_gguf_metadata(plain)


@pytest.mark.parametrize("name", SCORED)
def test_an_exported_llama_vocabulary_gives_llama_cpp_ids_again(name):
    record = load(name)
    tok = build(Tokenizer, read_gguf_metadata(metadata(record["vocab"])))
    back = read_back(tokenizer_metadata(tok, tok.vocab_size))
    for text, ids in zip(record["texts"], record["ids"]):
        assert back.encode_ordinary(text) == ids, text
        assert back.decode(ids) == tok.decode(ids), text
    assert (back.bos_id, back.eos_id, back.unk_id) == (tok.bos_id, tok.eos_id, tok.unk_id)
    assert back.add_space_prefix == tok.add_space_prefix and back.user_defined == tok.user_defined


def test_the_written_keys_are_those_of_llama_cpp_s_converter():
    tok = build(Tokenizer, read_gguf_metadata(metadata(load("llama-spm")["vocab"])))
    meta = tokenizer_metadata(tok, tok.vocab_size + 2)          # two padding rows
    tokens, types = meta["tokenizer.ggml.tokens"][1][1], meta["tokenizer.ggml.token_type"][1][1]
    assert meta["tokenizer.ggml.model"][1] == "llama"
    assert tokens[:4] == ["<unk>", "<s>", "</s>", "<0x00>"] and types[:4] == [2, 3, 3, 6]
    assert types[-2:] == [5, 5] and len(meta["tokenizer.ggml.scores"][1][1]) == len(tokens)


def test_a_model_file_with_a_llama_vocabulary_loads_to_the_same_ids(tmp_path):
    record = load("llama-spm")
    tok = build(Tokenizer, read_gguf_metadata(metadata(record["vocab"])))
    config = ModelConfig(vocab_size=tok.vocab_size, n_ctx=8, d_model=8, n_heads=1, n_kv_heads=1,
                         n_layers=1, d_ff=16, arch="llama", tie_embeddings=True)
    path = GPT(config, seed=0).save_gguf(tmp_path / "m.gguf", tok)
    _, back = load_model(path)
    assert [back.encode_ordinary(t) for t in record["texts"]] == record["ids"]
    assert read_gguf(str(path)).metadata["tokenizer.ggml.add_space_prefix"] is True


def test_a_vocabulary_ranked_by_merges_is_refused_with_the_reason():
    tok = build(Tokenizer, read_hf_json(json.loads(SPM_BASE.read_text("utf-8"))))
    with pytest.raises(ValueError, match="SentencePiece-style vocabulary to GGUF yet.*merge list"):
        tokenizer_metadata(tok, tok.vocab_size)
