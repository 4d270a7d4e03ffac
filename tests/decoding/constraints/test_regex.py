"""The regex subset (minillm/decoding/constraints/regex.py): what is parsed, and every other
feature refused by name with a ValueError, before any automaton is built."""
import pytest

from minillm.decoding.constraints import Regex
from minillm.decoding.constraints.charset import complement
from minillm.decoding.constraints.regex import MAX_REPEAT, Chars, Repeat, parse

REFUSED = {
    r"(a)\1": "backreference",
    r"(?P<x>a)(?P=x)": "named group",
    r"(?P=x)": "named backreference",
    r"(?<x>a)": "named group",
    r"a(?=b)": "lookahead",
    r"a(?!b)": "negative lookahead",
    r"(?<=a)b": "lookbehind",
    r"(?<!a)b": "negative lookbehind",
    r"a*?": "lazy quantifier",
    r"a+?": "lazy quantifier",
    r"a??": "lazy quantifier",
    r"a{1,2}?": "lazy quantifier",
    r"a*+": "possessive quantifier",
    r"(?i)a": "inline flags",
    r"(?#note)a": "comment",
    r"(?>a)": "atomic group",
    r"\bword\b": "word boundary",
    r"\p{L}": "Unicode property",
    r"\Aa": "anchor",
    r"a^b": "anchor '^'",
    r"a$b": "anchor '$'",
    r"[[:alpha:]]": "POSIX class",
    r"a**": "repeated quantifier",
    r"*a": "nothing to repeat",
    r"a{2,1}": "max < min",
    r"a{1001}": f"over {MAX_REPEAT}",
    r"a{": "'{'",
    r"(ab": "without its ')'",
    r"ab)": "without its '('",
    r"[ab": "without its ']'",
    r"[z-a]": "reversed range",
    r"\q": "unknown escape",
    "a\\": "trailing backslash",
    r"\x4": "hex digits",
    r"\ud800": "not a Unicode scalar value",
}


@pytest.mark.parametrize("pattern, name", REFUSED.items())
def test_each_unsupported_feature_is_refused_by_name(pattern, name):
    with pytest.raises(ValueError, match="not supported") as caught:
        Regex(pattern)
    assert name in str(caught.value)


def test_a_pattern_that_is_not_a_str_is_a_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        Regex(b"[0-9]")


def test_repeat_bounds_and_classes_parse_to_the_tree():
    assert parse("[0-9]{1,3}") == Repeat(Chars(((48, 57),)), 1, 3)
    assert parse("a{2,}") == Repeat(Chars(((97, 97),)), 2, None)
    assert parse("[^\"\\\\]") == Chars(complement(((0x22, 0x22), (0x5C, 0x5C))))
    assert parse(".") == Chars(complement(((10, 10),)))              # any character but \n
    assert parse("[]a]") == Chars(((0x5D, 0x5D), (0x61, 0x61)))        # a ']' first is literal
    assert parse("[a-]") == Chars(((0x2D, 0x2D), (0x61, 0x61)))        # a '-' last is literal


def test_negated_classes_and_dot_never_hold_a_surrogate():
    for ranges in (parse(".").ranges, parse("[^a]").ranges, parse(r"\S").ranges):
        assert all(hi < 0xD800 or lo > 0xDFFF for lo, hi in ranges)
        assert ranges[-1][1] == 0x10FFFF
