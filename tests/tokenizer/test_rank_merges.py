"""Merges derived from tiktoken ranks give the ranks' ids, so a tiktoken vocabulary exports to GGUF.

References: tiktoken's ids on the parity texts (tests/fixtures/tokenizer/tiktoken_parity.json);
llama.cpp (cyllama 0.2.18) on the GGUF minillm exports from GPT-2's ranks, and `tokenizers` on the
same file's tokens and merges, and on cl100k's derived merges (tests/fixtures/rank_merges/ids.json,
made by scripts/make_rank_merges_fixtures.py).
"""
import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm import GPT, ModelConfig
from minillm.io.gguf.read import read_gguf
from minillm.loading import load_model
from minillm.tokenizer import bpe
from minillm.tokenizer.rank_merges import merges_from_ranks, with_derived_merges
from tests.tokenizer.helpers import fixture_json, named


@functools.lru_cache(maxsize=None)
def derived(name: str):
    return with_derived_merges(named(name))


def test_the_merge_is_what_lower_ranks_leave_of_the_token():
    """b"abb": with ranks below 3, [a, b, b] -> [ab, b]; so (ab, b), not (a, bb)."""
    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"bb": 4, b"abb": 3}
    assert merges_from_ranks(ranks) == {(b"a", b"b"): 2, (b"ab", b"b"): 3, (b"b", b"b"): 4}


def test_a_token_its_lower_ranks_cannot_build_is_refused():
    with pytest.raises(ValueError, match=r"token b'abc' \(rank 3\) is not made by one merge"):
        merges_from_ranks({b"a": 0, b"b": 1, b"c": 2, b"abc": 3})


@pytest.mark.parametrize("name", ["gpt2", "cl100k"])
def test_derived_merges_give_tiktokens_ids(name):
    parity = fixture_json("tokenizer/tiktoken_parity.json")
    tok = derived(name)
    assert tok.merges is not None and not tok.whole_piece_lookup
    for text, ids in zip(parity["texts"], parity["ids"][name]):
        assert tok.encode_ordinary(text) == ids, text


@pytest.mark.parametrize("name", ["gpt2", "cl100k"])
def test_every_token_is_its_own_bpe_under_the_derived_merges(name):
    """What makes tiktoken's whole-piece look-up redundant (one token in 7, for time)."""
    tok = derived(name)
    for token, i in list(tok._encoder.items())[::7]:
        assert bpe.merge_reference(token, tok._rank) == [token], (token, i)


@given(st.text(max_size=60))
def test_derived_merges_and_ranks_agree_on_any_text(text):
    assert derived("gpt2").encode_ordinary(text) == named("gpt2").encode_ordinary(text)


def test_a_tiktoken_vocabulary_exports_and_llama_cpp_and_tokenizers_agree(tmp_path):
    """Regression: a tokenizer with ranks and no merge list could not be exported at all."""
    ref = fixture_json("rank_merges/ids.json")
    tok = named("gpt2")
    model = GPT(ModelConfig(vocab_size=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2,
                            n_layers=1))
    path = model.save_gguf(tmp_path / "gpt2-ranks.gguf", tok)
    meta = read_gguf(str(path)).metadata
    assert len(meta["tokenizer.ggml.merges"]) == 50000 and meta["tokenizer.ggml.pre"] == "gpt-2"
    _, back = load_model(path)
    for i, text in enumerate(ref["texts"]):
        ours = tok.encode_ordinary(text)
        assert ours == ref["gpt2_llama_cpp"][i] == ref["gpt2_tokenizers"][i], text
        assert back.encode_ordinary(text) == ours, text
        assert derived("cl100k").encode_ordinary(text) == ref["cl100k_tokenizers"][i], text
