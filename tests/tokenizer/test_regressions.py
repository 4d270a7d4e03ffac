"""Regression tests for tokenizer/: the fast trainer's local pair updates, the
special-token regex cache bound, and merge ids checked when a minillm tokenizer file is read."""
import json
from collections import Counter

import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.special import SpecialTokens
from minillm.tokenizer.train import merge_and_diff, merge_word


def pair_counts(word) -> Counter:
    return Counter(zip(word, word[1:]))


@given(st.lists(st.integers(0, 3), max_size=30), st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_merge_and_diff_lost_and_gained_pairs_are_the_change_in_pair_counts(word, pair):
    new, lost, gained = merge_and_diff(word, pair, 9)
    assert tuple(new) == merge_word(tuple(word), pair, 9)
    assert pair_counts(word) - Counter(lost) + Counter(gained) == pair_counts(new)
    assert not (Counter(lost) - pair_counts(word))  # only pairs the word really held are lost


def test_special_token_regex_cache_is_bounded():
    specials = SpecialTokens({"<|a|>": 0})
    for k in range(500):  # every call with a new disallowed set compiles a new regex
        specials.guard("text", frozenset({f"<|x{k}|>"}))
    assert specials.alternation.cache_info().currsize <= 64


@pytest.mark.parametrize("merge", [[-1, 0], [0, 10_000], [0, None]])
def test_read_minillm_rejects_merge_ids_outside_the_table(tmp_path, merge):
    path = tmp_path / "tok.json"
    Tokenizer.train("abab abab", 257).save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["merges"] = [merge]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="merge 0"):
        Tokenizer.load(path)


def test_absurd_token_id_raises_value_error_not_memory_error():
    """Regression: a vocabulary naming id 10**12 made the id -> bytes table allocate ~8 TB."""
    with pytest.raises(ValueError, match="token ids must be below"):
        Tokenizer({b"a": 10**12}, None)


@pytest.mark.parametrize("whole_piece_lookup", [False, True])
def test_token_with_a_stray_continuation_byte_blocks_the_cut(whole_piece_lookup):
    """Regression: the token 一海 + b"\\xb5" crosses 一|海, but its right unit b"海\\xb5" is
    no prefix of 海, so fast/segment.py took the cut, and the piece 一海\\xb5 (itself a token)
    was encoded as two tokens."""
    from minillm.tokenizer import bpe
    yi, hai = "一".encode(), "海".encode()
    token = yi + hai + b"\xb5"
    encoder = {bytes([i]): i for i in range(256)}
    for t in (yi[:2], yi, hai[:2], hai, hai + b"\xb5", token):
        encoder[t] = len(encoder)
    tok = Tokenizer(encoder, None, pattern=r"\S+|\s+", whole_piece_lookup=whole_piece_lookup)
    reference = bpe.merge_reference(token, bpe.rank_function(encoder, None))
    expected = [encoder[token]] if whole_piece_lookup else [encoder[p] for p in reference]
    assert tok.encode_bytes(token) == expected


def test_train_sees_a_lone_surrogate_as_encode_does():
    """Regression: `Tokenizer.train` encoded pre-tokens as strict UTF-8 and raised
    UnicodeEncodeError on a lone surrogate, which `encode` accepts (as U+FFFD, like tiktoken).
    Training now sees the text as encode does."""
    text = "ab\ud800ab \ud800\ud800 ab"
    tok = Tokenizer.train(text, 262)
    assert tok.encode(text) == tok.encode(text.replace("\ud800", "\ufffd"))
    assert tok.decode(tok.encode(text)) == text.replace("\ud800", "\ufffd")
    assert "\ufffd".encode() in {tok.token_bytes(i) for i in range(256, tok.vocab_size)}


def test_decode_of_a_2d_array_names_the_id_that_is_not_an_integer():
    """Regression: decoding a [1, T] array (a batch row not taken out) raised NumPy's "truth
    value of an array ... is ambiguous" instead of naming the id that is not an integer."""
    import numpy as np
    tok = Tokenizer.load("gpt2")
    with pytest.raises(ValueError, match=r"cannot decode id array\(\[15496,\s+995\]\)"):
        tok.decode(np.array([[15496, 995]]))
    assert tok.decode(np.array([15496, 995])) == "Hello world"


def test_hf_byte_level_without_regex_and_no_split_loads_and_merges_across_spaces(tmp_path):
    """Regression: a tokenizer.json whose pre_tokenizer is ByteLevel(use_regex=false) alone (the
    whole text is one pre-token) gave no stages, and loading it raised "pattern must be a name
    ... got ()". It now loads and merges across spaces, as Hugging Face does."""
    from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)} | {"bĠ": 256, "abĠ": 257}
    data = {"model": {"type": "BPE", "vocab": vocab, "merges": ["b Ġ", "a bĠ"]},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False},
            "decoder": {"type": "ByteLevel"}, "added_tokens": []}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    for fast in (True, False):
        tok = Tokenizer.load(tmp_path / "tokenizer.json", fast=fast)
        assert tok.encode("ab ab") == [257, 97, 98]
        assert tok.encode("") == [] and tok.decode(tok.encode("a\nb ")) == "a\nb "


@pytest.mark.parametrize("bad", [123, None, b"gpt2"])
def test_load_of_a_non_path_is_a_type_error_naming_what_load_takes(bad):
    """Regression: `Tokenizer.load(123)` wrapped locate's TypeError ("expected a tokenizer name
    or a path") into a ValueError "123: malformed tokenizer file"."""
    with pytest.raises(TypeError, match="expected a tokenizer name or a path"):
        Tokenizer.load(bad)
