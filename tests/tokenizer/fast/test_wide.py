"""Many non-ASCII pieces at once (fast/wide.py) give what segment.py and `encode_piece` give."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.tokenizer.fast import wide
from minillm.tokenizer.fast.segment import cut_where, is_char
from tests.tokenizer.fast.test_segment import chars, cuts_of, tricky_chars

ASTRAL = ["😀", "𠀀"]  # above U+FFFF: never cut here (left to `split`)


def pieces_of(name: str):
    """Lists of pieces from the characters that steer segment.py onto each of its rules, ASCII,
    a lone surrogate and characters above U+FFFF."""
    mix = st.one_of(chars, st.sampled_from(tricky_chars(name)), st.sampled_from(ASTRAL))
    return st.lists(st.lists(mix, min_size=1, max_size=12).map("".join), min_size=1, max_size=8)


def bmp_only(piece: str) -> bool:
    return all(ord(c) < 0x10000 and not 0xD800 <= ord(c) < 0xE000 for c in piece)


def segments(pieces: list[str], kept: list[bool]) -> list[list[str]]:
    """Each piece cut after every character whose boundary is not kept."""
    out, start = [], 0
    for piece in pieces:
        out.append(cut_where(piece, [not k for k in kept[start:start + len(piece) - 1]]))
        start += len(piece)
    return out


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2"])
@given(st.data())
def test_kept_boundaries_are_splits_rule(name, data):
    """The boundaries kept give `split`'s segments, for pieces of BMP characters; a piece with
    a surrogate or a character above U+FFFF is marked (`split` decides for those)."""
    cuts = cuts_of(name)
    pieces = data.draw(pieces_of(name))
    code, lengths = wide.code_points(pieces)
    kept = wide.KeptBoundaries(cuts)(code, lengths)
    odd = wide.per_piece(wide.exotic(code), lengths).tolist()
    kinds = zip(*(k.tolist() for k in wide.kinds(kept, code, lengths)))
    for piece, got, marked, kind in zip(pieces, segments(pieces, kept.tolist()), odd, kinds):
        assert marked == (not bmp_only(piece))
        if not marked:
            assert got == list(cuts.split(piece)), piece
            n = len(got)  # segments: one per character, one, or some
            assert kind == (n == len(piece), n == 1 < len(piece), 1 < n < len(piece)), piece
        else:
            assert kind[1:] == (False, False) and (kind[0] == (len(piece) == 1)), piece


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_every_pair_with_a_partial_character_keeps_its_boundary(name):
    """Exhaustive over the pairs with part of a character (the ones the unit table holds): c1
    ending with the left unit and c2 starting with the right one are never cut apart (BMP
    characters: the others are left to `split`)."""
    cuts, pool = cuts_of(name), tricky_chars(name)
    keep = wide.KeptBoundaries(cuts)
    for u1, u2 in [(u1, u2) for u1, u2 in cuts.pairs if not (is_char(u1) and is_char(u2))]:
        for c1 in [c for c in pool if c.encode().endswith(u1) and bmp_only(c)][:3]:
            for c2 in [c for c in pool if c.encode().startswith(u2) and bmp_only(c)][:3]:
                pieces = [c1 + c2, "海" + c1 + c2 + "水", "海水"]
                kept = keep(*wide.code_points(pieces)).tolist()
                assert segments(pieces, kept) == [list(cuts.split(p)) for p in pieces], (c1, c2)


@given(st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=10), st.randoms())
def test_ids_by_character_concatenates_each_characters_ids(pieces, rng):
    table = {c: tuple(rng.randrange(100) for _ in range(rng.randrange(4)))
             for c in set("".join(pieces))}  # (a character may have no id at all)
    code, lengths = wide.code_points(pieces)
    got = wide.ids_by_character(code, lengths, table.__getitem__)
    assert got == [tuple(i for c in piece for i in table[c]) for piece in pieces]


@given(st.lists(st.integers(0, 0x10FFFF), min_size=1, max_size=50))
def test_unique_equals_numpys(values):
    code = np.array(values, np.int64)
    got, expected = wide.unique_inverse(code), np.unique(code, return_inverse=True)
    assert got[0].tolist() == expected[0].tolist()
    assert got[1].tolist() == expected[1].reshape(-1).tolist()


def test_code_points_keep_lone_surrogates():
    code, lengths = wide.code_points(["a\udce6", "海"])
    assert code.tolist() == [0x61, 0xDCE6, 0x6D77] and lengths.tolist() == [2, 1]
