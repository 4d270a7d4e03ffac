"""Many new non-ASCII pieces at once (the pre-tokens of a long Chinese text), in NumPy.

Most new pieces of Chinese text are clauses that segment.py cuts before every character (no
token spans two of their characters). Their ids are then their characters' ids, one after the
other. pieces.py's `encode_piece` finds that one piece at a time (a regex, set tests and a
tuple: several µs each, most of a new Chinese text's time); here all the pieces are joined and
read as code points::

    ["海水会", "红光"]  ->  code [28023, 27700, 20250, 32418, 20809], lengths [3, 2]

* `KeptBoundaries(cuts)(code, lengths)`: which boundaries between two characters segment.py
  keeps (a piece with none is cut before every character; the others are cut at the rest).
  Look-ups in small tables of the pairs of `cuts` over the distinct characters.
* `ids_by_character(code, lengths, char_ids)`: per piece, its characters' ids concatenated.
  Each distinct character is looked up once (`char_ids`), the rest is a gather.

Both give exactly what segment.py and `encode_piece` give (tests/tokenizer/fast/test_wide.py).
"""
from __future__ import annotations

from itertools import chain
from typing import Callable

import numpy as np

from .segment import SafeCuts, utf8_int, utf8_part

BMP_END = 0x10000  # code points from here on are never plain (segment.py: BMP classes only)


def code_points(pieces: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """pieces -> (their characters' code points back to back [N], each piece's length [P]).
    subtle: `surrogatepass` keeps a lone surrogate (an invalid byte, see `encode_bytes`) as
    its code point, which no table here calls plain."""
    text = "".join(pieces).encode("utf-32-le", "surrogatepass")
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))  # [P]
    return np.frombuffer(text, np.uint32).astype(np.int64), lengths  # [N], [P]


class KeptBoundaries:
    """`KeptBoundaries(cuts)(code, lengths)` -> [N] bool: is the boundary after each character
    kept (not cut) by segment.py's rule? False after each piece's last character.

    The rule, as arrays: c1|c2 is kept when both are ASCII, when c1 + c2 is a whole-character
    pair (`cuts.bigrams`, sorted keys `c1 << 21 | c2`), or when one of c1's UTF-8 suffixes and
    one of c2's prefixes (<= 3 x 3) form one of the other pairs (`cuts.odd`, a table over
    their units). subtle: a surrogate or a character above U+FFFF keeps both its boundaries
    here (not the rule: the caller leaves such pieces to `cuts.split`, see `exotic`)."""

    def __init__(self, cuts: SafeCuts):
        keys = sorted(ord(b[0]) << 21 | ord(b[1]) for b in cuts.bigrams)  # (code points < 2**21)
        self.bigrams = np.array(keys or [-1], np.int64)  # [B] sorted (-1: no pair has it)
        odd = [(unit_code(a), unit_code(b)) for a, b in cuts.odd
               if len(a) <= 3 and len(b) <= 3]  # (longer units: no BMP character has them)
        self.lefts = np.array(sorted({a for a, _ in odd}) or [-1], np.int64)  # [L] sorted
        self.rights = np.array(sorted({b for _, b in odd}) or [-1], np.int64)  # [R] sorted
        self.odd = np.zeros((len(self.lefts), len(self.rights)), bool)  # [L, R]
        for a, b in odd:
            self.odd[np.searchsorted(self.lefts, a), np.searchsorted(self.rights, b)] = True

    def __call__(self, code: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        chars, which = unique_inverse(code)  # [U], [N]: the distinct characters
        left, right = which[:-1], which[1:]  # [N - 1] each: the two sides of every boundary
        ascii_, odd_char = chars < 0x80, exotic(chars)  # [U] bool each
        kept = ascii_[left] & ascii_[right] | odd_char[left] | odd_char[right]  # [N - 1]
        pair = code[:-1] << 21 | code[1:]  # [N - 1]
        at = np.minimum(np.searchsorted(self.bigrams, pair), len(self.bigrams) - 1)  # [N - 1]
        kept |= self.bigrams[at] == pair
        suffix = _unit_index(chars, self.lefts, suffix=True)  # [U, 3] index in lefts, or -1
        prefix = _unit_index(chars, self.rights, suffix=False)  # [U, 3] index in rights, or -1
        maybe = np.flatnonzero((suffix >= 0).any(1)[left] & (prefix >= 0).any(1)[right])  # [Q]
        for s in suffix[left[maybe]].T:  # [Q] each: one suffix length of the left characters
            for p in prefix[right[maybe]].T:  # [Q]: one prefix length of the right ones
                kept[maybe] |= (s >= 0) & (p >= 0) & self.odd[s, p]
        kept = np.append(kept, False)  # [N]
        kept[np.cumsum(lengths) - 1] = False  # subtle: no boundary across two pieces
        return kept


def exotic(code: np.ndarray) -> np.ndarray:
    """[N] bool: a surrogate or a character above U+FFFF (segment.py's own rules for them)."""
    return (code >= BMP_END) | ((code >= 0xD800) & (code < 0xE000))


def per_piece(flags: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """[N] bool per character -> [P] bool: does any character of each piece have the flag?"""
    return np.logical_or.reduceat(flags, np.cumsum(lengths) - lengths)


def kinds(kept: np.ndarray, code: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    """[P] bool each: is a piece cut before every character, not cut at all, or cut at some
    boundaries? A piece with a surrogate or a character above U+FFFF (`exotic`) is left out of
    the last two (segment.py's own rules for them); it is never cut everywhere here."""
    n_kept = np.add.reduceat(kept, np.cumsum(lengths) - lengths)  # [P] boundaries kept
    bmp = ~per_piece(exotic(code), lengths)  # [P]
    uncut = bmp & (n_kept == lengths - 1) & (lengths > 1)  # [P] (one character: cut everywhere)
    return n_kept == 0, uncut, bmp & (n_kept > 0) & (n_kept < lengths - 1)


def unit_code(unit: bytes) -> int:
    """A byte string of at most 3 bytes as one integer: its length, then its bytes."""
    return len(unit) << 24 | int.from_bytes(unit, "big")


def _unit_index(chars: np.ndarray, units: np.ndarray, suffix: bool) -> np.ndarray:
    """[U] BMP code points -> [U, 3]: for m = 1, 2, 3, the index in the sorted `units` (as
    `unit_code`s) of the character's UTF-8 suffix (or prefix) of m bytes, -1 if none."""
    value, n = utf8_int(chars)  # [U], [U]
    found = np.full((len(chars), 3), -1, np.int64)  # [U, 3]
    for m in (1, 2, 3):
        key = m << 24 | utf8_part(value, n, m, suffix)  # [U] as `unit_code`
        at = np.minimum(np.searchsorted(units, key), len(units) - 1)  # [U]
        found[:, m - 1] = np.where((m <= n) & (units[at] == key), at, -1)
    return found


def ids_by_character(code: np.ndarray, lengths: np.ndarray,
                     char_ids: Callable[[str], tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Per piece, the ids of its characters one after the other (`char_ids(ch)`: one
    character's ids, called once per distinct character). At least one piece; none empty.

    subtle: the ids are gathered from `char_ids`' own tuples, not made anew from an array: the
    pieces then share a few thousand int objects instead of holding one each, which keeps
    reading them back (`FastEncoder.encode`, a warm Chinese text) ~15 % faster."""
    chars, which = unique_inverse(code)  # [U], [N]
    per_char = list(map(char_ids, map(chr, chars.tolist())))  # [U] tuples
    flat = tuple(chain.from_iterable(map(per_char.__getitem__, which.tolist())))  # all ids
    count = np.fromiter(map(len, per_char), np.int64, len(per_char))  # [U] ids per character
    cuts = np.cumsum(np.add.reduceat(count[which], np.cumsum(lengths) - lengths)).tolist()  # [P]
    return list(map(flat.__getitem__, map(slice, [0, *cuts[:-1]], cuts)))  # (tuple slices)


def unique_inverse(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(code, return_inverse=True)` through a table over code.min()..code.max()
    instead of a sort (code points of one script are close together)."""
    low = int(code.min())
    seen = np.zeros(int(code.max()) - low + 1, bool)  # [R]
    seen[code - low] = True
    return np.flatnonzero(seen) + low, (np.cumsum(seen) - 1)[code - low]  # [U], [N]
