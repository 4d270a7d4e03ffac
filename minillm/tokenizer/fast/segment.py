"""Cutting a long pre-token where no merge can ever cross, so its parts hit the cache.

GPT-2's pattern keeps a whole clause of Chinese as one pre-token ("海水会吸收较多红光"); clauses
rarely repeat, so the pre-token cache misses and BPE runs on every one. But BPE never merges
across a point that no token spans: every part is always a token, so no part can cross it, and
the two sides are merged independently. Cut there, and each side (usually one or two characters)
is a cache hit::

    BPE("海水会吸收") == BPE("海水") + BPE("会") + BPE("吸收")   if no token spans those cuts

Which cuts are safe? Split every token into character units (at each ASCII or UTF-8 lead byte;
a token may begin or end mid-character, e.g. b" \\xe6"). A token spans the boundary between
characters c1 and c2 only if it holds the adjacent units (u1, u2) with u1 a suffix of c1 and u2
(cut to the one character its lead byte announces: `first_char`) a prefix of c2. So collect
all adjacent unit pairs of the vocabulary once; a boundary is safe when none of c1's suffixes
and c2's prefixes (at most 4 x 4) form a collected pair.

subtle: only boundaries between real characters are considered: a lone surrogate (an invalid byte
carried by `encode_bytes`) may be a continuation byte, which is not a unit start. Boundaries
between two ASCII characters are never cut (ASCII-only tokens are not collected: it keeps the
table small, and English pre-tokens are short and cached anyway).

The fast path: almost all collected pairs join two *whole* characters (o200k: 21,883 of 22,502),
and then the boundary c1|c2 is unsafe exactly when the two-character string c1 + c2 is one of
those `bigrams`: one set look-up. The other pairs involve part of a character: (海, b"\\xe6"),
(b"\\xb6", 的), (b"\\xb6", b"\\xe6"). Their characters are marked *rare*: 海 and 的, and for a
part-part pair all characters ending with b"\\xb6" or all starting with b"\\xe6" (whichever are
fewer). A piece with no rare character, ASCII, lone surrogate or character above U+FFFF (one
`re` scan over a bitmap class, `_plain`) can only have bigram conflicts, so it takes the fast
path; other pieces (~5-10% of Chinese ones) go to `split_exact`, which tests the 4 x 4
suffix/prefix combinations through per-character sets.
"""
from __future__ import annotations

import functools
import re
from operator import add

import numpy as np

from .memo import Memo


def char_units(token: bytes) -> list[bytes]:
    """b"a\\xe6\\xb5\\xb7b" -> [b"a", b"\\xe6\\xb5\\xb7", b"b"]: cut before ASCII and lead bytes."""
    units, start = [], 0
    for j in range(1, len(token)):
        if token[j] < 0x80 or token[j] >= 0xC0:
            units.append(token[start:j])
            start = j
    units.append(token[start:])
    return units


def first_char(unit: bytes) -> bytes:
    """The unit cut to the one character its first byte announces: b"\\xe6\\xb5\\xb7\\xb5" -> 海.

    subtle: a token may carry stray continuation bytes after a whole character (一海 + b"\\xb5"):
    its unit b"海\\xb5" is no prefix of 海, yet the token crosses 一|海 in text that holds those
    bytes (`encode_bytes`), so the pair is recorded as (一, 海). Never an unsafe cut; at worst a
    safe one not taken."""
    lead = unit[0]
    return unit[:1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4]


def is_char(unit: bytes) -> bool:
    """Is `unit` exactly one whole character? b"\\xe6\\xb5\\xb7" yes; b"\\xe6\\xb5", b"\\xb7" no."""
    try:
        return len(unit.decode("utf-8")) == 1
    except UnicodeDecodeError:
        return False


def bmp_class(excluded: set[str]) -> str:
    """An `re` class of the non-ASCII BMP characters that are not surrogates nor in `excluded`
    (`re` keeps it as one 64K bitmap: one look-up per character, see stdlib_re.py)."""
    holes = {ord(c) for c in excluded if 0x80 <= ord(c) <= 0xFFFF} | set(range(0xD800, 0xE000))
    ranges, start = [], 0x80
    for cp in [*sorted(holes), 0x10000]:
        if cp > start:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(cp - 1))}")
        start = cp + 1
    # subtle: every character excluded (a vocabulary joining every pair) leaves no range, and
    # "[]" is no regex: then a class that matches nothing (any piece takes the exact path)
    return f"[{''.join(ranges)}]" if ranges else r"[^\s\S]"


def utf8_int(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BMP code points [U] -> (their UTF-8 bytes as one big-endian integer [U], their number
    [U]): 0xxxxxxx, 110xxxxx 10xxxxxx or 1110xxxx 10xxxxxx 10xxxxxx. 海 U+6D77 -> 0xE6B5B7, 3."""
    n = np.where(cp < 0x80, 1, np.where(cp < 0x800, 2, 3))  # [U]
    two = (0xC0 | cp >> 6) << 8 | 0x80 | cp & 0x3F  # [U]
    three = (0xE0 | cp >> 12) << 16 | (0x80 | cp >> 6 & 0x3F) << 8 | 0x80 | cp & 0x3F  # [U]
    return np.where(n == 1, cp, np.where(n == 2, two, three)), n


def utf8_part(value: np.ndarray, n: np.ndarray, m: int, suffix: bool) -> np.ndarray:
    """The last (`suffix`) or first m bytes of each `utf8_int` (m <= n), as an integer [U]."""
    return value & (1 << 8 * m) - 1 if suffix else value >> 8 * np.maximum(n - m, 0)


@functools.lru_cache(maxsize=1)
def _bmp() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-ASCII BMP characters but the surrogates: code points [N] and `utf8_int`'s."""
    cp = np.r_[0x80:0xD800, 0xE000:0x10000]  # [N]
    return (cp, *utf8_int(cp))


def _chars_with(unit: bytes, at_end: bool) -> set[str]:
    """The non-ASCII BMP characters whose UTF-8 ends (`at_end`) or starts with `unit` and is
    longer: b"\xb6", True -> every character whose last byte is b6."""
    cp, value, n = _bmp()
    m = len(unit)
    if m >= 3:  # (no such character: they have at most 3 bytes)
        return set()
    hit = (utf8_part(value, n, m, at_end) == int.from_bytes(unit, "big")) & (n > m)  # [N]
    return set(map(chr, cp[hit].tolist()))


class SafeCuts:
    """The adjacent character-unit pairs of a vocabulary, and `split` at the safe boundaries.

    `split` takes the bigram fast path (module docstring) when it can. `split_exact` handles
    any piece: each character carries two sets (memoised per character): `follow[c]`, the units
    that some token puts right after a suffix of c, and `heads[c]`, those prefixes of c that
    some token puts right after another unit. The boundary c1|c2 is safe iff the two sets are
    disjoint, so all boundaries of a piece are tested by one C-level `map(frozenset.isdisjoint,
    ...)`. Marker strings in the sets keep the two never-cut rules: ASCII characters carry `ASCII`
    in both sets; every character's `follow` holds `BEFORE_LONE` and its `heads` `AFTER_LONE`,
    and a lone surrogate's two sets hold both markers (and nothing else).
    """

    ASCII, BEFORE_LONE, AFTER_LONE = "ascii", "before a lone surrogate", "after a lone surrogate"

    def __init__(self, tokens):
        self.pairs: set[tuple[bytes, bytes]] = set()
        for t in tokens:
            if len(t) > 1 and not t.isascii():
                units = char_units(t)
                self.pairs.update(zip(units, map(first_char, units[1:])))
        self._partners: dict[bytes, set[bytes]] = {}  # left unit -> the right units after it
        for u1, u2 in self.pairs:
            self._partners.setdefault(u1, set()).add(u2)
        self._rights = {u2 for _, u2 in self.pairs}
        self._sets = Memo(self._follow_and_heads, size=1 << 16)  # bounded: a text may hold
        self.follow = Memo(lambda ch: self._sets[ch][0], size=1 << 16)  # any of 1.1 M chars
        self.heads = Memo(lambda ch: self._sets[ch][1], size=1 << 16)
        # the fast path (module docstring): whole-character pairs as "c1c2" strings; the rest
        whole = {(u1, u2) for u1, u2 in self.pairs if is_char(u1) and is_char(u2)}
        self.bigrams = {u1.decode() + u2.decode() for u1, u2 in whole}
        self.odd = self.pairs - whole

    @functools.cached_property
    def _plain(self) -> re.Pattern:
        """`fullmatch`: is every character of a piece plain (no rare one)? Compiled when first
        used (~10 ms: a long text's new pieces are tested in bulk instead, wide.py)."""
        rare = {u.decode() for pair in self.odd for u in pair if is_char(u)}
        for u1, u2 in self.odd:
            if not is_char(u1) and not is_char(u2):  # part-part: mark the smaller side
                rare |= min(_chars_with(u1, at_end=True), _chars_with(u2, at_end=False),
                            key=len)
        return re.compile(bmp_class(rare) + "*")

    def _follow_and_heads(self, ch: str) -> tuple[frozenset, frozenset]:
        """(follow, heads) of one character (see the class docstring)."""
        if "\udc80" <= ch <= "\udcff":
            lone = frozenset([self.BEFORE_LONE, self.AFTER_LONE])
            return lone, lone
        b = ch.encode("utf-8")
        follow = {self.BEFORE_LONE}
        for i in range(len(b)):
            follow.update(self._partners.get(b[i:], ()))
        heads = {self.AFTER_LONE, *[b[:j] for j in range(1, len(b) + 1) if b[:j] in self._rights]}
        if ch.isascii():
            follow.add(self.ASCII)
            heads.add(self.ASCII)
        return frozenset(follow), frozenset(heads)

    def split(self, piece: str) -> str | list[str]:
        """The piece cut at every safe character boundary, as an iterable of segments
        (`"".join(result) == piece`).

        subtle: when every boundary is safe (the usual case) the result is `piece` itself: a str
        iterates over its characters, the 1-character segments, and no list is built."""
        if self._plain.fullmatch(piece) is None:
            return self.split_exact(piece)
        if self.bigrams.isdisjoint(map(add, piece, piece[1:])):
            return piece
        return cut_where(piece, [b not in self.bigrams for b in map(add, piece, piece[1:])])

    def split_exact(self, piece: str) -> str | list[str]:
        """`split` for any piece, through the per-character `follow` and `heads` sets."""
        safe = list(map(frozenset.isdisjoint, map(self.follow.__getitem__, piece[:-1]),
                        map(self.heads.__getitem__, piece[1:])))  # safe[k - 1]: cut before k?
        return piece if all(safe) else cut_where(piece, safe)


def cut_where(piece: str, safe: list[bool]) -> list[str]:
    """Cut `piece` before character k wherever `safe[k - 1]`."""
    segments, start = [], 0
    for k, cut in enumerate(safe, 1):
        if cut:
            segments.append(piece[start:k])
            start = k
    segments.append(piece[start:])
    return segments
