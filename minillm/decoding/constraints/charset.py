"""Sets of characters as sorted, disjoint, inclusive ranges of Unicode scalar values.

A set is never a list of its characters: ``.`` is ((0, 9), (11, 0xD7FF), (0xE000, 0x10FFFF)),
three ranges, not 1.1 million characters; [^"] likewise. The surrogates (U+D800..U+DFFF) are
never members: UTF-8 cannot encode them, so no token's bytes spell them. Example:
``normalise([(98, 99), (97, 97)]) == ((97, 99),)``; ``complement(((0, 0x10FFFF),)) == ()``.
The class escapes are ASCII, as with Python's ``re.ASCII``.
"""
from __future__ import annotations

MAX_CODE = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)


def normalise(ranges) -> tuple:
    """Sort, merge overlapping or touching ranges, and drop the surrogates."""
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out = []
    for lo, hi in merged:      # cut [D800, DFFF] out of every range
        for a, b in ((lo, min(hi, SURROGATES[0] - 1)), (max(lo, SURROGATES[1] + 1), hi)):
            if a <= b:
                out.append((a, b))
    return tuple(out)


def complement(ranges) -> tuple:
    """Every scalar value not in `ranges`: [^...], \\D, \\W, \\S."""
    out, start = [], 0
    for lo, hi in normalise(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE:
        out.append((start, MAX_CODE))
    return normalise(out)


DIGIT = ((0x30, 0x39),)
WORD = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
SPACE = ((0x09, 0x0D), (0x20, 0x20))
CLASS_ESCAPES = {"d": DIGIT, "w": WORD, "s": SPACE, "D": complement(DIGIT),
                 "W": complement(WORD), "S": complement(SPACE)}
CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
HEX_LENGTHS = {"x": 2, "u": 4, "U": 8}
