"""The vocabulary index (index.py, guide.py): the mask at each state equals the brute-force set
(every token tried with Python `regex`'s partial matching), the fast form equals the readable
walk, and end-of-text ids are allowed only where the text matches the whole pattern."""
import numpy as np
import pytest
import regex
from hypothesis import assume, given
from hypothesis import strategies as st

import minillm
from minillm.decoding.constraints import Guide, Regex, token_bytes_of
from minillm.decoding.constraints.automaton import build_dfa, build_nfa
from minillm.decoding.constraints.byte_dfa import build_byte_dfa
from minillm.decoding.constraints.index import fast_index, walk_index
from minillm.decoding.constraints.regex import parse
from tests.decoding.constraints.strategies import CHARS, patterns, texts

TOY = [b"a", b"b", b"ab", b"1", b"12", b" ", b'"', b"\xc3", b"\xa9", b"\xc3\xa9", b"\xe4\xb8\xad",
       b"\xe4", b"\xb8\xad\xe6", b"\xf0\x9f\x98\x80", b"", b".", b"\n", b"a\xc3"]
EOS = 14                                           # the toy vocabulary's b"": its end of text


def byte_dfa(pattern):
    return build_byte_dfa(build_dfa(build_nfa(parse(pattern))))


def brute_force_mask(pattern: str, prefix: str, token_bytes, eos_ids) -> np.ndarray:
    """Every whole-character token tried with `regex`'s partial full match after the prefix;
    the end-of-text ids when the prefix itself matches the whole pattern."""
    mask = np.zeros(len(token_bytes), bool)
    for i, data in enumerate(token_bytes):
        try:
            piece = data.decode("utf-8")
        except UnicodeDecodeError:
            continue                                 # cut characters: compared with the walk
        if data and regex.fullmatch(pattern, prefix + piece, partial=True, flags=regex.ASCII):
            mask[i] = True
    if regex.fullmatch(pattern, prefix, flags=regex.ASCII):
        mask[list(eos_ids)] = True
    return mask


def whole_character_ids(token_bytes):
    ids = []
    for i, data in enumerate(token_bytes):
        try:
            data.decode("utf-8")
            ids.append(i)
        except UnicodeDecodeError:
            pass
    return np.array(ids)


def prefixes_of_matches(pattern, candidates):
    """Every prefix of the candidates that match the pattern: texts the guide can be in."""
    found = {""}
    for text in candidates:
        if regex.fullmatch(pattern, text, flags=regex.ASCII):
            found |= {text[:k] for k in range(len(text) + 1)}
    return sorted(found)


def walk_text(guide, text):
    """The guide's state after the bytes of `text`."""
    return guide.dfa.walk(guide.start, text.encode("utf-8"))


@given(patterns(), st.lists(texts(4), min_size=20, max_size=20))
def test_the_mask_equals_the_brute_force_set_on_a_toy_vocabulary(pattern, candidates):
    try:
        guide = Guide.build(pattern, TOY, [EOS])
    except ValueError:                               # too large, or matches nothing
        assume(False)
    whole = whole_character_ids(TOY)
    for prefix in prefixes_of_matches(pattern, candidates):
        state = walk_text(guide, prefix)
        expected = brute_force_mask(pattern, prefix, TOY, [EOS])
        assert (guide.allowed(state)[whole] == expected[whole]).all(), (pattern, prefix)
        assert guide.allowed(state)[EOS] == guide.is_accepting(state)


@given(patterns(), st.lists(st.binary(min_size=0, max_size=5), min_size=1, max_size=40))
def test_the_fast_index_equals_the_readable_walk(pattern, vocabulary):
    try:
        dfa = byte_dfa(pattern)
    except ValueError:
        assume(False)
    vocabulary = vocabulary + [c.encode() for c in CHARS]       # cut characters and whole ones
    for (ids_a, next_a), (ids_b, next_b) in zip(walk_index(dfa, vocabulary),
                                                fast_index(dfa, vocabulary), strict=True):
        assert ids_a.tolist() == ids_b.tolist() and next_a.tolist() == next_b.tolist()


@pytest.fixture(scope="module")
def gpt2():
    return minillm.Tokenizer.load("gpt2")


@pytest.mark.parametrize("pattern, prefixes", [
    (r'\{"name": "[a-z ]{1,8}", "age": [0-9]{1,2}\}', ['', '{"na', '{"name": "bo', '{"name": "bob", "age": 4']),
    (r"(yes|no|maybe)", ["", "m", "may"]),
    (r"[^\"\\]*\"", ["", "中文", "x"]),
])
def test_the_mask_equals_the_brute_force_set_on_the_gpt2_vocabulary(gpt2, pattern, prefixes):
    token_bytes = token_bytes_of(gpt2)
    guide = Guide.build(pattern, token_bytes, [gpt2.eos_id])
    whole = whole_character_ids(token_bytes)
    readable = walk_index(guide.dfa, [b"" if i == gpt2.eos_id else b for i, b in enumerate(token_bytes)])
    for prefix in prefixes:
        state = guide.dfa.walk(guide.start, prefix.encode())
        expected = brute_force_mask(pattern, prefix, token_bytes, [gpt2.eos_id])
        assert (guide.allowed(state)[whole] == expected[whole]).all()
        assert guide.allowed(state)[gpt2.eos_id] == bool(regex.fullmatch(pattern, prefix))
        ids, nexts = guide.index[state]                            # the fast form's rows
        assert ids.tolist() == readable[state][0].tolist()
        assert nexts.tolist() == readable[state][1].tolist()


def test_eos_is_allowed_only_in_accepting_states(gpt2):
    guide = Regex("[0-9]{1,3}").guide(gpt2)
    for state in range(guide.dfa.n_states):
        assert guide.allowed(state)[gpt2.eos_id] == guide.is_accepting(state)
    assert not guide.allowed(guide.start)[gpt2.eos_id]
