"""tokenizer.json normalisers: the text is rewritten before it is split and merged.

`tokenizers` normalises every piece of text between added tokens (each piece on its own), then
pre-tokenises it. The normalisers honoured here, each as `tokenizers` 0.23 computes it:

    NFC NFD NFKC NFKD   unicodedata.normalize (subtle: Python's Unicode version, see below)
    Lowercase           each character lowercased on its own: "ΟΔΟΣ" -> "οδοσ" (no final
                        sigma, unlike str.lower's "οδος"); "İ" -> "i̇"
    Strip               left / right whitespace as Rust's char::is_whitespace sees it (U+0085
                        and U+3000 are stripped; U+001C..U+001F, which str.strip removes, are not)
    Replace             every match of a String or an (Oniguruma, onig.py) Regex -> content
    Prepend             a prefix, on non-empty text only: Prepend("▁") "a" -> "▁a", "" -> ""
    Sequence            the steps in order

Anything else (BertNormalizer, Precompiled, StripAccents, NMT, ...) is refused by name.

A file's normaliser is untrusted: a Replace regex is probed at load and runs under the encode
call's time budget (budget.py), and no step may grow the text past ``most_chars`` (20 × its
input + 256 characters, at most 32 M): 30 × Replace "a" -> "aa", an empty-match Replace with a
1 MB content, a 30 MB Prepend are refused with a ValueError naming the normaliser.

    >>> normalize("  Héllo ", {"type": "Sequence", "normalizers": [
    ...     {"type": "Strip", "strip_left": True, "strip_right": True}, {"type": "Lowercase"}]})
    'héllo'

subtle: NFC/NFKC use Python's `unicodedata` (Unicode 14.0 on Python 3.11, 15.0 on 3.12, 15.1 on
3.13); `tokenizers` uses its own tables. Characters assigned after the older of the two can
normalise differently (features.py, "Unicode versions").
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import regex

from ...budget import current_budget, timed_matches
from ..validate import check_pattern_object, json_kind, probe_regex, shown
from .onig import to_python

FORMS = ("NFC", "NFD", "NFKC", "NFKD")
GROWTH, SLACK, CAP = 20, 256, 1 << 25    # a normaliser's output: at most 20 n + 256, 32 M characters
KINDS = (*FORMS, "Lowercase", "Strip", "Replace", "Prepend", "Sequence")
# Rust's char::is_whitespace: the Unicode White_Space property
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def check_normalizer(norm, depth: int = 0) -> None:
    """A ValueError unless `norm` is a normaliser (or Sequence of them) honoured here."""
    kind = json_kind(norm, "normalizer", KINDS, depth, "normalizers")
    if kind == "Sequence":
        for step in norm["normalizers"]:
            check_normalizer(step, depth + 1)
    elif kind == "Replace":
        check_pattern_object(norm.get("pattern"), "Replace normalizer's")
        if not isinstance(norm.get("content"), str):
            raise ValueError(f"tokenizer.json: a Replace normalizer needs a content string, got "
                             f"{shown(norm)}")
        rx = _replace_regex(norm["pattern"])                        # refuse a bad regex now
        if "Regex" in norm["pattern"]:
            probe_regex(rx, "tokenizer.json: a Replace normalizer")    # and a backtracking one
    elif kind == "Prepend" and not isinstance(norm.get("prepend"), str):
        raise ValueError(f"tokenizer.json: a Prepend normalizer needs a prepend string, got "
                         f"{shown(norm.get('prepend'))}")


@dataclass
class Normalizer:
    """A normaliser as the Tokenizer runs it, `normalizer(text) -> text`: `spec` ("NFC" etc., or
    a checked tokenizer.json object) is what it computes (`normalize`) and what the writers write
    back. `Normalizer("NFC")("e\u0301") == "\u00e9"`."""
    spec: str | dict

    def __call__(self, text: str) -> str:
        return normalize(text, self.spec)


def normalizer(spec) -> Normalizer | None:
    """A file's normaliser (a tokenizer.json object, or a Unicode form's name as minillm's format
    stores it) -> the Tokenizer's, checked; None for none."""
    spec = simplest({"type": spec} if isinstance(spec, str) else spec)
    return None if spec is None else Normalizer(spec)


def simplest(norm):
    """The value a Tokenizer keeps: None for no normaliser (or an empty Sequence), "NFC" (etc.)
    for a lone Unicode form, else the checked JSON object itself."""
    if norm is None or norm == {"type": "Sequence", "normalizers": []}:
        return None
    check_normalizer(norm)
    return norm["type"] if norm["type"] in FORMS else norm


def most_chars(n: int) -> int:
    """The longest output a normaliser may give for ``n`` characters of input: GROWTH × n +
    SLACK, at most CAP (and never less than n: a normaliser that does not grow the text is never
    refused). NFKD's largest expansion is 18 characters for one (U+FDFA)."""
    return max(n, min(GROWTH * n + SLACK, CAP))


def normalize(text: str, norm) -> str:
    """`text` under `norm`: a Unicode form's name ("NFC"), a tokenizer.json normaliser object,
    or None (unchanged). A ValueError naming the step when the text would grow past
    ``most_chars(len(text))`` (30 × Replace "a" -> "aa" would double it 30 times)."""
    if not norm:
        return text
    return _apply(text, norm, most_chars(len(text)), len(text))


def _apply(text: str, norm, limit: int, n: int) -> str:
    """One step (or a Sequence of them) with every output checked against ``limit``."""
    if isinstance(norm, str):
        return _bounded(unicodedata.normalize(norm, text), norm, limit, n)
    kind = norm["type"]
    if kind == "Sequence":
        for step in norm["normalizers"]:
            text = _apply(text, step, limit, n)
        return text
    if kind == "Replace":
        return _replace(text, norm, limit, n)
    if kind == "Prepend" and text:
        _bounded(len(norm["prepend"]) + len(text), norm, limit, n)      # (before it is built)
    return _bounded(_step(text, norm), norm, limit, n)


def _bounded(out, norm, limit: int, n: int):
    """``out`` (a text, or the length one would have) if within ``limit``, else a ValueError."""
    size = out if isinstance(out, int) else len(out)
    if size > limit:
        raise ValueError(f"the tokenizer's {_named(norm)} normalizer would turn {n:,} characters "
                         f"into {size:,}+: a normalizer may give at most {GROWTH} × its input + "
                         f"{SLACK} characters, and at most {CAP:,} (for {n:,}: {limit:,})")
    return out


def _named(norm) -> str:
    kind = norm if isinstance(norm, str) else norm["type"]
    if kind == "Replace":
        return f"Replace {shown(norm['pattern'])} -> {shown(norm['content'][:40])}"
    if kind == "Prepend":
        return f"Prepend {shown(norm['prepend'][:40])}"
    return kind


def _replace(text: str, norm, limit: int, n: int) -> str:
    """Every match of the Replace pattern -> its content, built piece by piece so that a growth
    past ``limit`` stops before the text is (an empty match repeats the content at every
    character). A Regex runs under the encode call's time budget (budget.py); a String cannot
    backtrack."""
    rx, content = _replace_regex(norm["pattern"]), norm["content"]
    budget = current_budget(text) if "Regex" in norm["pattern"] else None
    out, end, size = [], 0, 0
    for m in timed_matches(rx, text, budget, "the Replace normalizer's regex"):
        out += [text[end:m.start()], content]
        size += m.start() - end + len(content)
        end = m.end()
        _bounded(size, norm, limit, n)
    out.append(text[end:])
    return _bounded("".join(out), norm, limit, n)


def _step(text: str, norm) -> str:
    """One normaliser other than Sequence and Replace."""
    kind = norm["type"]
    if kind in FORMS:
        return unicodedata.normalize(kind, text)
    if kind == "Lowercase":
        return "".join(c.lower() for c in text)       # per character: no final-sigma rule
    if kind == "Strip":
        text = text.lstrip(WHITE_SPACE) if norm.get("strip_left") else text
        return text.rstrip(WHITE_SPACE) if norm.get("strip_right") else text
    if kind == "Prepend":
        return norm["prepend"] + text if text else text
    raise ValueError(f"normalizer {shown(kind)} is not supported (supported: {', '.join(KINDS)})")


def _replace_regex(pattern: dict):
    """A Replace pattern -> a compiled `regex` (a String is matched literally)."""
    if "String" in pattern:
        return regex.compile(regex.escape(pattern["String"]))
    try:
        return regex.compile(to_python(pattern["Regex"]))
    except regex.error as exc:
        raise ValueError(f"tokenizer.json: Replace regex {pattern['Regex']!r:.80}: {exc}") from None
