"""SentencePiece-style BPE (spm.py): the plain merge loop, its fast form, prefix, fallback, decode.

llama.cpp's ids for real vocabularies (llama-spm, phi-3, baichuan, gemma-4) are checked in
formats/gguf/test_llamacpp_vocab.py; here, the rules on a tiny vocabulary written by hand.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minillm.tokenizer import tokenizer_from_gguf_metadata
from minillm.tokenizer.bpe import NO_MERGE
from minillm.tokenizer.fast.merge import merge_heap_parts
from minillm.tokenizer.spm import SentencePieceBPE, merge_parts
from minillm.tokenizer.formats.gguf.spm import read_spm_metadata

# id: (text, score, type)   type: 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte
VOCAB = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), ("▁", -1.0, 1), ("h", -2.0, 1),
         ("i", -2.0, 1), ("▁h", -1.5, 1), ("ih", -0.5, 1), ("hi", -0.1, 1), ("<0x0A>", 0.0, 6),
         ("<0xC3>", 0.0, 6), ("<0xA9>", 0.0, 6), ("<ud>", 0.0, 4), ("a", -3.0, 1), ("aa", -1.0, 1)]


def spm(add_space_prefix=True, fast=True):
    meta = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": [t for t, _, _ in VOCAB],
            "tokenizer.ggml.scores": [s for _, s, _ in VOCAB],
            "tokenizer.ggml.token_type": [k for _, _, k in VOCAB],
            "tokenizer.ggml.add_space_prefix": add_space_prefix,
            "tokenizer.ggml.unknown_token_id": 0, "tokenizer.ggml.bos_token_id": 1}
    return SentencePieceBPE(**read_spm_metadata(meta), fast=fast)


def test_a_higher_score_merges_first():
    """▁+h (-1.5) or h+i (-0.1)? h+i first: [▁, hi]; the lowest first would give [▁h, i]."""
    assert spm().encode("hi") == [3, 8]
    assert spm(add_space_prefix=False).encode("hi") == [8]


def test_equal_scores_merge_the_leftmost_pair():
    assert spm(add_space_prefix=False).encode("aaa") == [14, 13]


def test_byte_fallback_and_unknown():
    """é (c3 a9) is no token: its bytes' <0xNN> tokens; a byte without one: <unk>."""
    tok = spm(add_space_prefix=False)
    assert tok.encode("é") == [10, 11]
    assert tok.encode("\n") == [9]
    assert tok.encode("z") == [0]


def test_decode_drops_the_prefix_space_only():
    tok = spm()
    ids = tok.encode("hi hi")
    assert tok.decode(ids) == "hi hi"
    assert tok.decode(tok.encode(" hi")) == " hi"
    assert tok.token_bytes(ids[0]) == b" "          # (one token alone keeps its space)


def test_every_text_segment_gets_the_prefix():
    """llama.cpp adds the space before each text fragment: after <ud> too."""
    tok = spm()
    assert tok.encode_ordinary("hi<ud>hi") == [3, 8, 12, 3, 8]
    assert tok.encode("<s>hi", allowed_special={"<s>"}) == [1, 3, 8]


def test_empty_text_gives_no_ids():
    assert spm().encode("") == [] and spm().encode_ordinary("") == []


def test_a_spm_vocabulary_loads_from_gguf_metadata_as_sentencepiece():
    tok = tokenizer_from_gguf_metadata({"tokenizer.ggml.model": "llama",
                                        "tokenizer.ggml.tokens": ["a", "▁"]})
    assert isinstance(tok, SentencePieceBPE) and tok.encode("a") == [1, 0]


def test_saving_is_refused_rather_than_changing_ids(tmp_path):
    with pytest.raises(ValueError, match="SentencePiece"):
        spm().save(tmp_path / "tokenizer.json")


@settings(deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "ab", "c", "é"]), max_size=60),
       st.dictionaries(st.sampled_from(["aa", "ab", "ba", "bb", "abab", "aba", "bc", "cé"]),
                       st.integers(-5, 5), max_size=8))
def test_heap_merge_equals_the_plain_loop(chars, scores):
    """fast/merge.merge_heap_parts gives merge_parts' parts, ties (equal scores) included."""
    parts = [c.encode() for c in chars]
    table = {k.encode(): -v for k, v in scores.items()}

    def rank(a, b):
        return table.get(a + b, NO_MERGE)
    assert merge_heap_parts(parts, rank) == merge_parts(parts, rank)


@settings(deadline=None)
@given(st.text(alphabet="hia é\n", max_size=40))
def test_fast_equals_reading(text):
    assert spm(fast=True).encode_ordinary(text) == spm(fast=False).encode_ordinary(text)


def meta_with(**changes):
    meta = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": [t for t, _, _ in VOCAB],
            "tokenizer.ggml.scores": [s for _, s, _ in VOCAB],
            "tokenizer.ggml.token_type": [k for _, _, k in VOCAB]}
    return {**meta, **{f"tokenizer.ggml.{k}": v for k, v in changes.items()}}


@pytest.mark.parametrize("changes, message", [
    ({"token_type": [str(k) for _, _, k in VOCAB]}, r"token_type holds '2' \(str\); each type "
                                                      r"is an integer 0 … 6"),
    ({"token_type": [99] * len(VOCAB)}, "token_type holds 99"),
    ({"scores": [str(s) for _, s, _ in VOCAB]}, r"scores holds '0.0' \(str\); each score is a "
                                                  r"number"),
    ({"scores": [float("nan")] * len(VOCAB)}, "scores holds nan"),
    ({"scores": [0.0]}, "scores must be a list of one number per token"),
    ({"bos_token_id": "1"}, r"tokenizer.ggml.bos_token_id must be an integer id .* got '1' \(str\)"),
])
def test_gguf_token_types_scores_and_ids_of_the_wrong_type_are_refused_by_name(changes, message):
    with pytest.raises(ValueError, match=message):
        read_spm_metadata(meta_with(**changes))


def test_byte_level_gguf_token_types_out_of_range_are_refused():
    meta = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": ["a", "b"],
            "tokenizer.ggml.merges": [], "tokenizer.ggml.token_type": [1, 42]}
    with pytest.raises(ValueError, match="token_type holds 42"):
        tokenizer_from_gguf_metadata(meta)
