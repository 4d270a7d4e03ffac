"""Batched BPE (fast/batch_bpe.py) gives bpe.merge_reference's parts, for both merge rules."""
import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer import Tokenizer, bpe
from minillm.tokenizer.fast import batch_bpe, bulk
from minillm.tokenizer.fast import pieces as piece_encoder
from tests.tokenizer.helpers import fixture_json, named, smollm2_from_json

ALPHABET = b"ab c"
short_bytes = st.binary(min_size=1, max_size=4).map(
    lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))


@st.composite
def vocabularies(draw):
    """(encoder, merges or None): the alphabet's single bytes (some may be missing), a few random
    tokens, and tokens glued from two earlier ones, as BPE training makes them; ids shuffled.
    For the `pairs` rule, those glued pairs plus random ones whose merge need not be a token,
    at random ranks.

    subtle: glued, not only random, tokens: a pair has a rank only when both halves are symbols,
    so random tokens alone almost never merge twice in a piece, and bugs in updating a merged
    part's neighbours would go unseen."""
    tokens = draw(st.lists(st.sampled_from([bytes([x]) for x in ALPHABET]), unique=True))
    tokens += draw(st.lists(short_bytes, min_size=1, max_size=5))
    glued = []
    for _ in range(draw(st.integers(0, 25))):
        pair = draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens))
        glued.append(pair)
        tokens.append(pair[0] + pair[1])
    tokens = list(dict.fromkeys(tokens))
    ids = draw(st.permutations(range(len(tokens) + 5)))
    encoder = dict(zip(tokens, ids))
    if draw(st.booleans()):
        return encoder, None
    random_pairs = draw(st.lists(st.tuples(short_bytes, short_bytes), max_size=10))
    pairs = list(dict.fromkeys(glued + random_pairs))
    ranks = draw(st.permutations(range(len(pairs))))
    return encoder, dict(zip(pairs, ranks))


random_pieces = short_bytes | st.binary(min_size=1, max_size=40).map(
    lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))


@given(vocabularies(), st.data())
def test_batched_parts_equal_merge_reference(vocabulary, data):
    encoder, merges = vocabulary
    of_tokens = st.lists(st.sampled_from(sorted(encoder)), min_size=1, max_size=5).map(b"".join)
    pieces = data.draw(st.lists(of_tokens | random_pieces, max_size=20))
    batch = batch_bpe.BatchBPE(encoder, merges)
    parts = batch(pieces)
    name = {i: b for b, i in encoder.items()}
    name.update((batch.n_tokens + k, b) for k, b in enumerate(batch.extras))  # (met in the call)
    rank = bpe.rank_function(encoder, merges)
    got = [[name[i] for i in ids] for ids in parts]
    assert got == [bpe.merge_reference(p, rank) for p in pieces]


def test_ties_go_to_the_leftmost_pair():
    batch = batch_bpe.BatchBPE({b"a": 0, b"aa": 1}, None)
    assert batch([b"aaa", b"aaaaa", b"a"]) == [(1, 0), (1, 1, 0), (0,)]


def test_vocabulary_with_duplicate_ids_is_refused():
    with pytest.raises(ValueError, match="one token per id"):
        batch_bpe.BatchBPE({b"a": 0, b"b": 0}, None)


def made_up_words(start: int, n: int = 300) -> str:
    """ " zqaaa zqbaa ...": pre-tokens that are no single token, each new."""
    return "".join(" zq" + "".join(chr(97 + i // 26**k % 26) for k in range(3))
                   for i in range(start, start + n))


@pytest.fixture
def always_batch(monkeypatch):
    """Every encode goes through batched BPE (normally only texts with many new pieces do)."""
    monkeypatch.setattr(piece_encoder, "BATCH_MIN", 1)
    monkeypatch.setattr(bulk, "BATCH_BPE", 1)


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_batched_encode_matches_tiktoken_exactly(name, always_batch):
    tok = named(name)
    parity = fixture_json("tokenizer/tiktoken_parity.json")
    for text, ids in zip(parity["texts"], parity["ids"][name]):
        tok.fast_encoder.clear()
        assert tok.encode_ordinary(text) == ids, text


def test_batched_encode_matches_hugging_face_exactly(always_batch):
    """SmolLM2 (the `pairs` rule; some single bytes are not tokens); reference: HF tokenizers."""
    tok = smollm2_from_json()
    reference = fixture_json("tokenizer_smollm2/reference_ids.json")
    for text, ids in zip(reference["texts"], reference["ids"]):
        tok.fast_encoder.clear()
        assert tok.encode(text, allowed_special="all") == ids, text


def test_long_text_batched_equals_unbatched():
    texts = fixture_json("tokenizer/tiktoken_parity.json")["texts"]
    text = "\n".join(texts) + "".join(f" word{i}" for i in range(300)) + " " * 100 + "x"
    batched, unbatched = Tokenizer.load("gpt2"), Tokenizer.load("gpt2")
    batched.fast_encoder.build_batch()
    unbatched.fast_encoder.batch = False
    assert isinstance(batched.fast_encoder.batch, batch_bpe.BatchBPE)
    assert batched.encode_ordinary(text) == unbatched.encode_ordinary(text)


def test_pieces_with_bytes_that_are_not_tokens_take_the_python_path(monkeypatch):
    """SmolLM2 lacks the token b"\\x04": such pieces' parts are extra symbols, left to merge.py."""
    tok, text = smollm2_from_json(), "ab\x04\x04\x04 \x04\x06\x13 fine words"
    monkeypatch.setattr(piece_encoder, "BATCH_MIN", 10 ** 9)
    tok.fast_encoder.clear()
    expected = tok.encode_ordinary(text)
    monkeypatch.setattr(piece_encoder, "BATCH_MIN", 1)
    monkeypatch.setattr(bulk, "BATCH_BPE", 1)
    tok.fast_encoder.build_batch()
    tok.fast_encoder.clear()
    assert tok.encode_ordinary(text) == expected and tok.unk_id in expected
    assert isinstance(tok.fast_encoder.batch, batch_bpe.BatchBPE)


def test_batched_encoding_keeps_the_cache_bound(always_batch):
    """Regression: batched BPE filled the cache past a smaller Memo size.
    It adds at most half the cache's size; the rest go through the Memo and its bound."""
    tok, reference = Tokenizer.load("gpt2"), Tokenizer.load("gpt2")
    reference.fast_encoder.batch = False
    tok.fast_encoder.build_batch()
    tok.fast_encoder.piece_ids.size = 200
    text = made_up_words(0, n=3000)
    assert tok.encode_ordinary(text) == reference.encode_ordinary(text)
    assert len(tok.fast_encoder.piece_ids) <= 200


def test_a_fresh_tokenizer_batches_its_first_long_text():
    """Regression: the pair table was built only after 30,000 new pieces, so a fresh tokenizer's
    first megabyte never used batched BPE. Pairs are now learnt as met: no table to wait for."""
    tok, unbatched = Tokenizer.load("gpt2"), Tokenizer.load("gpt2")
    unbatched.fast_encoder.batch = False
    text = made_up_words(0, n=bulk.BATCH_BPE)
    assert tok.encode_ordinary(text) == unbatched.encode_ordinary(text)
    assert isinstance(tok.fast_encoder.batch, batch_bpe.BatchBPE) and len(tok.fast_encoder.batch.keys) > 1


def test_a_text_with_few_new_pieces_does_not_make_batched_bpe():
    """Below BATCH_BPE new pieces, merge.py is as fast, and the batch is not even made."""
    tok, reference = Tokenizer.load("gpt2"), Tokenizer.load("gpt2", fast=False)
    text = made_up_words(0, n=bulk.BATCH_BPE - 1)
    assert tok.encode_ordinary(text) == reference.encode_ordinary(text)
    assert tok.fast_encoder.batch is None


def test_forgetting_learnt_pairs_keeps_the_parts(monkeypatch):
    """The learnt pairs are bounded (`PAIRS`): emptied when full, and learnt again."""
    monkeypatch.setattr(batch_bpe, "PAIRS", 50)
    monkeypatch.setattr(bulk, "BATCH_BPE", 100)
    tok, unbatched = Tokenizer.load("gpt2"), Tokenizer.load("gpt2")
    unbatched.fast_encoder.batch = False
    first = made_up_words(0)
    assert tok.encode_ordinary(first) == unbatched.encode_ordinary(first)
    learnt = set(tok.fast_encoder.batch.keys.tolist())
    second = made_up_words(300)
    assert tok.encode_ordinary(second) == unbatched.encode_ordinary(second)
    assert not learnt <= set(tok.fast_encoder.batch.keys.tolist())  # some were forgotten
    keys = tok.fast_encoder.batch.keys.tolist()
    assert keys == sorted(set(keys))  # the binary search needs them sorted and distinct
