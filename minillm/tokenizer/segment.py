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
    """The adjacent character-unit pairs of a vocabulary, and `split` at the safe boundaries."""

    def __init__(self, tokens):
        self.pairs: set[tuple[bytes, bytes]] = set()
        for t in tokens:
            if len(t) > 1 and not t.isascii():
                units = char_units(t)
                self.pairs.update(zip(units, units[1:]))
        self._lefts = {u1 for u1, _ in self.pairs}
        self._rights = {u2 for _, u2 in self.pairs}
        self._memo: dict[str, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {}

    def _ends(self, ch: str) -> tuple[tuple[bytes, ...], tuple[bytes, ...]] | None:
        """(suffixes of ch that begin a collected pair, prefixes of ch that end one); None for
        a lone surrogate, next to which we never cut."""
        ends = self._memo.get(ch)
        if ends is None and not "\udc80" <= ch <= "\udcff":
            b = ch.encode("utf-8")
            ends = (tuple(b[i:] for i in range(len(b)) if b[i:] in self._lefts),
                    tuple(b[:j] for j in range(len(b), 0, -1) if b[:j] in self._rights))
            if len(self._memo) > 1 << 16:  # bounded: a text may hold any of 1.1 M code points
                self._memo.clear()
            self._memo[ch] = ends
        return ends

    def split(self, piece: str) -> list[str]:
        """The piece cut at every safe character boundary (`"".join(result) == piece`)."""
        pairs = self.pairs
        segments, start = [], 0
        prev = self._ends(piece[0])
        for k in range(1, len(piece)):
            ends = self._ends(piece[k])
            if prev is None or ends is None or (piece[k - 1].isascii() and piece[k].isascii()):
                safe = False
            elif len(prev[0]) == 1 and len(ends[1]) == 1:  # the usual case: whole characters
                safe = (prev[0][0], ends[1][0]) not in pairs
            else:
                safe = not any((a, b) in pairs for a in prev[0] for b in ends[1])
            if safe:
                segments.append(piece[start:k])
                start = k
            prev = ends
        segments.append(piece[start:])
        return segments
