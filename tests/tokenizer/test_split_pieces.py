"""What pre-tokenisation splits a text into (patterns.py): the pieces, and which stages run under
the time budget."""
import pytest
import regex
from hypothesis import given, strategies as st

from minillm.tokenizer import budget
from minillm.tokenizer.patterns import GPT2_PATTERN, PreTokenizer, split_isolated

# patterns with empty matches (`b*`, `(?=a)`), matches that leave gaps, and ones that match nothing
PATTERNS = [r"b*", r"(?=a)", r"ab|c", r"a+", r"z", r"\s+|\w+"]


def cut_at_match_ends(rx, text: str) -> list[str]:
    """The same split, said another way: cut `text` at every start and end of a match."""
    cuts = sorted({0, len(text)} | {i for m in rx.finditer(text) for i in m.span()})
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


@given(st.sampled_from(PATTERNS), st.text("abc \n", max_size=12))
def test_split_isolated_cuts_at_every_match_and_keeps_no_empty_piece(pattern, text):
    """The pieces are the matches and the gaps between them, in order: they join back to the
    text, none is empty, and they are what cutting the text at every match's ends gives."""
    rx = regex.compile(pattern)
    pieces = split_isolated(rx, text)
    assert "".join(pieces) == text and "" not in pieces
    assert pieces == cut_at_match_ends(rx, text)


def test_split_of_the_empty_text_is_no_pieces():
    assert split_isolated(regex.compile(r"\w+"), "") == []
    assert PreTokenizer().split("") == []
    assert PreTokenizer().split("Hello world's 2024!!") == ["Hello", " world", "'s", " 2024", "!!"]


@pytest.mark.parametrize("stages, known, timed", [
    ([GPT2_PATTERN], None, False),                     # tiktoken's patterns are known by default
    ([r"\w+", r"\d"], [r"\w+", r"\d"], False),         # every stage known: exactly the known set
    ([r"\d"], [r"\w+", r"\d"], False),                 # ... or some of it
    ([r"\w+", r"x"], [r"\w+", r"\d"], True),           # one unknown stage: the whole split timed
    ([r"\w+"], [], True)])
def test_only_stages_that_are_all_known_split_without_the_time_budget(monkeypatch, stages,
                                                                      known, timed):
    """A spent budget stops a split with an unknown stage (a ValueError), never a known one."""
    monkeypatch.setattr(budget, "time_limit", lambda text: -1.0)   # spent before it starts
    pre = PreTokenizer(stages) if known is None else PreTokenizer(stages, known=known)
    if timed:
        with pytest.raises(ValueError, match="ran past this encode call's time limit"):
            pre.split("a1 b2")
    else:
        assert "".join(pre.split("a1 b2")) == "a1 b2"


@pytest.mark.parametrize("pattern", [[], (), 3, b"\\w+", [r"\w+", 3], {r"\w+"}])
def test_a_pattern_is_a_name_a_regex_or_a_non_empty_list_of_regexes(pattern):
    """Anything else is a TypeError that says what is allowed (an empty list would split
    nothing; bytes or a set are not regexes in order)."""
    with pytest.raises(TypeError, match="pattern must be a name .* a regex string or a non-empty "
                                        "list of regex strings"):
        PreTokenizer(pattern)
