"""Cutting a long pre-token where no merge can ever cross, so its parts hit the cache.

GPT-2's pattern keeps a whole clause of Chinese as one pre-token ("海水会吸收较多红光"); clauses
rarely repeat, so the pre-token cache misses and BPE runs on every one. But BPE never merges
across a point that no token spans: every part is always a token, so no part can cross it, and
the two sides are merged independently. Cut there, and each side (usually one or two characters)
is a cache hit::

    BPE("海水会吸收") == BPE("海水") + BPE("会") + BPE("吸收")   if no token spans those cuts

Which cuts are safe? Split every token into character units (at each ASCII or UTF-8 lead byte;
a token may begin or end mid-character, e.g. b" \\xe6"). A token spans the boundary between
characters c1 and c2 only if it holds the adjacent units (u1, u2) with u1 a suffix of c1 and u2 a
prefix of c2. So collect all adjacent unit pairs of the vocabulary once; a boundary is safe when
none of c1's suffixes and c2's prefixes (at most 4 x 4) form a collected pair.

subtle: only boundaries between real characters are considered: a lone surrogate (an invalid byte
carried by `encode_bytes`) may be a continuation byte, which is not a unit start. Boundaries
between two ASCII characters are never cut (ASCII-only tokens are not collected: it keeps the
table small, and English pre-tokens are short and cached anyway).
"""
from __future__ import annotations

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


class SafeCuts:
    """The adjacent character-unit pairs of a vocabulary, and `split` at the safe boundaries.

    For speed each character carries two sets (memoised per character): `follow[c]`, the units
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
                self.pairs.update(zip(units, units[1:]))
        self._partners: dict[bytes, set[bytes]] = {}  # left unit -> the right units after it
        for u1, u2 in self.pairs:
            self._partners.setdefault(u1, set()).add(u2)
        self._rights = {u2 for _, u2 in self.pairs}
        self._sets = Memo(self._follow_and_heads, size=1 << 16)  # bounded: a text may hold
        self.follow = Memo(lambda ch: self._sets[ch][0], size=1 << 16)  # any of 1.1 M chars
        self.heads = Memo(lambda ch: self._sets[ch][1], size=1 << 16)

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

    def split(self, piece: str) -> list[str]:
        """The piece cut at every safe character boundary (`"".join(result) == piece`)."""
        safe = list(map(frozenset.isdisjoint, map(self.follow.__getitem__, piece[:-1]),
                        map(self.heads.__getitem__, piece[1:])))  # safe[k - 1]: cut before k?
        if all(safe):
            return list(piece)
        segments, start = [], 0
        for k, cut in enumerate(safe, 1):
            if cut:
                segments.append(piece[start:k])
                start = k
        segments.append(piece[start:])
        return segments
