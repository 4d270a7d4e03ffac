"""The Oniguruma translation (onig.py) ends on every input: a regex from a file is translated or
refused with a ValueError, never an endless loop (an unclosed \\p{ sent the scan back to the
start) nor an OverflowError."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.formats.hf.read import read_hf_json
from minillm.tokenizer.formats.hf.onig import to_python
from tests.tokenizer.formats.hf.test_tokenizer_json import patched

# the characters the translation treats specially, and a few plain ones
PIECES = ["\\", "x", "p", "P", "{", "}", "[", "]", "^", "$", "(", "?", "m", ")", ":", "&", "h",
          "w", "a", "0", "F", "L", "-", " ", "é"]


@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_the_translation_ends_with_a_regex_or_a_value_error(pattern):
    try:
        assert isinstance(to_python(pattern), str)
    except ValueError:
        pass                              # (refused by name: what a bad regex gets)


@pytest.mark.parametrize("pattern, message", [
    (r"\p{", r"\\p\{ at character 0 is never closed"),
    (r"a\P{L", r"\\P\{ at character 1 is never closed"),
    (r"[\x{", r"\\x\{ at character 1 is never closed"),
    (r"\x{FFFFFFFFFFFFFFFFFFFF}", r"is not a code point \(1 to 8 hex digits, at most 10FFFF\)"),
    (r"\x{110000}", "is not a code point"),
    (r"\x{zz}", "is not a code point")])
def test_an_unclosed_or_impossible_escape_is_a_value_error(pattern, message):
    with pytest.raises(ValueError, match=message):
        to_python(pattern)


def test_a_code_point_escape_is_that_character():
    assert to_python(r"\x{263a}") == "☺" and to_python(r"[\x{41}-\x{5A}]") == "[A-Z]"


@pytest.mark.parametrize("where", ["pre_tokenizer", "normalizer"])
def test_a_tokenizer_json_with_an_unclosed_escape_is_refused_at_load(where):
    stage = ({"type": "Split", "pattern": {"Regex": "\\p{L"}, "behavior": "Isolated",
              "invert": False} if where == "pre_tokenizer" else
             {"type": "Replace", "pattern": {"Regex": "\\x{41"}, "content": "b"})
    with pytest.raises(ValueError, match="is never closed"):
        Tokenizer(**read_hf_json(patched({where: stage})))
