"""A speed-up for pre-tokenisation: the same pattern run by Python's built-in `re`.

The named patterns need `regex` for Unicode properties (`\\p{L}` letter, `\\p{N}` number); the
stdlib `re` has none, but once each property is spelled out as an explicit character class it
runs these patterns 2-2.5x faster than `regex` (English: 0.045 s/MB instead of 0.10 s/MB). The
classes are read off `regex` itself, so the two engines agree on every character::

    r" ?\\p{L}++"  ->  r" ?[A-Za-z\\xaa\\xb5\\xba\\xc0-\\xd6...]++"      (~380 spans)

subtle: the classes cover the Basic Multilingual Plane (U+0000..U+FFFF) only. `re` keeps a BMP
class as a 64K bitmap (one look-up per character) but tests characters above U+FFFF against its
ranges one by one, which made full-Unicode classes 3-6x *slower* than `regex`. So the translated
pattern is used only on text without such characters (`has_astral`); text with emoji etc. goes
to `regex`.

Only a whitelisted subset of syntax is translated: literals, escaped punctuation, `\\r \\n \\t
\\f \\v`, `\\s \\S`, `\\p{L N Lu Ll Lt Lm Lo M}`, flat classes, `(...)`, `(?:`, `(?=`, `(?!`,
`(?i:` (without properties inside), quantifiers (possessive ones need Python >= 3.11), `| ^ $`.
Anything else gives None, and `regex` runs the pattern. tests/tokenizer/fast/test_stdlib_re.py checks
that both engines split random text the same way.
"""
from __future__ import annotations

import functools
import re
import warnings

import regex

PROPERTIES = ("L", "N", "Lu", "Ll", "Lt", "Lm", "Lo", "M")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def has_astral(text: str) -> bool:
    """Does `text` hold a character above U+FFFF (emoji, rare CJK)? Then use `regex`."""
    return not text.isascii() and _ASTRAL.search(text) is not None


@functools.lru_cache(maxsize=None)
def class_body(name: str) -> str:
    """`\\p{name}` or `\\s` as the inside of an `re` class over the BMP: "A-Za-z\\xaa..."."""
    bmp = "".join(map(chr, range(0x10000)))
    spans = []
    for m in regex.finditer((r"\s" if name == "s" else rf"\p{{{name}}}") + "+", bmp):
        first, last = re.escape(m.group()[0]), re.escape(m.group()[-1])
        spans.append(first if m.end() - m.start() == 1 else f"{first}-{last}")
    return "".join(spans)


def translate(pattern: str) -> str | None:
    """A `regex` pattern -> an equivalent `re` pattern for BMP text, or None if not supported."""
    out, i, in_class, groups = [], 0, False, []  # groups: is each open group case-insensitive?
    while i < len(pattern):
        ch, rest = pattern[i], pattern[i:]
        if ch == "\\":
            prop = re.match(r"\\p\{(\w+)\}", rest)
            if prop and prop[1] in PROPERTIES or rest[1:2] in ("s", "S"):
                name = prop[1] if prop else "s"
                if any(groups) or (in_class and rest[1] == "S"):
                    return None  # case folding of a property / a negated class inside a class
                body = class_body(name)
                out.append(body if in_class else f"[^{body}]" if rest[1] == "S" else f"[{body}]")
                i += len(prop[0]) if prop else 2
                continue
            if rest[1:2].isalnum() and rest[1] not in "rntfv":
                return None  # \d, \w, \b, \x.., \N{..}, \p{Han}, ...: not translated
            out.append(rest[:2])
            i += 2
            continue
        if in_class:
            if ch == "[" or (ch in "&~|-" and rest[1:2] == ch):
                return None  # nested classes / set operations mean something else in `re`
            in_class = ch != "]"
        elif ch == "[":
            if re.match(r"\[\^?\]", rest):
                return None  # "[]...]": a literal "]" first; not worth translating
            in_class = True
        elif ch == "(":
            if rest.startswith("(?") and not rest.startswith(("(?:", "(?=", "(?!", "(?i:")):
                return None  # (?P<, (?<=, (?>, (?V1), inline flags, ...
            groups.append(rest.startswith("(?i:"))
        elif ch == ")" and groups:
            groups.pop()
        out.append(ch)
        i += 1
    return "".join(out)


def compile_stdlib(pattern: str) -> re.Pattern | None:
    """`translate` + `re.compile`; None when either fails (e.g. `++` before Python 3.11)."""
    translated = translate(pattern)
    if translated is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re's FutureWarning about possible set operations
        try:
            return re.compile(translated)
        except (re.error, FutureWarning):
            return None
