"""A small regular-expression parser: pattern text -> a tree of four node kinds.

The language (a whole-string match; anchors implied):

    literal  a  \\.  \\n \\t \\r \\f \\v  \\xhh \\uhhhh \\U00hhhhhh     one character
    class    [a-z0-9_]  [^"\\\\]  .  \\d \\w \\s  \\D \\W \\S          a set of characters
    group    ( ... )  (?: ... )                                  (no captures: only grouping)
    choice   a|b
    repeat   x?  x*  x+  x{m}  x{m,}  x{m,n}   (m, n <= MAX_REPEAT)

``\\d \\w \\s`` are ASCII ([0-9], [A-Za-z0-9_], [ \\t\\n\\r\\f\\v]: Python's ``re.ASCII``); ``.`` is
any character but ``\\n``, as in Python. ``^`` is accepted only as the pattern's first
character and ``$`` only as its last (both say what is implied anyway). Everything else —
backreferences, lookaround, lazy and possessive quantifiers, named groups, inline flags, word
boundaries, Unicode properties, POSIX classes — is refused by name with a ValueError.

Characters are Unicode scalar values (0..0x10FFFF without the surrogates, which UTF-8 cannot
encode); a set is a sorted tuple of disjoint inclusive ranges, so ``.`` is two ranges, not a
million characters. Example: ``parse("[0-9]{1,3}")`` ->
``Repeat(Chars(((48, 57),)), 1, 3)``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .charset import (CHAR_ESCAPES, CLASS_ESCAPES, HEX_LENGTHS, MAX_CODE, SURROGATES, complement,
                      normalise)
from .refused import REFUSED_ESCAPES, REFUSED_GROUPS

MAX_REPEAT = 1000          # the largest m or n in {m,n}: a bound, so a pattern can't eat memory


@dataclass(frozen=True)
class Chars:               # one character from a set: ranges sorted, disjoint, inclusive
    ranges: tuple


@dataclass(frozen=True)
class Concat:              # each part in turn; Concat(()) matches the empty string
    parts: tuple


@dataclass(frozen=True)
class Alt:                 # one of the options
    options: tuple


@dataclass(frozen=True)
class Repeat:              # node repeated lo..hi times (hi None: no upper bound)
    node: object
    lo: int
    hi: int | None


class Parser:
    """Recursive descent: alternation > concatenation > repetition > atom."""

    def __init__(self, pattern: str):
        self.text, self.i = pattern, 0

    def fail(self, what: str):
        raise ValueError(f"regex {self.text!r}: {what} at position {self.i} is not supported "
                         f"(supported: literals, [classes], ., |, ( ), (?: ), ? * + {{m,n}})")

    def peek(self, k: int = 0) -> str:
        return self.text[self.i + k] if self.i + k < len(self.text) else ""

    def alternation(self):
        options = [self.concatenation()]
        while self.peek() == "|":
            self.i += 1
            options.append(self.concatenation())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def concatenation(self):
        parts = []
        while self.peek() not in ("", "|", ")"):
            parts.append(self.repetition())
        return parts[0] if len(parts) == 1 else Concat(tuple(parts))

    def repetition(self):
        node = self.atom()
        bounds = self.quantifier()
        if bounds is None:
            return node
        if self.peek() == "?":
            self.fail("a lazy quantifier (" + self.text[self.i - 1:self.i + 1] + ")")
        if self.peek() == "+":
            self.fail("a possessive quantifier (" + self.text[self.i - 1:self.i + 1] + ")")
        if self.peek() in ("*", "{") and self.quantifier_here():
            self.fail("a repeated quantifier (write a group: (x{2}){3})")
        return Repeat(node, *bounds)

    def quantifier_here(self) -> bool:
        return self.peek() in ("?", "*", "+") or self.bounds_text() is not None

    def bounds_text(self):
        """'{m}', '{m,}', '{m,n}' at the cursor -> its text, else None."""
        end = self.text.find("}", self.i)
        if self.peek() != "{" or end < 0:
            return None
        body = self.text[self.i + 1:end]
        lo, sep, hi = body.partition(",")
        if lo.isdigit() and lo.isascii() and (not hi or (hi.isdigit() and hi.isascii())):
            return body
        return None

    def quantifier(self):
        c = self.peek()
        if c in ("?", "*", "+"):
            self.i += 1
            return {"?": (0, 1), "*": (0, None), "+": (1, None)}[c]
        if c != "{":
            return None
        body = self.bounds_text()
        if body is None:
            self.fail("a '{' that starts no {m}, {m,} or {m,n} (escape a literal one: \\{)")
        self.i += len(body) + 2
        lo, sep, hi = body.partition(",")
        lo, hi = int(lo), (int(hi) if hi else (None if sep else int(lo)))
        if max(lo, hi or 0) > MAX_REPEAT:
            self.fail(f"a repeat count over {MAX_REPEAT} ({{{body}}})")
        if hi is not None and hi < lo:
            self.fail(f"a repeat {{{body}}} with max < min")
        return lo, hi

    def atom(self):
        c = self.peek()
        start = self.i
        self.i += 1
        if c == "(":
            return self.group()
        if c == "[":
            return Chars(self.char_class())
        if c == ".":
            return Chars(complement(((0x0A, 0x0A),)))
        if c == "\\":
            return self.escape(in_class=False)
        if c in ("*", "+", "?") or (c == "{" and self.bounds_text_at(start)):
            self.i = start
            self.fail(f"a quantifier {c!r} with nothing to repeat")
        if c == "{":
            self.i = start
            self.fail("a literal '{' (escape it: \\{)")
        if c == "^":
            if start != 0:
                self.i = start
                self.fail("an anchor '^' not at the start (the whole text must match anyway)")
            return Concat(())
        if c == "$":
            if start != len(self.text) - 1:
                self.i = start
                self.fail("an anchor '$' not at the end (the whole text must match anyway)")
            return Concat(())
        return Chars(((ord(c), ord(c)),)) if not 0xD800 <= ord(c) <= 0xDFFF else self.surrogate()

    def bounds_text_at(self, pos: int) -> bool:
        saved, self.i = self.i, pos
        found = self.bounds_text() is not None
        self.i = saved
        return found

    def surrogate(self):
        self.i -= 1
        self.fail("a surrogate code point (not a character UTF-8 can encode)")

    def group(self):
        if self.peek() == "?":
            if self.peek(1) == ":":
                self.i += 2
            else:
                for key in sorted(REFUSED_GROUPS, key=len, reverse=True):
                    if self.text.startswith(key, self.i + 1):
                        self.fail(REFUSED_GROUPS[key])
                self.fail("inline flags (?" + self.peek(1) + "...)")
        inner = self.alternation()
        if self.peek() != ")":
            self.fail("a '(' without its ')'")
        self.i += 1
        return inner

    def escape(self, in_class: bool):
        c = self.peek()
        if c == "":
            self.fail("a trailing backslash")
        self.i += 1
        if c in CLASS_ESCAPES:
            return CLASS_ESCAPES[c] if in_class else Chars(CLASS_ESCAPES[c])
        if c in HEX_LENGTHS:
            digits = self.text[self.i:self.i + HEX_LENGTHS[c]]
            if len(digits) != HEX_LENGTHS[c] or any(d not in "0123456789abcdefABCDEF" for d in digits):
                self.fail(f"an escape \\{c} without {HEX_LENGTHS[c]} hex digits")
            self.i += len(digits)
            code = int(digits, 16)
            if code > MAX_CODE or SURROGATES[0] <= code <= SURROGATES[1]:
                self.fail(f"\\{c}{digits}, not a Unicode scalar value")
            ch = chr(code)
        elif c in CHAR_ESCAPES:
            ch = CHAR_ESCAPES[c]
        elif c.isdigit():
            self.fail(f"a backreference \\{c}")
        elif c in REFUSED_ESCAPES:
            self.fail(REFUSED_ESCAPES[c])
        elif c.isascii() and c.isalnum():
            self.fail(f"an unknown escape \\{c}")
        else:
            ch = c                                     # \. \* \\ \[ \{ ...: the character itself
        return ((ord(ch), ord(ch)),) if in_class else Chars(((ord(ch), ord(ch)),))

    def class_char(self):
        """One member of a [...] class -> a tuple of ranges (a single character: one range)."""
        c = self.peek()
        if c == "":
            self.fail("a '[' without its ']'")
        if c == "[":
            self.fail("a nested set or POSIX class inside [...] (escape a literal one: \\[)")
        self.i += 1
        if c == "\\":
            if self.peek() == "b":
                self.fail("\\b inside a class (write \\x08 for a backspace)")
            return self.escape(in_class=True)
        if 0xD800 <= ord(c) <= 0xDFFF:
            self.surrogate()
        return ((ord(c), ord(c)),)

    def char_class(self) -> tuple:
        negated = self.peek() == "^"
        self.i += negated
        ranges, first = [], True
        while first or self.peek() != "]":
            if self.peek() == "]" and first:        # []abc] : a ']' first is a literal
                self.i += 1
                ranges.append((0x5D, 0x5D))
                first = False
                continue
            first = False
            lo = self.class_char()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                hi = self.class_char()
                if len(lo) != 1 or len(hi) != 1 or lo[0][0] != lo[0][1] or hi[0][0] != hi[0][1]:
                    self.fail("a range with a class (\\d, \\w, \\s) at one end")
                if hi[0][0] < lo[0][0]:
                    self.fail(f"a reversed range {chr(lo[0][0])!r}-{chr(hi[0][0])!r}")
                ranges.append((lo[0][0], hi[0][0]))
            else:
                ranges.extend(lo)
        self.i += 1
        return complement(ranges) if negated else normalise(ranges)


def parse(pattern: str):
    """Pattern text -> its tree (Chars, Concat, Alt, Repeat); ValueError names what is refused."""
    if not isinstance(pattern, str):
        raise TypeError(f"a regex pattern must be a str, got {type(pattern).__name__}")
    parser = Parser(pattern)
    tree = parser.alternation()
    if parser.peek() == ")":
        parser.fail("a ')' without its '('")
    return tree
