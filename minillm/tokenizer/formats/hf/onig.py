"""Oniguruma's regex dialect (what `tokenizers` runs a tokenizer.json regex with) -> `regex`'s.

A Split pre-tokeniser or a Replace normaliser holds a regex written for Oniguruma (Ruby syntax).
Most of it means the same in Python's `regex`; where it does not, `to_python` rewrites it to
Oniguruma's meaning or refuses it by name (never a silently different split):

    Oniguruma                     meaning                              here
    \\h  \\H                        a hex digit / not one                [0-9a-fA-F] / [^0-9a-fA-F]
                                  (`regex`: horizontal space)
    \\w  \\W                        letter, mark, number, _ (any Pc)     [\\p{L}\\p{M}\\p{N}\\p{Pc}] / [^...]
                                  (`regex`: ½ and ² are not \\w)
    \\x{263a}                       a code point                         the character itself
    \\e  \\N                        ESC / not a newline                  \\x1b / [^\\n]
    \\Z                            end, or before a final newline       (?=\\n?\\z)
    ^  $                          start / end of ANY line (always)     (?m:^) / (?m:$)
    (?m) (?m:...)                 dot matches a newline                (?s) (?s:...)
    refused                       \\b \\B (\\w as above), \\y \\Y \\O \\Q..\\E \\k<n> \\g<n> \\o{..} \\cX \\C,
                                  [[:posix:]], nested [a[b]] and && classes, \\w \\W \\H \\N in [...]
                                  (Oniguruma's [\\w] leaves out ½ and ², its \\w does not),
                                  \\p{Word} and the other POSIX names in \\p{...}

    >>> to_python(r"\\h+$")
    '[0-9a-fA-F]+(?m:$)'

Subtle: the Unicode tables differ too (not the dialect): see features.py, "Unicode versions".
"""
from __future__ import annotations

import regex

WORD = r"\p{L}\p{M}\p{N}\p{Pc}"   # Oniguruma's \w in a Unicode string
OUTSIDE = {"h": "[0-9a-fA-F]", "H": "[^0-9a-fA-F]", "w": f"[{WORD}]", "W": f"[^{WORD}]",
           "e": r"\x1b", "N": r"[^\n]", "Z": r"(?=\n?\z)"}
INSIDE = {"h": "0-9a-fA-F", "e": r"\x1b"}   # the same escapes inside [...]
REFUSED = set("bByYOQEkgocCHWNw")      # outside the tables above: different or unknown meaning
POSIX_NAMES = {"word", "alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print",
               "punct", "space", "upper", "xdigit", "ascii"}


def _refuse(pattern: str, what: str) -> ValueError:
    return ValueError(f"tokenizer.json regex {pattern[:80]!r}: {what} means something else in "
                      f"Oniguruma (which `tokenizers` runs) than in Python's `regex`; minillm "
                      f"translates \\h \\H \\w \\W \\x{{..}} \\e \\N \\Z ^ $ (?m) and refuses the rest "
                      f"(minillm/tokenizer/formats/hf/onig.py)")


def _closing(pattern: str, i: int) -> int:
    """The index of the "}" closing the \\x{ or \\p{ at ``i``. subtle: without one, ``find``'s -1
    would send the scan back to the start, for ever."""
    end = pattern.find("}", i)
    if end < 0:
        raise ValueError(f"tokenizer.json regex {pattern[:80]!r}: {pattern[i:i + 3]} at "
                         f"character {i} is never closed by '}}'")
    return end


def _code_point(pattern: str, digits: str) -> int:
    """The code point of \\x{digits}: 1 to 8 hex digits, at most 10FFFF (else a ValueError, not
    an OverflowError from chr)."""
    if not 1 <= len(digits) <= 8 or any(d not in "0123456789abcdefABCDEF" for d in digits) \
            or int(digits, 16) > 0x10FFFF:
        raise ValueError(f"tokenizer.json regex {pattern[:80]!r}: \\x{{{digits[:20]}}} is not a "
                         f"code point (1 to 8 hex digits, at most 10FFFF)")
    return int(digits, 16)


def to_python(pattern: str) -> str:
    """An Oniguruma (Ruby syntax) regex -> the `regex` regex with the same matches (see the
    module docstring), or a ValueError naming the construct that has no translation here."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1:i + 2]
            if e == "x" and pattern[i + 2:i + 3] == "{":
                end = _closing(pattern, i)
                out.append(regex.escape(chr(_code_point(pattern, pattern[i + 3:end]))))
                i = end + 1
                continue
            if e in "pP" and pattern[i + 2:i + 3] == "{":
                end = _closing(pattern, i)
                name = pattern[i + 3:end].lstrip("^").replace("_", "").replace(" ", "").lower()
                if name in POSIX_NAMES:
                    raise _refuse(pattern, pattern[i:end + 1])
                out.append(pattern[i:end + 1])
                i = end + 1
                continue
            table = INSIDE if in_class else OUTSIDE
            if e in table:
                out.append(table[e])
            elif e in REFUSED:
                raise _refuse(pattern, f"\\{e}" + (" inside [...]" if in_class else ""))
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" or pattern.startswith("&&", i):
                raise _refuse(pattern, "a nested or intersected character class ([..[..]], &&)"
                              if not pattern.startswith("[:", i) else "a POSIX bracket [[:..:]]")
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            start = i + 2 if pattern.startswith("[^", i) else i + 1
            lead = "\\]" if pattern[start:start + 1] == "]" else ""  # subtle: []a] holds a ']'
            out.append(pattern[i:start] + lead)
            i, in_class = start + len(lead) // 2, True
            continue
        if c in "^$":
            out.append(f"(?m:{c})")
        elif pattern.startswith("(?", i) and (flags := regex.match(r"\(\?([imx-]+)[:)]", pattern[i:])):
            out.append("(?" + flags.group(1).replace("m", "s") + flags.group()[-1])
            i += len(flags.group())
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)
