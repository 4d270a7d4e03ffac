"""One very long pre-token (fast/long.py): the reading path's ids, in linear memory."""
import random
import tracemalloc
from unittest import mock

import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer import Tokenizer, bpe
from minillm.tokenizer.fast import long
from tests.tokenizer.helpers import named, smollm2_from_json

ALPHABET = b"ab c"
MAX_BYTES_PER_CHAR = 64  # the bound asked of encoding one long piece (it was ~220)


@st.composite
def ranked_pieces(draw):
    """(rank function, piece): a random vocabulary over a small alphabet, under either rule,
    with ranks in any order (so a merge often makes a pair ranked below the one being merged),
    and a piece glued from its tokens and stray bytes (so long runs of merges happen)."""
    alphabet = draw(st.sampled_from([b"a", b"ab", ALPHABET]))
    if alphabet == b"a":  # runs, as in "aaaaaa" with aa and aaaa: pairs made by merges
        tokens = [b"a" * k for k in sorted(draw(st.sets(st.integers(2, 8), min_size=1)))]
    else:
        tokens = draw(st.lists(st.binary(min_size=2, max_size=6).map(
            lambda b: bytes(alphabet[x % len(alphabet)] for x in b)), min_size=1, max_size=60,
            unique=True))
    table = dict(zip(tokens, draw(st.permutations(range(len(tokens))))))
    if draw(st.booleans()):
        rank = bpe.rank_function(table, None)
    else:
        cut = draw(st.integers(1, 4))  # the `pairs` rule: each token listed as one split
        rank = bpe.rank_function({}, {(t[:cut], t[cut:]): r for t, r in table.items() if t[cut:]})
    glue = st.sampled_from(tokens) | st.sampled_from([alphabet[:1], alphabet[1:2]])
    return rank, b"".join(draw(st.lists(glue, max_size=80)))


@given(ranked_pieces())
def test_merge_long_equals_merge_reference(rank_and_piece):
    rank, piece = rank_and_piece
    parts = long.merge_long(piece, rank, long.byte_pair_codes(rank))
    assert list(parts) == bpe.merge_reference(piece, rank)


def test_pairs_made_by_earlier_merges_merge_leftmost_first():
    """aaaaaa: (a, a) merges three times, making two (aa, aa) pairs; the left one merges."""
    rank = bpe.rank_function({b"aa": 0, b"aaaa": 1}, None)
    parts = long.merge_long(b"a" * 6, rank, long.byte_pair_codes(rank))
    assert list(parts) == bpe.merge_reference(b"a" * 6, rank) == [b"aaaa", b"aa"]


def test_safe_chunks_end_at_safe_cuts():
    tok = named("gpt2")
    tok.encode("海水")
    piece = "海水会吸收较多红光" * 50
    chunks = list(long.safe_chunks(piece, tok.fast_encoder.cuts(), 40))
    assert "".join(chunks) == piece and len(chunks) > 5
    assert all(len(c) >= 40 for c in chunks[:-1])


def long_texts(rng: random.Random) -> list[str]:
    han = "海水会吸收较多红光蓝更容易被散射回来所以大常呈色的"
    return ["a" * 1200, "".join(rng.choice("abcdefgh") for _ in range(1200)),
            "".join(rng.choice(han) for _ in range(500)), "的的" * 300 + "abc" * 200 + "海" * 300,
            "9" * 700, "!" * 600 + "=" * 300]


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2"])
def test_long_pieces_equal_the_reading_path(name):
    """Pieces of ~1,000 characters with `LONG` lowered to 64: both long.py paths (safe chunks
    and merge_long) against Tokenizer(fast=False)."""
    tok = smollm2_from_json() if name == "smollm2" else named(name)
    reading = Tokenizer(tok.encoder, tok.merges, tok.pattern, tok.special_tokens,
                        whole_piece_lookup=tok.whole_piece_lookup, unk_id=tok.unk_id, fast=False)
    with mock.patch.object(long, "LONG", 64):
        for text in long_texts(random.Random(0)):
            assert tok.encode_ordinary(text) == reading.encode_ordinary(text), text[:20]


@pytest.mark.parametrize("text", ["letters", "han"])
def test_encoding_one_long_piece_is_linear_in_memory(text):
    """Regression: encoding a long string with no spaces held ~220 bytes per character (a bytes
    object, two list slots and a heap tuple per byte). Peak traced memory per character, after
    a warm-up that builds the vocabulary's tables (built once, not per character)."""
    tok, rng = named("gpt2"), random.Random(0)
    n = 50_000
    if text == "letters":  # one pre-token of n ASCII letters: merge_long
        text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    else:  # one pre-token of n Han characters: safe chunks
        text = "".join(rng.choice("海水会吸收较多红光蓝更容易被散射回来所以大常呈色的") for _ in range(n))
    tok.encode(text[:2 * long.LONG])
    tracemalloc.start()
    try:
        ids = tok.encode(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tok.decode(ids) == text
    assert peak / n <= MAX_BYTES_PER_CHAR, f"{peak / n:.0f} bytes per character"
